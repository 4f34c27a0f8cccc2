package io.weighted.jni;

import java.lang.ref.Cleaner;
import java.nio.file.Path;
import java.util.Objects;

/**
 * A read-only view of a state file ({@code export.state_file}): the Java face of
 * {@code wt_monitor}. The file may be written by this process's engine ({@link #of(Engine)}) or
 * another's ({@link #open(Path)}); the texts are the JSON documents weighted.h describes for
 * {@code wt_monitor_snapshot_json}, {@code _history_json}, {@code _events_json} and
 * {@code _info_json}. Nothing here can change an engine.
 *
 * <p>Thread-safe; {@link #close()} runs once and waits for calls in progress. A damaged or foreign
 * file throws {@link WeightedException} with status {@link Status#FORMAT}; a file that cannot be
 * opened {@link ConfigException} (status IO).
 */
public final class Monitor implements AutoCloseable {
  private static final Cleaner CLEANER = Cleaner.create();

  static {
    NativeLibrary.ensureLoaded();
  }

  private final long ptr;
  private final Guard guard = new Guard("weighted Monitor");
  private final Cleaner.Cleanable cleanable;

  private Monitor(long ptr) {
    this.ptr = ptr;
    Guard g = guard;
    this.cleanable = CLEANER.register(this, () -> {
      if (g.close()) {
        close0(ptr);
      }
    });
  }

  /** Opens the state file at {@code path}. */
  public static Monitor open(Path path) {
    Objects.requireNonNull(path, "path");
    long[] out = new long[1];
    NativeLibrary.checkCall(open0(NativeLibrary.cString(path.toString(), "path"), out));
    return new Monitor(out[0]);
  }

  /**
   * Opens the state file {@code engine} writes. Throws {@link NotFoundException} when its config
   * sets no {@code export.state_file}.
   */
  public static Monitor of(Engine engine) {
    Objects.requireNonNull(engine, "engine");
    long[] out = new long[1];
    long h = engine.handle.acquire();
    try {
      NativeLibrary.checkCall(openEngine0(h, out));
    } finally {
      engine.handle.release();
    }
    return new Monitor(out[0]);
  }

  /** The snapshot as the writer last published it. */
  public String snapshotJson() {
    byte[][] out = new byte[1][];
    call(() -> snapshot0(ptr, out));
    return NativeLibrary.string(out[0]);
  }

  /** The history points after {@code since} (0: all kept), at most the newest {@code max}. */
  public String historyJson(long since, long max) {
    checkCount(since, "since");
    checkCount(max, "max");
    byte[][] out = new byte[1][];
    call(() -> history0(ptr, since, max, out));
    return NativeLibrary.string(out[0]);
  }

  /** {@code {"next", "lost", "reset", "events"}}: the events after {@code cursor}. */
  public String eventsJson(long cursor, long max) {
    checkCount(cursor, "cursor");
    checkCount(max, "max");
    byte[][] out = new byte[1][];
    call(() -> events0(ptr, cursor, max, out));
    return NativeLibrary.string(out[0]);
  }

  /** Who writes the file and how recently. */
  public String infoJson() {
    byte[][] out = new byte[1][];
    call(() -> info0(ptr, out));
    return NativeLibrary.string(out[0]);
  }

  public boolean isClosed() {
    return guard.isClosed();
  }

  @Override
  public void close() {
    cleanable.clean();
  }

  private interface NativeCall {
    int run();
  }

  private void call(NativeCall c) {
    guard.enter();
    try {
      NativeLibrary.checkCall(c.run());
    } finally {
      guard.exit();
    }
  }

  private static void checkCount(long v, String what) {
    if (v < 0) {
      throw new IllegalArgumentException(what + " must be >= 0, got " + v);
    }
  }

  // ---- natives: bindings/jni/monitor.cc ----
  private static native int open0(byte[] path, long[] out);

  private static native int openEngine0(long engine, long[] out);

  private static native void close0(long monitor);

  private static native int snapshot0(long monitor, byte[][] out);

  private static native int history0(long monitor, long since, long max, byte[][] out);

  private static native int events0(long monitor, long cursor, long max, byte[][] out);

  private static native int info0(long monitor, byte[][] out);
}
