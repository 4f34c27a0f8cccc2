package io.weighted.jni;

/** A pick on a service whose endpoint set is empty. */
public class NoEndpointException extends WeightedException {
  private static final long serialVersionUID = 1L;

  public NoEndpointException(int code, String message) {
    super(code, message);
  }
}
