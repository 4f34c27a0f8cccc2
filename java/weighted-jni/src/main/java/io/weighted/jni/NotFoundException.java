package io.weighted.jni;

/** An unknown service or endpoint id. */
public class NotFoundException extends WeightedException {
  private static final long serialVersionUID = 1L;

  public NotFoundException(int code, String message) {
    super(code, message);
  }
}
