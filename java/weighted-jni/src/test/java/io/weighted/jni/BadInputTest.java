package io.weighted.jni;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The Java rows of the bad-input table (docs/reliability.md: every entry point refuses bad input
 * with a precise message and changes nothing): each bad call throws the expected exception,
 * with the expected C status and a message naming the problem, and leaves the engine's state
 * exactly as it was (the whole snapshot is compared; the clock is manual, so it does not move).
 */
class BadInputTest {
  static final String CONFIG = "{\"seed\": 9, \"slow_start\": {\"window_ms\": 0}, \"picker\": {\"mode\": \"weighted\"}, \"limits\": "
      + "{\"max_services\": 3, \"max_endpoints_per_service\": 4}}";

  record Case(String name, Consumer<Engine> call, Class<? extends Throwable> type, Status status,
      String message) {
    @Override
    public String toString() {
      return name;
    }
  }

  static Case c(String name, Consumer<Engine> call, Status status, String message) {
    Class<? extends Throwable> type = switch (status) {
      case CONFIG_PARSE, CONFIG_INVALID, IO -> ConfigException.class;
      case NOT_FOUND -> NotFoundException.class;
      case STALE -> StaleEndpointException.class;
      default -> WeightedException.class;
    };
    return new Case(name, call, type, status, message);
  }

  static Case java(String name, Consumer<Engine> call, Class<? extends Throwable> type,
      String message) {
    return new Case(name, call, type, null, message);
  }

  static Service orders(Engine e) {
    return e.service("orders");
  }

  static Pick pick(Engine e) {
    // A pick does not change the snapshot in the exact (weighted) picker mode.
    return orders(e).pick();
  }

  static void set(Engine e, String[] ids, double... w) {
    orders(e).setEndpoints(ids, w);
  }

