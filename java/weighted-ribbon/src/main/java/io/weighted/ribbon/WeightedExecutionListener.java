package io.weighted.ribbon;

import com.netflix.loadbalancer.reactive.ExecutionContext;
import com.netflix.loadbalancer.reactive.ExecutionInfo;
import com.netflix.loadbalancer.Server;
import com.netflix.loadbalancer.reactive.ExecutionListener;
import com.netflix.loadbalancer.reactive.ServerOperation;
import io.weighted.jni.Outcome;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.ToIntFunction;
import rx.Observable;

/**
 * Feeds Ribbon call outcomes into a {@link WeightedRule}. Each attempt on a server is reported
 * once: a 5xx response (as told by {@code statusOf}) is {@link Outcome#HTTP_5XX}, timeouts
 * {@link Outcome#TIMEOUT}, refused, reset or unreachable {@link Outcome#CONNECT_ERROR}; other
 * exceptions are not the server's fault and are not counted.
 *
 * <p>Two ways in:
 * <ul>
 *   <li>{@link #track(ServerOperation)} wraps the operation a {@code LoadBalancerCommand} submits,
 *       and needs nothing else from the command: {@code command.submit(listener.track(server ->
 *       ...))}. Latency runs from the attempt's subscription to its first response or its error;
 *       an attempt unsubscribed before either (a {@code timeout()} on the result, a caller that
 *       gave up) is a timeout.
 *   <li>As an {@link ExecutionListener} in {@code withListeners(...)}, for clients that hand their
 *       command an {@link ExecutionContext} (Ribbon's own {@code LoadBalancingRxClient} does).
 *       Latency runs from {@code onStartWithServer}. Ribbon calls no listener of a command built
 *       without {@code withExecutionContext(...)}: its invoker dereferences the missing context
 *       before each listener call and logs the {@code NullPointerException} as "Error invoking
 *       listener". Use {@link #track} there.
 * </ul>
 *
 * <p>With {@code loadReportOf}, a response's {@code endpoint-load-metrics} header (the server's
 * own CPU, memory and pools) is recorded too, e.g.
 * {@code r -> r.getHttpHeaders().getFirstValue("endpoint-load-metrics")} for Ribbon's
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

  /**
   * {@code operation}, each of its attempts reported to the rule: what a
   * {@code LoadBalancerCommand} built without an execution context needs (see the class comment).
   */
  public ServerOperation<O> track(ServerOperation<O> operation) {
    Objects.requireNonNull(operation, "operation");
    return server -> Observable.defer(() -> {
      Attempt a = new Attempt(server, nanoClock.getAsLong());
      return operation.call(server)
          .doOnNext(a::response)
          .doOnError(a::error)
          .doOnCompleted(a::completed)
          .doOnUnsubscribe(a::unsubscribed);
    });
  }

  /** One attempt of a tracked operation: reported once, by whichever signal comes first. */
  private final class Attempt {
    private final Server server;
    private final long startNanos;
    private final AtomicBoolean reported = new AtomicBoolean();

    Attempt(Server server, long startNanos) {
      this.server = server;
      this.startNanos = startNanos;
    }

    private boolean first() {
      return reported.compareAndSet(false, true);
    }

    private double latencyMs() {
      return Math.max(0, nanoClock.getAsLong() - startNanos) / 1e6;
    }

    void response(O response) {
      if (first()) {
        int status = response == null ? 0 : statusOf.applyAsInt(response);
        rule.record(server, latencyMs(), Outcome.fromHttpStatus(status));
      }
    }

    void error(Throwable t) {
      if (first()) {
        Outcome o = classify(t);
        if (o != null) {
          rule.record(server, latencyMs(), o);
        }
      }
    }

    void completed() {
      if (first()) {
        rule.record(server, latencyMs(), Outcome.SUCCESS);  // done without a response object
      }
    }

    void unsubscribed() {
      if (first()) {
        rule.record(server, latencyMs(), Outcome.TIMEOUT);  // given up on before any answer
      }
    }
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
