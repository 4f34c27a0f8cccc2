package io.weighted.jni;

import java.util.List;
import java.util.Objects;

/**
 * One service of an {@link Engine} ({@code wt_service}): its endpoint set, pick and report. Get it
 * with {@link Engine#service(String)}; it is valid as long as its engine is open and throws
 * {@link IllegalStateException} afterwards.
 *
 * <p>The hot path ({@link #pick()}, {@link #complete}, {@link #report(long, double, Outcome)})
 * crosses JNI with primitives only: no String, no object is built in native code.
 */
public final class Service {
  private final Engine engine;
  private final Handle handle;
  private final String name;
  private final long ptr;

  Service(Engine engine, String name, long ptr) {
    this.engine = engine;
    this.handle = engine.handle;
    this.name = name;
    this.ptr = ptr;
  }

  public String name() {
    return name;
  }

  public Engine engine() {
    return engine;
  }

  /** An endpoint of a set: a unique id (1..256 bytes of UTF-8) and a base weight (&gt; 0). */
  public record Endpoint(String id, double baseWeight) {
    public Endpoint {
      Objects.requireNonNull(id, "endpoint id");
    }
  }

  /**
   * Replaces the endpoint set. Endpoints whose id stays keep their state; new ones start in slow
   * start; removed ones are dropped (reports on them then throw {@link StaleEndpointException}).
   * The position of each endpoint in {@code ids} is the {@link Pick#index()} that picks report.
   *
   * @return the epoch of the set installed: {@link Pick#epoch()} of the picks made from it (the
   *     engine's count of set changes, exact even when other callers also set endpoints)
   */
  public long setEndpoints(String[] ids, double[] baseWeights) {
    Objects.requireNonNull(ids, "ids");
    Objects.requireNonNull(baseWeights, "baseWeights");
    if (ids.length != baseWeights.length) {
      throw new IllegalArgumentException(
          "ids has " + ids.length + " entries but baseWeights " + baseWeights.length);
    }
    byte[][] raw = new byte[ids.length][];
    for (int i = 0; i < ids.length; i++) {
      raw[i] = NativeLibrary.cString(ids[i], "ids[" + i + "]");
    }
    long[] epoch = new long[1];
    long h = handle.acquire();
    try {
      NativeLibrary.checkCall(setEndpoints0(ptr, raw, baseWeights, epoch));
    } finally {
      handle.release();
    }
    return epoch[0];
  }

  public long setEndpoints(List<Endpoint> endpoints) {
    String[] ids = new String[endpoints.size()];
    double[] weights = new double[ids.length];
    for (int i = 0; i < ids.length; i++) {
      ids[i] = endpoints.get(i).id();
      weights[i] = endpoints.get(i).baseWeight();
    }
    return setEndpoints(ids, weights);
  }

  /** The key of an endpoint by id; throws {@link NotFoundException} for an unknown id. */
  public long endpointKey(String id) {
    byte[] raw = NativeLibrary.cString(id, "id");
    long[] out = new long[1];
    long h = handle.acquire();
    try {
      NativeLibrary.checkCall(endpointKey0(ptr, raw, out));
    } finally {
      handle.release();
    }
    return out[0];
  }

  /** The id of the endpoint with this key. */
  public String endpointId(long key) {
    byte[][] out = new byte[1][];
    long h = handle.acquire();
    try {
      NativeLibrary.checkCall(endpointId0(ptr, key, out));
    } finally {
      handle.release();
    }
    return NativeLibrary.string(out[0]);
  }

  /** Chooses an endpoint; throws {@link NoEndpointException} when the set is empty. */
  public Pick pick() {
    long[] out = new long[3];
    pickInto(out);
    return Pick.fromPacked(out);
  }

  /**
   * The allocation-free pick: writes key, epoch and {@code (flags << 32) | index} into
   * {@code out[0..2]} ({@link Pick#fromPacked} reads them back).
   */
  public void pickInto(long[] out) {
    if (out.length < 3) {
      throw new IllegalArgumentException("out needs 3 longs, has " + out.length);
    }
    long h = handle.acquire();
    int status;
    try {
      status = pick0(ptr, out);
    } finally {
      handle.release();
    }
    NativeLibrary.checkCall(status);
  }

  /** What {@link #pickIn} returns for a pick from another endpoint set than the one asked for. */
  public static final long OTHER_EPOCH = -1L << 40;

  /**
   * The pick for a caller that keeps the endpoint set it registered (array index = pick index,
   * and the keys from {@link #endpointKey}): returns {@code (flags << 32) | index}, one JNI call
   * with primitives only, nothing allocated, nothing written back. When the pick comes from
   * another set than {@code epoch} (the set changed meanwhile), the engine's pick is cancelled
   * and {@link #OTHER_EPOCH} is returned: take a full {@link #pickInto} then. Throws
   * {@link NoEndpointException} when the set is empty.
   */
  public long pickIn(long epoch) {
    long h = handle.acquire();
    long r;
    try {
      r = pickIn0(ptr, epoch);
    } finally {
      handle.release();
    }
    // An error is -status. A pick is negative too once the engine's cycle byte (the top byte of
    // the flags, shifted to bits 56-63) reaches 128, but then below -2^32, like OTHER_EPOCH.
    if (r < 0 && r > -(1L << 32)) {
      NativeLibrary.checkCall((int) -r);
    }
    return r;
  }

