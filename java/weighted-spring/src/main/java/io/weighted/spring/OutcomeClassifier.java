package io.weighted.spring;

import io.weighted.jni.Outcome;
import org.springframework.cloud.client.loadbalancer.CompletionContext;

/**
 * Turns a finished load-balanced call into an engine {@link Outcome}. Declare a bean of this type
 * to add business error codes (e.g. a header or a body field) on top of
 * {@link DefaultOutcomeClassifier}.
 */
@FunctionalInterface
public interface OutcomeClassifier {
  /**
   * The outcome to report, or null when the endpoint is not to blame (the call is then cancelled:
   * its in-flight count is released, no outcome is counted).
   */
  Outcome classify(CompletionContext<?, ?, ?> completion);
}
