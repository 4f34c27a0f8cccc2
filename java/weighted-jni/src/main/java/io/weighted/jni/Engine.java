package io.weighted.jni;

import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A weighted engine: the Java face of {@code wt_engine}. All state lives in the C++ engine; this
 * object only holds its pointer.
 *
 * <p>Thread-safe: every method may be called from any thread. {@link #close()} runs once (later
 * calls do nothing); every other method then throws {@link IllegalStateException}, and a close
 * that races calls on other threads waits for them to leave the engine first, so it can never
 * crash the JVM. Engines that are never closed are destroyed by a {@link Cleaner} when they become
 * unreachable, but that is a safety net: close them (try-with-resources, or a Spring bean's
 * destroy method).
 *
 * <p>Failures throw {@link WeightedException} (or a subclass) carrying the C status and the
 * engine's message; the engine's state is then exactly as before the call.
 */
public final class Engine implements AutoCloseable {
  private static final Cleaner CLEANER = Cleaner.create();

  static {
    NativeLibrary.ensureLoaded();
  }

  final Handle handle;
  private final Cleaner.Cleanable cleanable;
  private final ClockMode clockMode;
  private final ConcurrentHashMap<String, Service> services = new ConcurrentHashMap<>();
  private final Object eventLock = new Object();

  private Engine(long ptr, ClockMode clockMode) {
    this.handle = new Handle(ptr);
    this.clockMode = clockMode;
    this.cleanable = CLEANER.register(this, handle);
  }

  /** An engine on the real clock from config JSON text ("{}" takes every default). */
  public static Engine create(String configJson) {
    return create(configJson, ClockMode.REAL);
  }

  public static Engine create(String configJson, ClockMode clockMode) {
    byte[] json = NativeLibrary.utf8(configJson, "configJson");
    Objects.requireNonNull(clockMode, "clockMode");
    long[] out = new long[1];
    NativeLibrary.checkCall(create0(json, clockMode.code(), out));
    return new Engine(out[0], clockMode);
  }

  /** An engine from a config file (the shared JSON file every binding reads). */
  public static Engine fromFile(Path configFile, ClockMode clockMode) {
    byte[] path = NativeLibrary.cString(configFile.toString(), "configFile");
    Objects.requireNonNull(clockMode, "clockMode");
    long[] out = new long[1];
    NativeLibrary.checkCall(createFromFile0(path, clockMode.code(), out));
    return new Engine(out[0], clockMode);
  }

  /** Checks a config without creating anything; throws {@link ConfigException} naming the fault. */
  public static void validateConfig(String configJson) {
    NativeLibrary.ensureLoaded();
    NativeLibrary.checkCall(validate0(NativeLibrary.utf8(configJson, "configJson")));
  }

  /** The fully resolved config (every key, defaults filled in) as JSON. */
  public static String resolveConfig(String configJson) {
    NativeLibrary.ensureLoaded();
    byte[][] out = new byte[1][];
    NativeLibrary.checkCall(resolve0(NativeLibrary.utf8(configJson, "configJson"), out));
    return NativeLibrary.string(out[0]);
  }

  /** The loaded library's version, "MAJOR.MINOR.PATCH". */
  public static String libraryVersion() {
    NativeLibrary.ensureLoaded();
    return NativeLibrary.format(NativeLibrary.abiVersion0());
  }

  public ClockMode clockMode() {
    return clockMode;
  }

  /** Replaces the config; an invalid one throws {@link ConfigException} and the old one stays. */
  public void reload(String configJson) {
    byte[] json = NativeLibrary.utf8(configJson, "configJson");
    long h = handle.acquire();
    try {
      NativeLibrary.checkCall(reload0(h, json));
    } finally {
      handle.release();
    }
  }

  public void reloadFromFile(Path configFile) {
    byte[] path = NativeLibrary.cString(configFile.toString(), "configFile");
    long h = handle.acquire();
    try {
      NativeLibrary.checkCall(reloadFromFile0(h, path));
    } finally {
      handle.release();
    }
  }

  /** The engine's time in nanoseconds (0 at creation on the manual clock). */
  public long nowNanos() {
    long[] out = new long[1];
    long h = handle.acquire();
    try {
      NativeLibrary.checkCall(now0(h, out));
    } finally {
      handle.release();
    }
    return out[0];
  }

  /**
   * Manual clock only: moves time forward and runs every controller cycle that falls due, on this
   * thread. On a real-clock engine throws with {@link Status#WRONG_CLOCK}.
   */
  public void advance(Duration delta) {
    advanceNanos(delta.toNanos());
  }

