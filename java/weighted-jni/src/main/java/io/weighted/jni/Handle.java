package io.weighted.jni;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/**
 * The native engine pointer with the guard that keeps use after close from ever reaching C.
 *
 * <p>Every call brackets itself with {@link #acquire()} / {@link #release()}. {@code acquire}
 * counts the call in a striped counter ({@link LongAdder}: no shared cache line under load) and
 * then reads the closed flag; {@code close} sets the flag and then waits for the count to drain
 * before it destroys the engine. Both sides are sequentially consistent operations, so either the
 * caller sees the flag (and throws IllegalStateException) or the closer sees the call (and
 * waits): {@code wt_engine_destroy()} never races another call, as weighted.h requires, even when
 * an application closes the engine while other threads still use it.
 *
 * <p>The close itself runs once: a compare-and-set on {@link #closing} (RocksDB's
 * AbstractImmutableNativeReference). This object holds no reference to its {@link Engine}, so it
 * can be the action of the engine's {@link java.lang.ref.Cleaner}, a safety net for engines that
 * were never closed.
 */
final class Handle implements Runnable {
  private final long ptr;
  private final LongAdder inFlight = new LongAdder();
  private final AtomicBoolean closing = new AtomicBoolean();
  private volatile boolean closed;

  Handle(long ptr) {
    this.ptr = ptr;
  }

  /** Returns the pointer for one call; throws IllegalStateException once close has begun. */
  long acquire() {
    inFlight.increment();
    if (closed) {
      inFlight.decrement();
      throw new IllegalStateException("weighted Engine is closed");
    }
    return ptr;
  }

  void release() {
    inFlight.decrement();
  }

  boolean isClosed() {
    return closed;
  }

  /** Closes once; later calls return false at once. */
  boolean close() {
    if (!closing.compareAndSet(false, true)) {
      return false;
    }
    closed = true;
    int spins = 0;
    while (inFlight.sum() != 0) {
      if (++spins < 100) {
        Thread.onSpinWait();
      } else {
        Thread.yield();
      }
    }
    Engine.destroy0(ptr);
    return true;
  }

  /** Cleaner action. */
  @Override
  public void run() {
    close();
  }
}
