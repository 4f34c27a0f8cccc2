package io.weighted.jni;

/**
 * A call into the engine failed. {@link #status()} is the C API's status; the message is the
 * engine's own ({@code wt_last_error()}), naming what was wrong and where. The engine's state is
 * exactly as it was before the failing call.
 *
 * <p>Subclasses exist for the failures callers handle differently: {@link ConfigException},
 * {@link StaleEndpointException}, {@link NoEndpointException}, {@link NotFoundException}.
 */
public class WeightedException extends RuntimeException {
  private static final long serialVersionUID = 1L;
  private final Status status;
  private final int code;

  public WeightedException(int code, String message) {
    super(message);
    this.code = code;
    this.status = Status.of(code);
  }

  public Status status() {
    return status;
  }

  /** The raw C status code (useful when {@link #status()} is {@link Status#UNKNOWN}). */
  public int code() {
    return code;
  }

  /** The exception for a status code; only {@link NativeLibrary#checkCall} calls it. */
  static WeightedException of(int code, String engineMessage) {
    Status s = Status.of(code);
    String message = s.cName() + ": " + (engineMessage == null || engineMessage.isEmpty()
        ? "(no message)" : engineMessage);
    switch (s) {
      case CONFIG_PARSE:
      case CONFIG_INVALID:
      case IO:
        return new ConfigException(code, message);
      case STALE:
        return new StaleEndpointException(code, message);
      case NO_ENDPOINT:
        return new NoEndpointException(code, message);
      case NOT_FOUND:
        return new NotFoundException(code, message);
      default:
        return new WeightedException(code, message);
    }
  }
}
