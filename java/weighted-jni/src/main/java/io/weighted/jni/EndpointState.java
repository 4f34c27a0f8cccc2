package io.weighted.jni;

/**
 * {@code wt_endpoint_state}: an endpoint's state as the snapshot's {@code "state"} names it. An
 * endpoint the engine has no evidence on is not a state of its own: its snapshot says
 * {@code "known": false} and {@code "judgement": {"evidence": "none"}}.
 */
public enum EndpointState {
  /** No rule fires; weight at base. */
  HEALTHY(0, "healthy"),
  /** Latency or resource rules fire: weight cut. */
  DEGRADED(1, "degraded"),
  /** Penalty reached 1: probe traffic only. */
  ISOLATED(2, "isolated"),
  /** No rule fires; weight stepping back up to base. */
  RECOVERING(3, "recovering"),
  /** 2.3: failure-rate rules fire: cut, and avoided by the picker because it fails. */
  FAILING(4, "failing"),
  /** A state this binding does not know (a newer library). */
  UNKNOWN(-1, null);

  private final int code;
  private final String label;

  EndpointState(int code, String label) {
    this.code = code;
    this.label = label;
  }

  /** The {@code wt_endpoint_state} number; -1 for UNKNOWN. */
  public int code() {
    return code;
  }

  /** The snapshot's spelling, e.g. "failing"; null for UNKNOWN. */
  public String label() {
    return label;
  }

  /** The state the snapshot's {@code "state"} string names; UNKNOWN for any other. */
  public static EndpointState fromLabel(String label) {
    for (EndpointState s : values()) {
      if (s.label != null && s.label.equals(label)) {
        return s;
      }
    }
    return UNKNOWN;
  }
}
