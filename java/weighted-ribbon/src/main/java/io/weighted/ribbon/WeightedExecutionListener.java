package io.weighted.ribbon;

import com.netflix.loadbalancer.reactive.ExecutionContext;
import com.netflix.loadbalancer.reactive.ExecutionInfo;
import com.netflix.loadbalancer.reactive.ExecutionListener;
import io.weighted.jni.Outcome;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.ToIntFunction;

/**
 * Feeds Ribbon call outcomes into a {@link WeightedRule}: register it with the client's
 * {@code LoadBalancerCommand} / {@code LoadBalancingRxClient} listeners. Each attempt on a server
 * is reported once, with the latency from {@code onStartWithServer}: a 5xx response (as told by
 * {@code statusOf}) is {@link Outcome#HTTP_5XX}, timeouts {@link Outcome#TIMEOUT}, refused,
 * reset or unreachable {@link Outcome#CONNECT_ERROR}. With {@code loadReportOf}, a response's
 * {@code endpoint-load-metrics} header (the server's own CPU, memory and pools) is recorded too,
 * e.g. {@code r -> r.getHttpHeaders().getFirstValue("endpoint-load-metrics")} for Ribbon's
 * {@code HttpResponse}.
 */
public class WeightedExecutionListener<I, O> implements ExecutionListener<I, O> {
  private static final String START = "weighted.startNanos";

  private final WeightedRule rule;
  private final ToIntFunction<O> statusOf;
  private final Function<O, String> loadReportOf;
  private final LongSupplier nanoClock;

  /** {@code statusOf} gives a response's HTTP status (0 when it has none). */
  public WeightedExecutionListener(WeightedRule rule, ToIntFunction<O> statusOf) {
    this(rule, statusOf, System::nanoTime);
  }

  public WeightedExecutionListener(WeightedRule rule, ToIntFunction<O> statusOf,
      LongSupplier nanoClock) {
    this(rule, statusOf, null, nanoClock);
  }

  /** {@code loadReportOf} gives a response's load report header value (null when it has none). */
  public WeightedExecutionListener(WeightedRule rule, ToIntFunction<O> statusOf,
      Function<O, String> loadReportOf, LongSupplier nanoClock) {
    this.rule = Objects.requireNonNull(rule);
    this.statusOf = statusOf != null ? statusOf : r -> 0;
    this.loadReportOf = loadReportOf != null ? loadReportOf : r -> null;
    this.nanoClock = nanoClock;
  }

  @Override
  public void onExecutionStart(ExecutionContext<I> context) {}

  @Override
  public void onStartWithServer(ExecutionContext<I> context, ExecutionInfo info) {
    context.put(START, nanoClock.getAsLong());
  }

  @Override
  public void onExceptionWithServer(ExecutionContext<I> context, Throwable exception,
      ExecutionInfo info) {
    Outcome o = classify(exception);
    if (o != null) {
      rule.record(info.getServer(), latencyMs(context), o);
    }
  }

  @Override
  public void onExecutionSuccess(ExecutionContext<I> context, O response, ExecutionInfo info) {
    int status = response == null ? 0 : statusOf.applyAsInt(response);
    String report = response == null ? null : loadReportOf.apply(response);
    rule.record(info.getServer(), latencyMs(context), Outcome.fromHttpStatus(status), report);
  }

  @Override
  public void onExecutionFailed(ExecutionContext<I> context, Throwable finalException,
      ExecutionInfo info) {
    // Each failed attempt was reported in onExceptionWithServer: do not count it twice.
  }

  private double latencyMs(ExecutionContext<I> context) {
    Object start = context.get(START);
    long s = start instanceof Long l ? l : nanoClock.getAsLong();
    return Math.max(0, nanoClock.getAsLong() - s) / 1e6;
  }

  /**
   * The bindings' one classifier ({@link Outcome#of(Throwable)}): timeout, connect error, other
   * I/O error (connect error), else null (not the server's fault).
   */
  static Outcome classify(Throwable t) {
    return Outcome.of(t);
  }
}
