package io.weighted.jni;

/** {@code wt_event_type}; the numbers are the C values (EnumsMatchTheCoreTest holds them). */
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
  /** {@link Service#remove()}; the event's endpoint is "". */
  SERVICE_REMOVED(10),
  /** 2.1: a metric source of the engine's (config {@code sources}) has failed for its stale_ms. */
  SOURCE_STALE(11),
  /** 2.1: and has answered again. Service and endpoint are "". */
  SOURCE_FRESH(12),
  /**
   * 2.2: the service's error rate over budget.window_ms went above budget.max_error_rate. The
   * reason says whether the price is at budget.max_error_cost ("limited": cannot be met).
   */
  BUDGET_MISSED(13),
  /** 2.2: and is back within it. The event's endpoint is "". */
  BUDGET_MET(14),
  /**
   * 2.2: the capacity guard held back some of a cycle's cuts or isolations, or stopped holding
   * them (the number held changed). Endpoint is ""; the reason names the endpoints held and the
   * headroom the guard saw.
   */
  GUARD(15),
  /**
   * 2.3: an endpoint's state ({@link EndpointState}) changed in a cycle without an isolation,
   * restore or forced restore; the reason is the judgement behind it ("state", "evidence",
   * "rules", "picker", "failing").
   */
  STATE_CHANGED(16),
  /** A type this binding does not know (a newer library). */
  UNKNOWN(-1);

  private final int code;

  EventType(int code) {
    this.code = code;
  }

  public int code() {
    return code;
  }

  /** The core's spelling ({@code wt_event_type_name}), e.g. "weight_changed"; null for UNKNOWN. */
  public String label() {
    return Labels.BY_ORDINAL[ordinal()];
  }

  /** Read from the library once, on first use. */
  private static final class Labels {
    static final String[] BY_ORDINAL = new String[values().length];

    static {
      NativeLibrary.ensureLoaded();
      for (EventType t : values()) {
        BY_ORDINAL[t.ordinal()] = NativeLibrary.string(NativeLibrary.eventTypeName0(t.code));
      }
    }
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
