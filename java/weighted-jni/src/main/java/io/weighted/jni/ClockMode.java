package io.weighted.jni;

/** {@code wt_clock_mode}. */
public enum ClockMode {
  /** A monotonic clock; the controller runs on a thread of its own. */
  REAL(0),
  /**
   * Time starts at 0 and moves only through {@link Engine#advance}; controller cycles run inside
   * that call. Deterministic: tests and the simulator use it.
   */
  MANUAL(1);

  private final int code;

  ClockMode(int code) {
    this.code = code;
  }

  public int code() {
    return code;
  }
}
