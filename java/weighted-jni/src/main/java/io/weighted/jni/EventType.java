package io.weighted.jni;

/** {@code wt_event_type}. */
public enum EventType {
  WEIGHT_CHANGED(1),
  /** Penalty reached the isolation level: probe traffic only. */
  ISOLATED(2),
  /** Healthy probe results: the endpoint left isolation. */
  RESTORED(3),
  /** Alert: max isolation time ran out; forced back to a share of its base weight. */
  FORCED_RESTORE(4),
  PANIC_ENTER(5),
  PANIC_EXIT(6),
  ENDPOINT_ADDED(7),
  ENDPOINT_REMOVED(8),
  CONFIG_RELOADED(9),
  /** A type this binding does not know (a newer library). */
  UNKNOWN(-1);

  private final int code;

  EventType(int code) {
    this.code = code;
  }

  public int code() {
    return code;
  }

  public static EventType ofCode(int code) {
    for (EventType t : values()) {
      if (t.code == code) {
        return t;
      }
    }
    return UNKNOWN;
  }
}
