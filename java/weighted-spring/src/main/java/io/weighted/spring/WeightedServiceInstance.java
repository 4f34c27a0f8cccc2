package io.weighted.spring;

import io.weighted.jni.EndpointTable;
import io.weighted.jni.Outcome;
import io.weighted.jni.Pick;
import io.weighted.jni.Service;
import io.weighted.jni.Status;
import io.weighted.jni.WeightedException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.net.URI;
import java.util.Map;
import java.util.function.LongSupplier;
import org.springframework.cloud.client.ServiceInstance;

/**
 * The instance {@link WeightedLoadBalancer} returns: the discovered instance, plus the engine
 * pick it came from, so that {@link WeightedLoadBalancerLifecycle} can report the outcome on it.
 *
 * <p>The pick travels inside the instance rather than inside the {@code Response} because the
 * blocking client ({@code BlockingLoadBalancerClient}, behind RestTemplate and RestClient) hands
 * lifecycles a new {@code DefaultResponse(instance)}: only the instance survives every path.
 * {@link #equals} and {@link #hashCode} are the delegate's, so retry-aware suppliers that remove
 * "the previous instance" from a list still find it.
 *
 * <p>Each pick is finished at most once ({@link #complete} or {@link #cancel}): a call is never
 * counted twice, however many lifecycles or retries see it. A cancelled WebClient exchange, of
 * which Spring Cloud's filter reports neither success nor error, is finished by
 * {@link WeightedExchangeFilter}. A pick dropped unfinished all the same (a {@code choose()}
 * never sent, a WebClient built without that filter) needs nothing from here: in the
 * load-aware mode the engine lets its in-flight count expire by the start of the second
 * controller cycle after the pick (see {@code WT_PICK_TRACKED}), so no finalizer or
 * {@code Cleaner} runs per pick.
 */
public final class WeightedServiceInstance implements ServiceInstance {
  private static final VarHandle FINISHED;

