package io.weighted.jni;

/**
 * The result of {@link Service#pick()}: which endpoint, and what {@link Service#complete} needs to
 * report on it. {@code index} is the endpoint's position in the set numbered {@code epoch}
 * ({@link EndpointTable}). {@code flags} holds the bits below; {@code ticket} is the engine's (the
 * controller cycle that counted a tracked pick): pass a pick back as it came.
 */
public record Pick(long key, long epoch, int index, int flags, int ticket) {
  /** The endpoint is half-isolated; this request is a probe. */
  public static final int PROBE = 1;
  /** The service is in panic: plain round-robin over all endpoints. */
  public static final int PANIC = 1 << 1;
  /**
   * An in-flight count was taken: finish with complete or cancel. A lost pick's count expires in
   * the engine by the start of the second controller cycle after it.
   */
  public static final int TRACKED = 1 << 2;

  public boolean isProbe() {
    return (flags & PROBE) != 0;
  }

  public boolean isPanic() {
    return (flags & PANIC) != 0;
  }

  public boolean isTracked() {
    return (flags & TRACKED) != 0;
  }

  /** Rebuilds a pick from the four longs {@link Service#pickInto(long[])} writes. */
  public static Pick fromPacked(long[] packed) {
    return new Pick(packed[0], packed[1], (int) packed[2], (int) (packed[2] >>> 32),
        (int) packed[3]);
  }
}
