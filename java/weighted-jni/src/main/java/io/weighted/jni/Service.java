package io.weighted.jni;

import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * One service of an {@link Engine} ({@code wt_service}): its endpoint set, pick and report. Get it
 * with {@link Engine#service(String)}; it is valid until {@link #remove()} or its engine's close,
 * and throws {@link IllegalStateException} afterwards.
 *
 * <p>The hot path ({@link EndpointTable#pickWith(EndpointTable.Resolver)}, {@link #pick(Picked)},
 * {@link #complete}, {@link #report(long, double, Outcome)}) crosses JNI with primitives only: no
 * String, no object is built in native code.
 */
public final class Service {
  private final Engine engine;
  private final Handle handle;
  private final Guard guard;
  private final String name;
  private final long ptr;
  /** The newest set this object installed: {@link #pick(Picked)} picks through it. */
  private volatile EndpointTable<?> latest;

  /** Called by Engine with its guard held, so that its close sees this service's guard. */
  Service(Engine engine, String name, long ptr) {
    this.engine = engine;
    this.handle = engine.handle;
    this.name = name;
    this.ptr = ptr;
    this.guard = new Guard("weighted Service \"" + name + "\" (removed, or its engine closed)");
    handle.services.add(guard);
  }

  public String name() {
    return name;
  }

  public Engine engine() {
    return engine;
  }

  /** True once {@link #remove()} ran or the engine closed: every call throws then. */
  public boolean isClosed() {
    return guard.isClosed();
  }

  /** An endpoint of a set: a unique id (1..256 bytes of UTF-8) and a base weight (&gt; 0). */
  public record Endpoint(String id, double baseWeight) {
    public Endpoint {
      Objects.requireNonNull(id, "endpoint id");
    }
  }

  /** The pointer for one call, inside this service's guard; pair with {@link #exit()}. */
  private long enter() {
    guard.enter();
    return ptr;
  }

  private void exit() {
    guard.exit();
  }

  /**
   * Replaces the endpoint set. Endpoints whose id stays keep their state; new ones start in slow
   * start; removed ones are dropped (reports on them then throw {@link StaleEndpointException}).
   * {@code items.get(i)} is the caller's object for endpoint {@code ids[i]}: picks made from this
   * set resolve to it ({@link #pick(Picked)}), and the engine keeps it reachable for as long as a
   * pick can still return it.
   *
   * @return the set as installed: items, ids, the keys the engine assigned, and the epoch
   *     (the engine's count of set changes, exact even when other callers also set endpoints)
   */
  public <T> EndpointTable<T> setEndpoints(List<? extends T> items, String[] ids,
      double[] baseWeights) {
    return setEndpoints(items, ids, baseWeights, null);
  }

  /**
   * As above; {@code whenInstalled} (tests) runs inside the call once picks can return the new
   * set's entries and before those learn their keys and epoch.
   */
  <T> EndpointTable<T> setEndpoints(List<? extends T> items, String[] ids, double[] baseWeights,
      Runnable whenInstalled) {
    Objects.requireNonNull(items, "items");
    Objects.requireNonNull(ids, "ids");
    Objects.requireNonNull(baseWeights, "baseWeights");
    if (ids.length != baseWeights.length) {
      throw new IllegalArgumentException(
          "ids has " + ids.length + " entries but baseWeights " + baseWeights.length);
    }
    if (items.size() != ids.length) {
      throw new IllegalArgumentException(
          "items has " + items.size() + " entries but ids " + ids.length);
    }
    int n = ids.length;
    byte[][] raw = new byte[n][];
    for (int i = 0; i < n; i++) {
      raw[i] = NativeLibrary.cString(ids[i], "ids[" + i + "]");
    }
    @SuppressWarnings("unchecked")
    EndpointTable.Entry<T>[] entries = new EndpointTable.Entry[n];
    for (int i = 0; i < n; i++) {
      entries[i] = new EndpointTable.Entry<>(items.get(i), ids[i], baseWeights[i], i);
    }
    long[] keys = new long[n];
    long[] epoch = new long[1];
    long p = enter();
    int status;
    try {
      status = setEndpoints0(p, raw, baseWeights, entries, keys, epoch, whenInstalled);
    } finally {
      exit();
    }
    NativeLibrary.checkCall(status);
    EndpointTable<T> table = new EndpointTable<>(this, epoch[0], entries, keys);
    synchronized (this) {  // two writers racing: the newer set wins, whichever returns last
      EndpointTable<?> l = latest;
      if (l == null || l.epoch() < table.epoch()) {
        latest = table;
      }
    }
    return table;
  }

  /** {@link #setEndpoints(List, String[], double[])} with the ids as the items. */
  public EndpointTable<String> setEndpoints(String[] ids, double[] baseWeights) {
    Objects.requireNonNull(ids, "ids");
    return setEndpoints(Arrays.asList(ids), ids, baseWeights);
  }

  public EndpointTable<Endpoint> setEndpoints(List<Endpoint> endpoints) {
    String[] ids = new String[endpoints.size()];
    double[] weights = new double[ids.length];
    for (int i = 0; i < ids.length; i++) {
      ids[i] = endpoints.get(i).id();
      weights[i] = endpoints.get(i).baseWeight();
    }
    return setEndpoints(endpoints, ids, weights);
  }

  /**
   * Removes the service from the engine ({@code wt_service_remove}): its endpoints and their
   * state go, it leaves snapshots and exports, and a {@link EventType#SERVICE_REMOVED} event is
   * raised. Waits for calls on this service still running; afterwards every call on this object
   * throws {@link IllegalStateException}, and {@link Engine#service(String)} with the same name
   * creates a new, empty service. Picks still unfinished are then stale.
   */
  public void remove() {
    if (!guard.close()) {
      throw new IllegalStateException("weighted Service \"" + name + "\" is already removed");
    }
    handle.acquire();  // the engine's guard: a removal never races the engine's destruction
    int status;
    try {
      status = remove0(ptr);
      if (status != 0) {
        guard.reopen();  // the service is still there; reopened before the engine can close
      }
    } finally {
      handle.release();
    }
    NativeLibrary.checkCall(status);
    handle.services.remove(guard);
    engine.forget(this);
    forgetLatest();
  }

  /** The service is gone: its last set's items need not outlive it in this object. */
  void forgetLatest() {
    latest = null;
  }

  /** The key of an endpoint by id; throws {@link NotFoundException} for an unknown id. */
  public long endpointKey(String id) {
    byte[] raw = NativeLibrary.cString(id, "id");
    long[] out = new long[1];
    long p = enter();
    int status;
    try {
      status = endpointKey0(p, raw, out);
    } finally {
      exit();
    }
    NativeLibrary.checkCall(status);
    return out[0];
  }

  /** The id of the endpoint with this key. */
  public String endpointId(long key) {
    byte[][] out = new byte[1][];
    long p = enter();
    int status;
    try {
      status = endpointId0(p, key, out);
    } finally {
      exit();
    }
    NativeLibrary.checkCall(status);
    return NativeLibrary.string(out[0]);
  }

  /** Chooses an endpoint; throws {@link NoEndpointException} when the set is empty. */
  public Pick pick() {
    long[] out = new long[4];
    pickInto(out);
    return Pick.fromPacked(out);
  }

  /**
   * The pick without a Pick object: writes key, epoch, {@code (flags << 32) | index} and the
   * ticket into {@code out[0..3]} ({@link Pick#fromPacked} reads them back).
   */
  public void pickInto(long[] out) {
    if (out.length < 4) {
      throw new IllegalArgumentException("out needs 4 longs, has " + out.length);
    }
    long p = enter();
    int status;
    try {
      status = pick0(p, out);
    } finally {
      exit();
    }
    NativeLibrary.checkCall(status);
  }

  /**
   * Chooses an endpoint and resolves it to the {@link EndpointTable.Entry} of the set it was
   * drawn from, even if another thread installs a newer set meanwhile: no lookup, no retry. Fills
   * and returns {@code into}; throws {@link NoEndpointException} when the set is empty.
   * {@code into.entry()} is null only for a set registered without entries, which no Java caller
   * makes. Picks through the set this object installed last, as {@link EndpointTable#pick(Picked)}
   * does through its own.
   */
  public <P extends Picked> P pick(P into) {
    return pick(into, latest);
  }

  <P extends Picked> P pick(P into, EndpointTable<?> held) {
    long r = pickPinned(held == null ? 0 : held.epoch());
    if ((r & OTHER) == 0) {
      int i = packedIndex(r);
      into.set(held.entry(i), held.key(i), held.epoch(), i, packedFlags(r), packedTicket(r));
    } else {
      long[] p = new long[4];
      EndpointTable.Entry<?> e = takeOther0(p);
      into.set(e, p[0], p[1], (int) p[2], (int) (p[2] >>> 32), (int) p[3]);
    }
    return into;
  }

  // What pickPinned0 returns, never negative (bindings/jni/service.cc): a pick from the held table
  // is (flags << 56) | (index << 32) | ticket; OTHER alone means the pick is another set's, and
  // takeOther0 hands over its entry and all of the pick on this thread. A failure throws.
  static final long OTHER = 1L << 62;

  static int packedIndex(long r) {
    return (int) (r >>> 32) & 0xffffff;
  }

  static int packedFlags(long r) {
    return (int) (r >>> 56);
  }

  static int packedTicket(long r) {
    return (int) r;
  }

  /** One pick; the table whose epoch is {@code heldEpoch} holds its entries (0: none). */
  long pickPinned(long heldEpoch) {
    long p = enter();
    try {
      return pickPinned0(p, heldEpoch);
    } finally {
      exit();
    }
  }

  /** After {@link #pickPinned} said OTHER, on the same thread: key, epoch, index, flags, ticket. */
  static EndpointTable.Entry<?> takeOther(long[] pick) {
    return takeOther0(pick);
  }

  /**
   * Finishes a pick with its outcome; releases its in-flight count if it was tracked. Throws
   * {@link StaleEndpointException} if the endpoint was removed meanwhile (the outcome is then
   * counted as stale), and {@link WeightedException} with {@link Status#INVALID_ARGUMENT} for a
   * latency that is NaN, negative or over the config's limit.
   */
  public void complete(Pick pick, double latencyMs, Outcome outcome) {
    complete(pick.key(), pick.epoch(), pick.index(), pick.flags(), pick.ticket(), latencyMs,
        outcome.code());
  }

  public void complete(Picked pick, double latencyMs, Outcome outcome) {
    complete(pick.key, pick.epoch, pick.index, pick.flags, pick.ticket, latencyMs, outcome.code());
  }

  /** {@link #complete(Pick, double, Outcome)} on the packed form, all primitives. */
  public void complete(long key, long epoch, int index, int flags, int ticket, double latencyMs,
      int outcome) {
    long p = enter();
    int status;
    try {
      status = complete0(p, key, epoch, index, flags, ticket, latencyMs, outcome);
    } finally {
      exit();
    }
    NativeLibrary.checkCall(status);
  }

  /**
   * {@link #complete(Picked, double, Outcome)} and the response's load report (the value of its
   * {@code endpoint-load-metrics} header; null or empty for none) for the same endpoint, in one
   * call. A malformed report throws {@link WeightedException} with
   * {@link Status#BAD_LOAD_REPORT} after the outcome was recorded and the pick finished; the
   * snapshot counts it.
   */
  public void completeWithLoad(Picked pick, double latencyMs, Outcome outcome, String loadReport) {
    completeWithLoad(pick.key, pick.epoch, pick.index, pick.flags, pick.ticket, latencyMs,
        outcome.code(), loadReport);
  }

  public void completeWithLoad(Pick pick, double latencyMs, Outcome outcome, String loadReport) {
    completeWithLoad(pick.key(), pick.epoch(), pick.index(), pick.flags(), pick.ticket(),
        latencyMs, outcome.code(), loadReport);
  }

  /** {@link #completeWithLoad(Picked, double, Outcome, String)} on the packed form. */
  public void completeWithLoad(long key, long epoch, int index, int flags, int ticket,
      double latencyMs, int outcome, String loadReport) {
    byte[] header = headerBytes(loadReport);
    long p = enter();
    int status;
    try {
      status = header == null
          ? complete0(p, key, epoch, index, flags, ticket, latencyMs, outcome)
          : completeWithLoad0(p, key, epoch, index, flags, ticket, latencyMs, outcome, header);
    } finally {
      exit();
    }
    NativeLibrary.checkCall(status);
  }

  /** Records a server's load report (an {@code endpoint-load-metrics} value) by endpoint key. */
  public void reportLoad(long key, String loadReport) {
    byte[] header = headerBytes(loadReport);
    if (header == null) {
      throw new IllegalArgumentException("loadReport is null or empty");
    }
    long p = enter();
    int status;
    try {
      status = reportLoadKey0(p, key, header);
    } finally {
      exit();
    }
    NativeLibrary.checkCall(status);
  }

  // An HTTP header value is ISO-8859-1 on the wire (RFC 9110); the engine reads ASCII.
  private static byte[] headerBytes(String value) {
    return value == null || value.isEmpty()
        ? null : value.getBytes(java.nio.charset.StandardCharsets.ISO_8859_1);
  }

  /** Finishes a pick without an outcome (the request was never sent). */
  public void cancel(Pick pick) {
    cancel(pick.key(), pick.epoch(), pick.index(), pick.flags(), pick.ticket());
  }

  public void cancel(Picked pick) {
    cancel(pick.key, pick.epoch, pick.index, pick.flags, pick.ticket);
  }

  /** {@link #cancel(Pick)} on the primitives. */
  public void cancel(long key, long epoch, int index, int flags, int ticket) {
    long p = enter();
    int status;
    try {
      status = cancel0(p, key, epoch, index, flags, ticket);
    } finally {
      exit();
    }
    NativeLibrary.checkCall(status);
  }

  /**
   * Records an outcome observed elsewhere (a circuit breaker's event stream, a metrics pipeline):
   * no in-flight count is touched.
   */
  public void report(long key, double latencyMs, Outcome outcome) {
    long p = enter();
    int status;
    try {
      status = reportKey0(p, key, latencyMs, outcome.code());
    } finally {
      exit();
    }
    NativeLibrary.checkCall(status);
  }

  /** {@link #report(long, double, Outcome)} by endpoint id (slower: a String crosses JNI). */
  public void report(String endpointId, double latencyMs, Outcome outcome) {
    byte[] raw = NativeLibrary.cString(endpointId, "endpointId");
    long p = enter();
    int status;
    try {
      status = report0(p, raw, latencyMs, outcome.code());
    } finally {
      exit();
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
    long p = enter();
    int status;
    try {
      status = reportBatch0(p, keys, latenciesMs, outcomes, st, recorded);
    } finally {
      exit();
    }
    if (statuses == null) {
      NativeLibrary.checkCall(status);
    }
    return (int) recorded[0];
  }

  /** Records a resource sample (fractions in [0, 1]; NaN fields are not sent). */
  public void reportResources(String endpointId, Resources r) {
    byte[] raw = NativeLibrary.cString(endpointId, "endpointId");
    long p = enter();
    int status;
    try {
      status = reportResources0(p, raw, r.presentBits(), r.cpu(), r.memory(), r.threadPool(),
          r.connectionPool());
    } finally {
      exit();
    }
    NativeLibrary.checkCall(status);
  }

  @Override
  public String toString() {
    return "Service[" + name + (isClosed() ? ", closed]" : "]");
  }

  // ---- natives: bindings/jni/service.cc ----
  private static native int setEndpoints0(long service, byte[][] ids, double[] weights,
      EndpointTable.Entry<?>[] entries, long[] keys, long[] epoch, Runnable whenInstalled);

  private static native int remove0(long service);

  private static native int endpointKey0(long service, byte[] id, long[] out);

  private static native int endpointId0(long service, long key, byte[][] out);

  private static native int pick0(long service, long[] out);

  private static native long pickPinned0(long service, long heldEpoch);

  private static native EndpointTable.Entry<?> takeOther0(long[] pick);

  private static native int complete0(long service, long key, long epoch, int index, int flags,
      int ticket, double latencyMs, int outcome);

  private static native int completeWithLoad0(long service, long key, long epoch, int index,
      int flags, int ticket, double latencyMs, int outcome, byte[] header);

  private static native int reportLoadKey0(long service, long key, byte[] header);

  private static native int cancel0(long service, long key, long epoch, int index, int flags,
      int ticket);

  private static native int reportKey0(long service, long key, double latencyMs, int outcome);

  private static native int report0(long service, byte[] id, double latencyMs, int outcome);

  private static native int reportBatch0(long service, long[] keys, double[] latencies,
      int[] outcomes, int[] statuses, long[] recorded);

  private static native int reportResources0(long service, byte[] id, int present, double cpu,
      double memory, double threadPool, double connectionPool);
}
