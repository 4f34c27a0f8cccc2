package io.weighted.spring;

import io.weighted.jni.EndpointTable;
import io.weighted.jni.Outcome;
import io.weighted.jni.Picked;
import io.weighted.jni.Service;
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
 * counted twice, however many lifecycles or retries see it. A pick dropped unfinished (a
 * WebClient subscription cancelled before any signal, for which Spring Cloud's filter reports
 * neither success nor error, or a {@code choose()} never sent) needs nothing from here: in the
 * load-aware mode the engine lets its in-flight count expire by the start of the second
 * controller cycle after the pick (see {@code WT_PICK_TRACKED}), so no finalizer or
 * {@code Cleaner} runs per pick.
 */
public final class WeightedServiceInstance implements ServiceInstance {
  private final ServiceInstance delegate;
  private final String endpointId;
  private final PickState pick;
  private final LongSupplier nanoClock;
  private volatile long startNanos;  // 0 until markStarted()
  private volatile double latencyMs = Double.NaN;

  /**
   * The engine's pick (or, {@code viaPick} false, an endpoint chosen without one) and whether it
   * is finished: one object with the pick's fields, filled by the engine's answer.
   */
  static final class PickState extends Picked {
    private static final VarHandle FINISHED;

    static {
      try {
        FINISHED = MethodHandles.lookup().findVarHandle(PickState.class, "finished", int.class);
      } catch (ReflectiveOperationException e) {
        throw new ExceptionInInitializerError(e);
      }
    }

    final Service service;
    final boolean viaPick;
    volatile int finished;  // 0 open, 1 finished

    /** Filled by {@link Service#pick(Picked)}. */
    PickState(Service service) {
      this.service = service;
      this.viaPick = true;
    }

    /** An endpoint chosen without a pick: its outcome is reported by key, nothing is held. */
    PickState(Service service, EndpointTable.Entry<?> entry) {
      super(entry);
      this.service = service;
      this.viaPick = false;
    }

    boolean finish() {
      return FINISHED.compareAndSet(this, 0, 1);
    }

    void cancelInEngine() {
      if (viaPick) {
        try {
          service.cancel(this);
        } catch (WeightedException | IllegalStateException ignored) {
          // stale (the endpoint left the set) or the service is gone (removed, engine closed)
        }
      }
    }
  }

  WeightedServiceInstance(ServiceInstance delegate, String endpointId, PickState pick,
      LongSupplier nanoClock) {
    this.delegate = delegate;
    this.endpointId = endpointId;
    this.pick = pick;
    this.nanoClock = nanoClock;
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
    return pick.isProbe();
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
    if (!pick.finish()) {
      return false;
    }
    long start = startNanos;
    double latencyMs = start == 0 ? 0 : Math.max(0, nanoClock.getAsLong() - start) / 1e6;
    this.latencyMs = latencyMs;
    try {
      if (pick.viaPick) {
        pick.service.complete(pick, latencyMs, outcome);
      } else {
        pick.service.report(pick.key(), latencyMs, outcome);
      }
      return true;
    } catch (WeightedException | IllegalStateException e) {
      // Stale (the endpoint left the set meanwhile: the engine counted it as stale), or the
      // service is gone (removed, or the engine closed): nothing for the caller's request to do.
      return false;
    }
  }

  /** Finishes the pick without an outcome (the request was never sent, or not its fault). */
  public boolean cancel() {
    if (!pick.finish()) {
      return false;
    }
    pick.cancelInEngine();
    return true;
  }

  /** The latency {@link #complete} reported, NaN before. */
  public double getLatencyMs() {
    return latencyMs;
  }

  public boolean isFinished() {
    return pick.finished != 0;
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
