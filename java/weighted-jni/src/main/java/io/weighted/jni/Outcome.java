package io.weighted.jni;

import java.io.IOException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.PortUnreachableException;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.nio.channels.ClosedChannelException;
import java.util.concurrent.TimeoutException;
import java.util.function.ToIntFunction;

/**
 * How a request ended ({@code wt_outcome}); the numbers are the C values, the labels and the
 * HTTP mapping the core's own (EnumsMatchTheCoreTest holds them to it).
 */
public enum Outcome {
  SUCCESS(0),
  /** The server answered with a 5xx status. */
  HTTP_5XX(1),
  /** The request or the connection timed out. */
  TIMEOUT(2),
  /** Refused, reset, unreachable. */
  CONNECT_ERROR(3),
  /** The call "succeeded" but carried a business error code. */
  BUSINESS_ERROR(4);

  /** Causes followed at most: a cause chain longer than this is not one to learn from. */
  private static final int MAX_CAUSES = 16;
  private static final Outcome[] BY_CODE = values();
  private final int code;

  Outcome(int code) {
    this.code = code;
  }

  public int code() {
    return code;
  }

  /** The core's spelling ({@code wt_outcome_name}): "success", "http_5xx", ... */
  public String label() {
    return Labels.BY_ORDINAL[ordinal()];
  }

  public static Outcome ofCode(int code) {
    if (code < 0 || code >= BY_CODE.length) {
      throw new IllegalArgumentException("no outcome with code " + code);
    }
    return BY_CODE[code];
  }

  /**
   * The core's mapping ({@code wt_outcome_from_http_status()}): 500..599 is {@link #HTTP_5XX},
   * anything else success (a 4xx is the caller's fault, not the endpoint's).
   */
  public static Outcome fromHttpStatus(int httpStatus) {
    NativeLibrary.ensureLoaded();
    return BY_CODE[NativeLibrary.outcomeOfHttpStatus0(httpStatus)];
  }

  /**
   * The one exception classifier of the Java bindings (the Spring balancer's and the Ribbon
   * listener's): by the exception and its causes, a timeout type ({@code TimeoutException},
   * {@code SocketTimeoutException}, any {@code *TimeoutException}: Netty's read, write and
   * connect timeouts) is {@link #TIMEOUT}; refused, reset, unreachable, unknown host, a closed
   * channel, Reactor Netty's premature close is {@link #CONNECT_ERROR}, and so is any other
   * {@code IOException} unless one of its causes says more precisely what happened. Anything
   * else (a caller bug, a serialization error) is not the endpoint's fault: null.
   */
  public static Outcome of(Throwable t) {
    return of(t, null);
  }

  /**
   * {@link #of(Throwable)}, with {@code httpStatus} asked first at every level of the cause
   * chain: a status it returns (not 0) classifies the failure by {@link #fromHttpStatus}. For
   * client libraries whose HTTP errors are exceptions (Spring's RestClientResponseException,
   * WebClientResponseException); may be null.
   */
  public static Outcome of(Throwable t, ToIntFunction<Throwable> httpStatus) {
    Outcome fallback = null;
    for (int depth = 0; t != null && depth < MAX_CAUSES; depth++, t = t.getCause()) {
      int http = httpStatus == null ? 0 : httpStatus.applyAsInt(t);
      if (http != 0) {
        return fromHttpStatus(http);
      }
      if (isTimeout(t)) {
        return TIMEOUT;
      }
      if (t instanceof ConnectException || t instanceof NoRouteToHostException
          || t instanceof UnknownHostException || t instanceof PortUnreachableException
          || t instanceof ClosedChannelException || t instanceof SocketException
          || t.getClass().getName().endsWith("PrematureCloseException")) {
        return CONNECT_ERROR;
      }
      if (t instanceof IOException && fallback == null) {
        fallback = CONNECT_ERROR;
      }
    }
    return fallback;
  }

  private static boolean isTimeout(Throwable t) {
    // By name too: Netty's ReadTimeoutException and friends are not TimeoutExceptions, and the
    // bindings do not depend on Netty.
    return t instanceof TimeoutException || t instanceof SocketTimeoutException
        || t.getClass().getName().endsWith("TimeoutException");
  }

  /** Read from the library once, on first use. */
  private static final class Labels {
    static final String[] BY_ORDINAL = new String[BY_CODE.length];

    static {
      NativeLibrary.ensureLoaded();
      for (Outcome o : BY_CODE) {
        BY_ORDINAL[o.ordinal()] = NativeLibrary.string(NativeLibrary.outcomeName0(o.code));
      }
    }
  }
}
