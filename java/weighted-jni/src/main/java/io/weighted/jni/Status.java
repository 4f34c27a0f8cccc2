package io.weighted.jni;

/**
 * The C API's status codes ({@code wt_status} in weighted.h). The numbers are pinned: they are
 * never renumbered, new ones are only appended.
 */
public enum Status {
  OK(0),
  INVALID_ARGUMENT(1),
  CONFIG_PARSE(2),
  CONFIG_INVALID(3),
  NOT_FOUND(4),
  IO(5),
  NO_ENDPOINT(6),
  LIMIT(7),
  WRONG_CLOCK(8),
  STALE(9),
  NO_MEMORY(10),
  DUPLICATE(11),
  /** 2.1: a state file this library does not understand (Monitor). */
  FORMAT(12),
  /** 2.1: a server's load report header is malformed (the outcome was recorded all the same). */
  BAD_LOAD_REPORT(13),
  INTERNAL(99),
  /** A code this binding does not know (a newer library); the message still says what failed. */
  UNKNOWN(-1);

  private final int code;

  Status(int code) {
    this.code = code;
  }

  /** The C value. */
  public int code() {
    return code;
  }

  /** The name weighted.h gives this status, e.g. {@code WT_ERR_CONFIG_INVALID}: the core's own. */
  public String cName() {
    return Names.BY_ORDINAL[ordinal()];
  }

  /** Read from the library once, on first use: the enum itself needs no native code. */
  private static final class Names {
    static final String[] BY_ORDINAL = new String[values().length];

    static {
      NativeLibrary.ensureLoaded();
      for (Status s : values()) {
        BY_ORDINAL[s.ordinal()] = NativeLibrary.string(NativeLibrary.statusName0(s.code));
      }
    }
  }

  public static Status of(int code) {
    switch (code) {
      case 0: return OK;
      case 1: return INVALID_ARGUMENT;
      case 2: return CONFIG_PARSE;
      case 3: return CONFIG_INVALID;
      case 4: return NOT_FOUND;
      case 5: return IO;
      case 6: return NO_ENDPOINT;
      case 7: return LIMIT;
      case 8: return WRONG_CLOCK;
      case 9: return STALE;
      case 10: return NO_MEMORY;
      case 11: return DUPLICATE;
      case 12: return FORMAT;
      case 13: return BAD_LOAD_REPORT;
      case 99: return INTERNAL;
      default: return UNKNOWN;
    }
  }
}
