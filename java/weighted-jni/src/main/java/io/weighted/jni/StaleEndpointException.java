package io.weighted.jni;

/** A report named an endpoint that has since been removed from its service; the engine counted it as stale, not lost. */
public class StaleEndpointException extends WeightedException {
  private static final long serialVersionUID = 1L;

  public StaleEndpointException(int code, String message) {
    super(code, message);
  }
}