  public void advanceNanos(long deltaNanos) {
    long h = handle.acquire();
    try {
      NativeLibrary.checkCall(advance0(h, deltaNanos));
    } finally {
      handle.release();
    }
  }

  /** Runs one controller cycle now, whatever the clock. */
  public void runCycle() {
    long h = handle.acquire();
    try {
      NativeLibrary.checkCall(runCycle0(h));
    } finally {
      handle.release();
    }
  }

  /**
   * The service with this name, created (empty) on first use. A service lives until
   * {@link Service#remove()} or the engine's close; the returned object is cached, so calling
   * this on every request is cheap.
   */
  public Service service(String name) {
    Service s = services.get(Objects.requireNonNull(name, "name"));
    if (s != null) {
      return s;
    }
    byte[] n = NativeLibrary.cString(name, "name");
    // Held until the Service is in the map and its guard registered: a close that begins meanwhile
    // waits, and then closes the new service's guard too.
    long h = handle.acquire();
    try {
      return services.computeIfAbsent(name, k -> lookupService(h, k, n));
    } finally {
      handle.release();
    }
  }

  private Service lookupService(long engine, String name, byte[] rawName) {
    long[] out = new long[1];
    NativeLibrary.checkCall(service0(engine, rawName, out));
    return new Service(this, name, out[0]);
  }

  /** A removed service leaves the cache, so that the name can be used again. */
  void forget(Service service) {
    services.remove(service.name(), service);
  }

  /**
   * All state as JSON: weights, targets, penalties with per-rule contributions, states, window
   * statistics, lifetime totals. See docs/config.md for the shape.
   */
  public String snapshotJson() {
    byte[][] out = new byte[1][];
    long h = handle.acquire();
    try {
      NativeLibrary.checkCall(snapshot0(h, out));
    } finally {
      handle.release();
    }
    return NativeLibrary.string(out[0]);
  }

  /** The same state in Prometheus text exposition format 0.0.4. */
  public String prometheusText() {
    byte[][] out = new byte[1][];
    long h = handle.acquire();
    try {
      NativeLibrary.checkCall(prometheus0(h, out));
    } finally {
      handle.release();
    }
    return NativeLibrary.string(out[0]);
  }

  /**
   * Takes the oldest queued event, if any. The engine's C callback ({@code
   * wt_engine_set_event_callback}) is not exposed: it would run on the controller's thread,
   * which the JVM does not know.
   */
  public Optional<Event> pollEvent() {
    Event[] out = new Event[1];
    // The C strings of a polled event stay valid only until the next poll on this engine, from
    // any thread: polls are serialised here, and the strings are copied before the lock is left.
    synchronized (eventLock) {
      long h = handle.acquire();
      try {
        NativeLibrary.checkCall(pollEvent0(h, out));
      } finally {
        handle.release();
      }
    }
    return Optional.ofNullable(out[0]);
  }

  /** Takes every queued event, oldest first. */
  public List<Event> drainEvents() {
    List<Event> events = new ArrayList<>();
    for (Optional<Event> e = pollEvent(); e.isPresent(); e = pollEvent()) {
      events.add(e.get());
    }
    return events;
  }

  public boolean isClosed() {
    return handle.isClosed();
  }

  /** Destroys the engine once; later calls do nothing. Waits for calls still running. */
  @Override
  public void close() {
    cleanable.clean();
    for (Service s : services.values()) {
      s.forgetLatest();
    }
    Reference.reachabilityFence(this);
  }

  @Override
  public String toString() {
    return "Engine[" + clockMode + (isClosed() ? ", closed]" : "]");
  }

  // ---- natives: bindings/jni/engine.cc ----
  private static native int create0(byte[] json, int clockMode, long[] out);

  private static native int createFromFile0(byte[] path, int clockMode, long[] out);

  private static native int validate0(byte[] json);

  private static native int resolve0(byte[] json, byte[][] out);

  static native void destroy0(long engine);

  private static native int reload0(long engine, byte[] json);

  private static native int reloadFromFile0(long engine, byte[] path);

  private static native int now0(long engine, long[] out);

  private static native int advance0(long engine, long deltaNanos);

  private static native int runCycle0(long engine);

  private static native int service0(long engine, byte[] name, long[] out);

  private static native int snapshot0(long engine, byte[][] out);

  private static native int prometheus0(long engine, byte[][] out);

  private static native int pollEvent0(long engine, Event[] out);
}
