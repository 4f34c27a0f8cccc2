package io.weighted.jni;

/** How a request ended ({@code wt_outcome}); the numbers are the C values. */
public enum Outcome {
  SUCCESS(0),
  /** The server answered with a 5xx status. */
  HTTP_5XX(1),
  /** The request or the connection timed out. */
  TIMEOUT(2),
  /** Refused, reset, unreachable. */
  CONNECT_ERROR(3),
  /** The call "succeeded" but carried a business error code. */
  BUSINESS_ERROR(4);

  private static final Outcome[] BY_CODE = values();
  private final int code;

  Outcome(int code) {
    this.code = code;
  }

  public int code() {
    return code;
  }

  public static Outcome ofCode(int code) {
    if (code < 0 || code >= BY_CODE.length) {
      throw new IllegalArgumentException("no outcome with code " + code);
    }
    return BY_CODE[code];
  }

  /**
   * The same mapping as {@code wt_outcome_from_http_status()}: 500..599 is {@link #HTTP_5XX},
   * anything else success (a 4xx is the caller's fault, not the endpoint's).
   */
  public static Outcome fromHttpStatus(int httpStatus) {
    return httpStatus >= 500 && httpStatus <= 599 ? HTTP_5XX : SUCCESS;
  }
}
