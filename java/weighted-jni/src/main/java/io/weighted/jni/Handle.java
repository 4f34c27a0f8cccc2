package io.weighted.jni;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The native engine pointer with the guards that keep use after close from ever reaching C: the
 * engine's own {@link Guard} and one per {@link Service} (a service's calls enter only its own, so
 * that removing one service waits for that service's calls alone).
 *
 * <p>Closing closes the engine's guard (no new service, reload or snapshot; calls inside
 * finish, service lookups included, so every service of the engine is registered here by then),
 * then each service's guard, and only then destroys the engine. This object holds no reference to
 * its {@link Engine}, so it can be the action of the engine's {@link java.lang.ref.Cleaner}, a
 * safety net for engines that were never closed.
 */
final class Handle implements Runnable {
  private final long ptr;
  final Guard guard = new Guard("weighted Engine");
  final Set<Guard> services = ConcurrentHashMap.newKeySet();

  Handle(long ptr) {
    this.ptr = ptr;
  }

  /** Returns the pointer for one call; throws IllegalStateException once close has begun. */
  long acquire() {
    guard.enter();
    return ptr;
  }

  void release() {
    guard.exit();
  }

  boolean isClosed() {
    return guard.isClosed();
  }

  /** Closes once; later calls return false at once. */
  boolean close() {
    if (!guard.close()) {
      return false;
    }
    for (Guard g : services) {
      g.close();
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