  static Stream<Case> cases() {
    return Stream.of(
        c("malformed JSON", e -> e.reload("{\"seed\": 1,"), Status.CONFIG_PARSE, "line"),
        c("wrong type", e -> e.reload("{\"controller\": {\"interval_ms\": \"5s\"}}"),
            Status.CONFIG_INVALID, "interval_ms"),
        c("unknown key", e -> e.reload("{\"bogus\": true}"), Status.CONFIG_INVALID, "bogus"),
        c("out of range", e -> e.reload("{\"controller\": {\"max_step\": 2}}"),
            Status.CONFIG_INVALID, "max_step"),
        c("contradictory window", e -> e.reload(
            "{\"controller\": {\"interval_ms\": 5000}, \"window\": {\"length_ms\": 1000}}"),
            Status.CONFIG_INVALID, "length_ms"),
        c("NaN spelled as a string", e -> e.reload("{\"controller\": {\"max_step\": \"NaN\"}}"),
            Status.CONFIG_INVALID, "max_step"),
        c("negative duration", e -> e.reload("{\"controller\": {\"cooldown_ms\": -1}}"),
            Status.CONFIG_INVALID, "cooldown_ms"),
        // Over the default (and largest) limits.max_config_bytes, 1 MiB.
        c("oversized config", e -> e.reload("{\"profile\": \"default\"" + " ".repeat(1 << 20)
            + "}"), Status.LIMIT, ""),
        c("config file missing", e -> e.reloadFromFile(java.nio.file.Path.of("/nonexistent.json")),
            Status.IO, "nonexistent"),
        c("NaN latency", e -> orders(e).complete(pick(e), Double.NaN, Outcome.SUCCESS),
            Status.INVALID_ARGUMENT, "latency"),
        c("negative latency", e -> orders(e).complete(pick(e), -3, Outcome.SUCCESS),
            Status.INVALID_ARGUMENT, "latency"),
        c("infinite latency", e -> orders(e).complete(pick(e), Double.POSITIVE_INFINITY,
            Outcome.SUCCESS), Status.INVALID_ARGUMENT, "latency"),
        c("absurd latency", e -> orders(e).complete(pick(e), 1e12, Outcome.SUCCESS),
            Status.INVALID_ARGUMENT, "latency"),
        c("unknown outcome code", e -> {
          Pick p = pick(e);
          orders(e).complete(p.key(), p.epoch(), p.index(), p.flags(), p.ticket(), 1.0, 17);
        }, Status.INVALID_ARGUMENT, "outcome"),
        c("report on unknown id", e -> orders(e).report("nope:1", 1.0, Outcome.SUCCESS),
            Status.NOT_FOUND, "nope:1"),
        // A key the engine never issued cannot be told from one whose endpoint left: STALE.
        c("id of unknown key", e -> orders(e).endpointId(123456789L), Status.STALE, "not in"),
        c("duplicate endpoint ids", e -> set(e, new String[] {"x:1", "x:1"}, 1, 1),
            Status.DUPLICATE, "x:1"),
        c("zero base weight", e -> set(e, new String[] {"x:1"}, 0), Status.INVALID_ARGUMENT,
            "weight"),
        c("NaN base weight", e -> set(e, new String[] {"x:1"}, Double.NaN),
            Status.INVALID_ARGUMENT, "weight"),
        c("negative base weight", e -> set(e, new String[] {"x:1"}, -1),
            Status.INVALID_ARGUMENT, "weight"),
        c("empty endpoint id", e -> set(e, new String[] {""}, 1), Status.INVALID_ARGUMENT, "id"),
        c("endpoint id over 256 bytes", e -> set(e, new String[] {"x".repeat(300)}, 1),
            Status.INVALID_ARGUMENT, "id"),
        c("too many endpoints", e -> set(e, new String[] {"a:1", "b:1", "c:1", "d:1", "e:1"},
            1, 1, 1, 1, 1), Status.LIMIT, "4"),
        c("empty service name", e -> e.service(""), Status.INVALID_ARGUMENT, "name"),
        c("too many services", e -> e.service("s4"), Status.LIMIT, "3"),
        c("cpu over 1", e -> orders(e).reportResources("a:1", Resources.cpu(1.5)),
            Status.INVALID_ARGUMENT, "cpu"),
        c("negative cpu", e -> orders(e).reportResources("a:1", Resources.cpu(-0.1)),
            Status.INVALID_ARGUMENT, "cpu"),
        c("negative clock step", e -> e.advanceNanos(-1), Status.INVALID_ARGUMENT, ""),
        java("null endpoint id", e -> set(e, new String[] {null}, 1), NullPointerException.class,
            "ids[0]"),
        java("NUL inside an id", e -> orders(e).report("a:\u00001", 1, Outcome.SUCCESS),
            IllegalArgumentException.class, "NUL"),
        java("ids and weights differ in length", e -> set(e, new String[] {"a:1"}, 1, 2),
            IllegalArgumentException.class, "baseWeights"),
        java("batch arrays differ in length", e -> orders(e).reportBatch(new long[2],
            new double[1], new int[2], null), IllegalArgumentException.class, "length"),
        java("use after close", Engine::close, null, null));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void badInputIsRefusedAndChangesNothing(Case bad) {
    try (Engine engine = Engine.create(CONFIG, ClockMode.MANUAL)) {
      Service svc = engine.service("orders");
      svc.setEndpoints(new String[] {"a:1", "b:1"}, new double[] {1, 2});
      engine.service("s2");
      engine.service("s3");  // max_services: 3
      engine.drainEvents();
      if (bad.type() == null) {  // use after close: every later call is IllegalStateException
        bad.call().accept(engine);
        for (Consumer<Engine> call : List.<Consumer<Engine>>of(Engine::snapshotJson,
            e -> svc.pick(), e -> e.advance(Duration.ofSeconds(1)), e -> e.service("x"),
            e -> svc.report("a:1", 1, Outcome.SUCCESS), e -> e.reload("{}"))) {
          assertThat(catchThrowable(() -> call.accept(engine)))
              .isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
        }
        return;
      }
      String before = engine.snapshotJson();
      Throwable t = catchThrowable(() -> bad.call().accept(engine));
      assertThat(t).isInstanceOf(bad.type()).hasMessageContaining(bad.message());
      if (bad.status() != null) {
        assertThat(((WeightedException) t).status()).isEqualTo(bad.status());
        assertThat(t.getMessage()).startsWith(bad.status().cName() + ": ");
      }
      assertThat(engine.snapshotJson()).as("state after " + bad).isEqualTo(before);
      assertThat(engine.drainEvents()).as("events after " + bad).isEmpty();
    }
  }
}
