package io.weighted.spring;

/**
 * Lets another mechanism veto an endpoint the engine picked, for one request: a circuit breaker
 * that opened on a burst of failures (transient) refuses its endpoint at once, while the engine
 * keeps handling sustained degradation through weights (S-P3). The balancer re-picks a refused
 * endpoint a few times; when every try is refused, the request gets no instance (fail fast, as
 * an open breaker does).
 */
public interface EndpointGate {
  /** True to let one request go to the endpoint (it then ends in an outcome or a cancel). */
  boolean tryAcquire(String serviceId, String endpointId);

  /** A permission from {@link #tryAcquire} that will not be used. */
  default void release(String serviceId, String endpointId) {}

  /**
   * The balancer registered a new endpoint set for the service: a gate that keeps state per
   * endpoint can drop the state of endpoints no longer in it (under instance churn, addresses
   * that never come back would otherwise pile up). Called outside any lock of the balancer.
   */
  default void endpointsChanged(String serviceId, java.util.Set<String> endpointIds) {}
}
