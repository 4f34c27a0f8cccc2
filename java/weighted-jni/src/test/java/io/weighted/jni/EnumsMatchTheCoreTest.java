package io.weighted.jni;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Locale;
import org.junit.jupiter.api.Test;

/**
 * The Java enums hold the core's numbers, and their names come from the core: every value the
 * library names has its constant here with that code, and no constant has a code the library
 * does not know (but UNKNOWN).
 */
class EnumsMatchTheCoreTest {
  @Test
  void statusesAreTheCoresWithItsNames() {
    NativeLibrary.ensureLoaded();
    for (int code = -1; code <= 200; code++) {
      String core = NativeLibrary.string(NativeLibrary.statusName0(code));
      Status s = Status.of(code);
      if (core.equals("WT_UNKNOWN_STATUS")) {
        assertThat(s).as("code %d", code).isEqualTo(Status.UNKNOWN);
      } else {
        assertThat(s).as("%s (%d) has a constant", core, code).isNotEqualTo(Status.UNKNOWN);
        assertThat(s.code()).isEqualTo(code);
        assertThat(s.cName()).isEqualTo(core)
            .isEqualTo(s == Status.OK ? "WT_OK" : "WT_ERR_" + s.name());
      }
    }
    assertThat(Status.UNKNOWN.cName()).isEqualTo("WT_UNKNOWN_STATUS");
  }

  @Test
  void outcomesAreTheCoresWithItsLabels() {
    NativeLibrary.ensureLoaded();
    int named = 0;
    for (int code = -1; code <= 64; code++) {
      String core = NativeLibrary.string(NativeLibrary.outcomeName0(code));
      if (core != null) {
        named++;
        Outcome o = Outcome.ofCode(code);
        assertThat(o.code()).isEqualTo(code);
        assertThat(o.label()).isEqualTo(core).isEqualTo(o.name().toLowerCase(Locale.ROOT));
      }
    }
    assertThat(named).isEqualTo(Outcome.values().length);
    assertThat(Outcome.HTTP_5XX.label()).isEqualTo("http_5xx");
  }

  @Test
  void eventTypesAreTheCoresWithItsLabels() {
    NativeLibrary.ensureLoaded();
    int named = 0;
    for (int code = -1; code <= 64; code++) {
      String core = NativeLibrary.string(NativeLibrary.eventTypeName0(code));
      EventType t = EventType.ofCode(code);
      if (core == null) {
        assertThat(t).as("code %d", code).isEqualTo(EventType.UNKNOWN);
      } else {
        named++;
        assertThat(t).as("%s (%d) has a constant", core, code).isNotEqualTo(EventType.UNKNOWN);
        assertThat(t.label()).isEqualTo(core).isEqualTo(t.name().toLowerCase(Locale.ROOT));
      }
    }
    assertThat(named).isEqualTo(EventType.values().length - 1);  // all but UNKNOWN
    assertThat(EventType.UNKNOWN.label()).isNull();
  }

  @Test
  void theHttpMappingIsTheCores() {
    assertThat(Outcome.fromHttpStatus(200)).isEqualTo(Outcome.SUCCESS);
    assertThat(Outcome.fromHttpStatus(404)).isEqualTo(Outcome.SUCCESS);
    assertThat(Outcome.fromHttpStatus(500)).isEqualTo(Outcome.HTTP_5XX);
    assertThat(Outcome.fromHttpStatus(599)).isEqualTo(Outcome.HTTP_5XX);
    assertThat(Outcome.fromHttpStatus(600)).isEqualTo(Outcome.SUCCESS);
    assertThat(Outcome.fromHttpStatus(-1)).isEqualTo(Outcome.SUCCESS);
  }

  @Test
  void exceptionsAreClassifiedOnceForEveryBinding() {
    assertThat(Outcome.of(new java.net.SocketTimeoutException())).isEqualTo(Outcome.TIMEOUT);
    assertThat(Outcome.of(new java.util.concurrent.TimeoutException())).isEqualTo(Outcome.TIMEOUT);
    assertThat(Outcome.of(new RuntimeException(new java.net.ConnectException())))
        .isEqualTo(Outcome.CONNECT_ERROR);
    assertThat(Outcome.of(new java.nio.channels.ClosedChannelException()))
        .isEqualTo(Outcome.CONNECT_ERROR);
    assertThat(Outcome.of(new java.net.PortUnreachableException()))
        .isEqualTo(Outcome.CONNECT_ERROR);
    // An I/O error is a connect error unless a cause says more precisely what happened.
    assertThat(Outcome.of(new java.io.IOException("reset"))).isEqualTo(Outcome.CONNECT_ERROR);
    assertThat(Outcome.of(new java.io.IOException(new java.net.SocketTimeoutException())))
        .isEqualTo(Outcome.TIMEOUT);
    assertThat(Outcome.of(new ReadTimeoutException())).isEqualTo(Outcome.TIMEOUT);
    assertThat(Outcome.of(new PrematureCloseException())).isEqualTo(Outcome.CONNECT_ERROR);
    assertThat(Outcome.of(new IllegalStateException())).isNull();
    assertThat(Outcome.of(null)).isNull();
    // A client's HTTP error exception is classified by its status, asked first at every level.
    RuntimeException http503 = new RuntimeException("503");
    assertThat(Outcome.of(new RuntimeException(http503), t -> t == http503 ? 503 : 0))
        .isEqualTo(Outcome.HTTP_5XX);
    assertThat(Outcome.of(http503, t -> t == http503 ? 404 : 0)).isEqualTo(Outcome.SUCCESS);
  }

  /** Netty's and Reactor Netty's types are recognised by name: the bindings do not depend on them. */
  static final class ReadTimeoutException extends RuntimeException {}

  static final class PrematureCloseException extends java.io.IOException {}
}