  static {
    try {
      FINISHED = MethodHandles.lookup().findVarHandle(WeightedServiceInstance.class, "finished",
          int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final ServiceInstance delegate;
  private final String endpointId;
  // The pick, as the engine gave it and wants it back; one object with the instance, since a
  // choose() makes one of each.
  private final Service service;
  private final long key;
  private final long epoch;
  private final int index;
  private final int flags;
  private final int ticket;
  private final boolean viaPick;  // false: an endpoint chosen without the engine, reported by key
  private final LongSupplier nanoClock;
  private volatile long startNanos;  // 0 until markStarted()
  private volatile double latencyMs = Double.NaN;
  private volatile int finished;  // 0 open, 1 finished

  /** An engine pick of {@code delegate}'s endpoint. */
  WeightedServiceInstance(ServiceInstance delegate, String endpointId, Service service, long key,
      long epoch, int index, int flags, int ticket, LongSupplier nanoClock) {
    this(delegate, endpointId, service, key, epoch, index, flags, ticket, true, nanoClock);
  }

  /** Endpoint {@code entry}, chosen without a pick: its outcome is reported by key. */
  WeightedServiceInstance(ServiceInstance delegate, Service service, EndpointTable.Entry<?> entry,
      LongSupplier nanoClock) {
    this(delegate, entry.id(), service, entry.key(), entry.epoch(), entry.index(), 0, 0, false,
        nanoClock);
  }

  private WeightedServiceInstance(ServiceInstance delegate, String endpointId, Service service,
      long key, long epoch, int index, int flags, int ticket, boolean viaPick,
      LongSupplier nanoClock) {
    this.delegate = delegate;
    this.endpointId = endpointId;
    this.service = service;
    this.key = key;
    this.epoch = epoch;
    this.index = index;
    this.flags = flags;
    this.ticket = ticket;
    this.viaPick = viaPick;
    this.nanoClock = nanoClock;
  }

  private boolean finish() {
    return FINISHED.compareAndSet(this, 0, 1);
  }

  /** The instance discovery returned. */
  public ServiceInstance getDelegate() {
    return delegate;
  }

  /** The engine's id of this endpoint ("host:port"). */
  public String getEndpointId() {
    return endpointId;
  }

  /** True when the engine chose this instance as a probe of a half-isolated endpoint. */
  public boolean isProbe() {
    return (flags & Pick.PROBE) != 0;
  }

  /** The request is about to be sent: latency is measured from here. */
  public void markStarted() {
    long now = nanoClock.getAsLong();
    startNanos = now == 0 ? 1 : now;  // 0 means "not started"
  }

  /**
   * Reports the outcome with the latency since {@link #markStarted()}; false if already done.
   * Every Spring client path calls markStarted (LoadBalancerLifecycle.onStartRequest) before
   * sending; a pick completed without it reports latency 0 (its outcome still counts).
   */
  public boolean complete(Outcome outcome) {
    return complete(outcome, null);
  }

  /**
   * {@link #complete(Outcome)} with the response's load report ({@link LoadReports}), recorded
   * for the same endpoint in the same call. A malformed report is the server's problem: the
   * outcome is recorded, the engine counts the report (bad_load_reports), and this returns true.
   */
  public boolean complete(Outcome outcome, String loadReport) {
    if (!finish()) {
      return false;
    }
    long start = startNanos;
    double latencyMs = start == 0 ? 0 : Math.max(0, nanoClock.getAsLong() - start) / 1e6;
    this.latencyMs = latencyMs;
    try {
      if (viaPick) {
        service.completeWithLoad(key, epoch, index, flags, ticket, latencyMs, outcome.code(),
            loadReport);
      } else {
        service.report(key, latencyMs, outcome);
        if (loadReport != null) {
          service.reportLoad(key, loadReport);
        }
      }
      return true;
    } catch (WeightedException e) {
      // A malformed report: the outcome went in before the engine refused the report.
      return e.status() == Status.BAD_LOAD_REPORT;
    } catch (IllegalStateException e) {
      // Stale (the endpoint left the set meanwhile: the engine counted it as stale), or the
      // service is gone (removed, or the engine closed): nothing for the caller's request to do.
      return false;
    }
  }

  /** Finishes the pick without an outcome (the request was never sent, or not its fault). */
  public boolean cancel() {
    if (!finish()) {
      return false;
    }
    if (viaPick) {
      try {
        service.cancel(key, epoch, index, flags, ticket);
      } catch (WeightedException | IllegalStateException ignored) {
        // stale (the endpoint left the set) or the service is gone (removed, engine closed)
      }
    }
    return true;
  }

  /** The latency {@link #complete} reported, NaN before. */
  public double getLatencyMs() {
    return latencyMs;
  }

  public boolean isFinished() {
    return finished != 0;
  }

  @Override
  public String getInstanceId() {
    return delegate.getInstanceId();
  }

  @Override
  public String getServiceId() {
    return delegate.getServiceId();
  }

  @Override
  public String getHost() {
    return delegate.getHost();
  }

  @Override
  public int getPort() {
    return delegate.getPort();
  }

  @Override
  public boolean isSecure() {
    return delegate.isSecure();
  }

  @Override
  public URI getUri() {
    return delegate.getUri();
  }

  @Override
  public Map<String, String> getMetadata() {
    return delegate.getMetadata();
  }

  @Override
  public String getScheme() {
    return delegate.getScheme();
  }

  static ServiceInstance unwrap(ServiceInstance i) {
    return i instanceof WeightedServiceInstance w ? w.delegate : i;
  }

  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    return o instanceof ServiceInstance si && delegate.equals(unwrap(si));
  }

  @Override
  public int hashCode() {
    return delegate.hashCode();
  }

  @Override
  public String toString() {
    return "WeightedServiceInstance[" + endpointId + (isProbe() ? ", probe" : "") + ", " + delegate
        + "]";
  }
}
