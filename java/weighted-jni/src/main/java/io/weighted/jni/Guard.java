package io.weighted.jni;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/**
 * Keeps calls on a native object from racing its destruction: weighted.h forbids
 * {@code wt_engine_destroy()} and {@code wt_service_remove()} to race any other call on the same
 * handle, and a JVM must not crash because an application closes while other threads still call.
 *
 * <p>Every call brackets itself with {@link #enter()} / {@link #exit()}: {@code enter} counts the
 * call in a striped counter ({@link LongAdder}: no shared cache line under load) and then reads
 * the closed flag; {@link #close()} sets the flag and then waits for the count to drain. Both
 * sides are sequentially consistent, so either the caller sees the flag (and throws
 * IllegalStateException) or the closer sees the call (and waits for it).
 *
 * <p>Only the first close destroys: a compare-and-set on {@link #closing} tells it (RocksDB's
 * AbstractImmutableNativeReference).
 */
final class Guard {
  private final String what;
  private final LongAdder inFlight = new LongAdder();
  private final AtomicBoolean closing = new AtomicBoolean();
  private volatile boolean closed;

  /** {@code what} names the object in the IllegalStateException, e.g. "weighted Engine". */
  Guard(String what) {
    this.what = what;
  }

  void enter() {
    inFlight.increment();
    if (closed) {
      inFlight.decrement();
      throw new IllegalStateException(what + " is closed");
    }
  }

  void exit() {
    inFlight.decrement();
  }

  boolean isClosed() {
    return closed;
  }

  /**
   * Closes and waits for the calls inside; true for the first close only. A second closer (the
   * engine closing while one of its services is being removed) waits too: the native object goes
   * only after both.
   */
  boolean close() {
    boolean first = closing.compareAndSet(false, true);
    closed = true;
    int spins = 0;
    while (inFlight.sum() != 0) {
      if (++spins < 100) {
        Thread.onSpinWait();
      } else {
        Thread.yield();
      }
    }
    return first;
  }

  /** Undoes a {@link #close()} whose native destruction failed: the object is still alive. */
  void reopen() {
    closed = false;
    closing.set(false);
  }
}
