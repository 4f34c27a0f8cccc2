package io.weighted.jni;

/**
 * One engine event ({@code wt_event}), copied out of the engine's queue.
 *
 * @param endpoint "" for service- and engine-wide events
 * @param reason a JSON object: the rules that fired, on which values
 */
public record Event(EventType type, long timeNanos, String service, String endpoint,
    double oldWeight, double newWeight, String reason) {

  /** Called from native code (bindings/jni/engine.cc). */
  static Event fromNative(int type, long timeNanos, byte[] service, byte[] endpoint,
      double oldWeight, double newWeight, byte[] reason) {
    return new Event(EventType.ofCode(type), timeNanos, NativeLibrary.string(service),
        NativeLibrary.string(endpoint), oldWeight, newWeight, NativeLibrary.string(reason));
  }
}