  /**
   * Finishes a pick with its outcome; releases its in-flight count if it was tracked. Throws
   * {@link StaleEndpointException} if the endpoint was removed meanwhile (the outcome is then
   * counted as stale), and {@link WeightedException} with {@link Status#INVALID_ARGUMENT} for a
   * latency that is NaN, negative or over the config's limit.
   */
  public void complete(Pick pick, double latencyMs, Outcome outcome) {
    complete(pick.key(), pick.epoch(), pick.index(), pick.flags(), latencyMs, outcome.code());
  }

  /** {@link #complete(Pick, double, Outcome)} on the packed form, all primitives. */
  public void complete(long key, long epoch, int index, int flags, double latencyMs, int outcome) {
    long h = handle.acquire();
    int status;
    try {
      status = complete0(ptr, key, epoch, index, flags, latencyMs, outcome);
    } finally {
      handle.release();
    }
    NativeLibrary.checkCall(status);
  }

  /** Finishes a pick without an outcome (the request was never sent). */
  public void cancel(Pick pick) {
    long h = handle.acquire();
    int status;
    try {
      status = cancel0(ptr, pick.key(), pick.epoch(), pick.index(), pick.flags());
    } finally {
      handle.release();
    }
    NativeLibrary.checkCall(status);
  }

  /**
   * Records an outcome observed elsewhere (a circuit breaker's event stream, a metrics pipeline):
   * no in-flight count is touched.
   */
  public void report(long key, double latencyMs, Outcome outcome) {
    long h = handle.acquire();
    int status;
    try {
      status = reportKey0(ptr, key, latencyMs, outcome.code());
    } finally {
      handle.release();
    }
    NativeLibrary.checkCall(status);
  }

  /** {@link #report(long, double, Outcome)} by endpoint id (slower: a String crosses JNI). */
  public void report(String endpointId, double latencyMs, Outcome outcome) {
    byte[] raw = NativeLibrary.cString(endpointId, "endpointId");
    long h = handle.acquire();
    int status;
    try {
      status = report0(ptr, raw, latencyMs, outcome.code());
    } finally {
      handle.release();
    }
    NativeLibrary.checkCall(status);
  }

  /**
   * Records many outcomes in one call. Every valid entry is recorded; {@code statuses} (same
   * length, may be null) receives each entry's status code. Returns the number recorded; throws
   * for the first failing entry only when {@code statuses} is null.
   */
  public int reportBatch(long[] keys, double[] latenciesMs, int[] outcomes, int[] statuses) {
    int n = keys.length;
    if (latenciesMs.length != n || outcomes.length != n || (statuses != null && statuses.length != n)) {
      throw new IllegalArgumentException("reportBatch arrays differ in length");
    }
    int[] st = statuses != null ? statuses : new int[n];
    long[] recorded = new long[1];
    long h = handle.acquire();
    int status;
    try {
      status = reportBatch0(ptr, keys, latenciesMs, outcomes, st, recorded);
    } finally {
      handle.release();
    }
    if (statuses == null) {
      NativeLibrary.checkCall(status);
    }
    return (int) recorded[0];
  }

  /** Records a resource sample (fractions in [0, 1]; NaN fields are not sent). */
  public void reportResources(String endpointId, Resources r) {
    byte[] raw = NativeLibrary.cString(endpointId, "endpointId");
    long h = handle.acquire();
    int status;
    try {
      status = reportResources0(ptr, raw, r.presentBits(), r.cpu(), r.memory(), r.threadPool(),
          r.connectionPool());
    } finally {
      handle.release();
    }
    NativeLibrary.checkCall(status);
  }

  @Override
  public String toString() {
    return "Service[" + name + "]";
  }

  // ---- natives: bindings/jni/service.cc ----
  private static native int setEndpoints0(long service, byte[][] ids, double[] weights,
      long[] epoch);

  private static native int endpointKey0(long service, byte[] id, long[] out);

  private static native int endpointId0(long service, long key, byte[][] out);

  private static native int pick0(long service, long[] out);

  private static native long pickIn0(long service, long epoch);

  private static native int complete0(long service, long key, long epoch, int index, int flags,
      double latencyMs, int outcome);

  private static native int cancel0(long service, long key, long epoch, int index, int flags);

  private static native int reportKey0(long service, long key, double latencyMs, int outcome);

  private static native int report0(long service, byte[] id, double latencyMs, int outcome);

  private static native int reportBatch0(long service, long[] keys, double[] latencies,
      int[] outcomes, int[] statuses, long[] recorded);

  private static native int reportResources0(long service, byte[] id, int present, double cpu,
      double memory, double threadPool, double connectionPool);
}
