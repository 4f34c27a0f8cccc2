package io.weighted.spring;

import io.weighted.jni.Outcome;

/**
 * Receives each load-balanced call's outcome once, right after the engine recorded it: the way to
 * feed another consumer (a circuit breaker, a metrics pipeline) from the same data the engine
 * reads, without counting a call twice (S-P3). Declare beans of this type; see
 * {@link io.weighted.spring.resilience4j.CircuitBreakerBridge}.
 */
public interface OutcomeListener {
  /** A call to {@code endpointId} ended with {@code outcome} after {@code latencyMs}. */
  void onOutcome(String serviceId, String endpointId, double latencyMs, Outcome outcome);

  /** A pick was finished without an outcome (never sent, or not the endpoint's fault). */
  default void onCancel(String serviceId, String endpointId) {}
}
