package io.weighted.spring.resilience4j;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.weighted.jni.Outcome;
import io.weighted.spring.EndpointGate;
import io.weighted.spring.OutcomeListener;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Resilience4j and the weighted engine on one data source (S-P3). The breakers handle transient
 * failures, the engine sustained degradation, and neither counts a call twice:
 * <ul>
 *   <li>one {@link CircuitBreaker} per endpoint (named {@code <service>/<host:port>}, configured
 *       by the registry's default or a named config), fed by the load balancer's lifecycle with
 *       the very outcome and latency the engine records: this bridge is the breaker's only
 *       source, so do <b>not</b> also wrap the same calls in that breaker ({@code
 *       executeSupplier}, {@code @CircuitBreaker}), which would count them again;
 *   <li>as an {@link EndpointGate}, an open breaker vetoes its endpoint at once (the balancer
 *       re-picks), without waiting for the engine's next controller cycle.
 * </ul>
 * Declare it as a bean: {@code @Bean CircuitBreakerBridge bridge(CircuitBreakerRegistry r)
 * { return new CircuitBreakerBridge(r); }}.
 */
public class CircuitBreakerBridge implements OutcomeListener, EndpointGate {
  private final CircuitBreakerRegistry registry;

  public CircuitBreakerBridge(CircuitBreakerRegistry registry) {
    this.registry = registry;
  }

  /** The breaker of one endpoint. */
  public CircuitBreaker breaker(String serviceId, String endpointId) {
    return registry.circuitBreaker(serviceId + "/" + endpointId);
  }

  @Override
  public boolean tryAcquire(String serviceId, String endpointId) {
    return breaker(serviceId, endpointId).tryAcquirePermission();
  }

  @Override
  public void release(String serviceId, String endpointId) {
    breaker(serviceId, endpointId).releasePermission();
  }

  @Override
  public void onOutcome(String serviceId, String endpointId, double latencyMs, Outcome outcome) {
    CircuitBreaker cb = breaker(serviceId, endpointId);
    long nanos = Double.isFinite(latencyMs) ? (long) (latencyMs * 1e6) : 0;
    if (outcome == Outcome.SUCCESS) {
      cb.onSuccess(nanos, TimeUnit.NANOSECONDS);
    } else {
      cb.onError(nanos, TimeUnit.NANOSECONDS, new EndpointFailure(outcome));
    }
  }

  @Override
  public void onCancel(String serviceId, String endpointId) {
    release(serviceId, endpointId);
  }

  /**
   * Removes from the registry the breakers of this service's endpoints that left the set, so
   * that addresses which never come back (instance churn) do not pile up; an endpoint that
   * returns starts with a fresh breaker. An outcome arriving late for a departed endpoint makes
   * its breaker again, removed at the next change of the set.
   */
  @Override
  public void endpointsChanged(String serviceId, Set<String> endpointIds) {
    String prefix = serviceId + "/";
    List<String> departed = new ArrayList<>();
    for (CircuitBreaker cb : registry.getAllCircuitBreakers()) {
      String name = cb.getName();
      if (!name.startsWith(prefix)) {
        continue;
      }
      String endpointId = name.substring(prefix.length());
      // A "/" left in it: the breaker of a service whose name extends this one's ("svc/x").
      if (endpointId.indexOf('/') < 0 && !endpointIds.contains(endpointId)) {
        departed.add(name);
      }
    }
    departed.forEach(registry::remove);
  }

  /** What the breaker sees for a failed call: the engine's outcome class. */
  public static final class EndpointFailure extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final transient Outcome outcome;

    public EndpointFailure(Outcome outcome) {
      super(outcome.name(), null, false, false);
      this.outcome = outcome;
    }

    public Outcome outcome() {
      return outcome;
    }
  }
}
