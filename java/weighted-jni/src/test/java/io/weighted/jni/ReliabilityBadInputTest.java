package io.weighted.jni;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * Bad input that BadInputTest (the binding's own table) does not cover: the limits the
 * reliability review added to the engine (the 16 KiB floor of max_config_bytes, the manual
 * clock's end, endless config files, a reload below the service count) and the engine's hints
 * for misplaced keys. Each case runs on
 * a live engine, expects one exception with its status and a fragment of the engine's message,
 * and proves the state unchanged: equal snapshot JSON before and after, no event raised.
 * docs/reliability.md lists both tables.
 */
class ReliabilityBadInputTest {
  static final String CONFIG = "{\"seed\": 42, \"picker\": {\"mode\": \"weighted\"},"
      + " \"limits\": {\"max_services\": 2, \"max_endpoints_per_service\": 4,"
      + " \"max_latency_ms\": 60000}}";

  /** A live engine: services "orders" (a, b with traffic) and "empty" (no endpoints). */
  static final class Live implements AutoCloseable {
    final Engine engine = Engine.create(CONFIG, ClockMode.MANUAL);
    final Service orders = engine.service("orders");
    final Service empty = engine.service("empty");

    Live() {
      orders.setEndpoints(new String[] {"a", "b"}, new double[] {100, 100});
      for (int i = 0; i < 60; i++) {
        Pick p = orders.pick();
        orders.complete(p, 10 + i % 7, Outcome.SUCCESS);
        if (i % 10 == 9) {
          engine.advance(java.time.Duration.ofSeconds(1));
        }
      }
      engine.drainEvents();
    }

    @Override
    public void close() {
      engine.close();
    }
  }

  record Case(String name, Consumer<Live> call, Class<? extends Throwable> type, Status status,
              String message) {}

  static Case engineCase(String name, Consumer<Live> call, Class<? extends Throwable> type,
                         Status status, String message) {
    return new Case(name, call, type, status, message);
  }

  static Case javaCase(String name, Consumer<Live> call, Class<? extends Throwable> type,
                       String message) {
    return new Case(name, call, type, null, message);
  }

  static List<Case> cases() {
    return List.of(
        engineCase("reload NaN token", l -> l.engine.reload("{\"panic\": {\"threshold\": NaN}}"),
            ConfigException.class, Status.CONFIG_PARSE, "line 1, column 25"),
        engineCase("reload unknown key typo", l -> l.engine.reload("{\"window\": {\"lenght_ms\": 5}}"),
            ConfigException.class, Status.CONFIG_INVALID, "did you mean \"length_ms\"?"),
        engineCase("reload key at the wrong level", l -> l.engine.reload("{\"cooldown_ms\": 5000}"),
            ConfigException.class, Status.CONFIG_INVALID, "\"cooldown_ms\" belongs in /controller"),
        engineCase("reload duplicate key", l -> l.engine.reload("{\"seed\": 1, \"seed\": 2}"),
            ConfigException.class, Status.CONFIG_INVALID, "/seed: duplicate key"),
        engineCase("reload limit below the floor",
            l -> l.engine.reload("{\"limits\": {\"max_config_bytes\": 100}}"),
            ConfigException.class, Status.CONFIG_INVALID, "must be an integer in [16384, 1048576]"),
        engineCase("reload below the service count",
            l -> l.engine.reload("{\"limits\": {\"max_services\": 1}}"),
            WeightedException.class, Status.LIMIT, "more than the new limits.max_services = 1"),
        engineCase("reload from an endless file",
            l -> l.engine.reloadFromFile(java.nio.file.Path.of("/dev/zero")),
            WeightedException.class, Status.LIMIT, "more than limits.max_config_bytes"),
        engineCase("advance past the clock's end", l -> l.engine.advanceNanos(Long.MAX_VALUE),
            WeightedException.class, Status.INVALID_ARGUMENT, "past its end"),
        engineCase("enormous endpoint count",
            l -> l.orders.setEndpoints(manyIds(65537), filled(65537, 1.0)),
            WeightedException.class, Status.LIMIT, "65537 endpoints exceed limits.max_endpoints_per_service = 4"),
        engineCase("latency above the configured limit", l -> l.orders.report("a", 60001, Outcome.SUCCESS),
            WeightedException.class, Status.INVALID_ARGUMENT, "in [0, 60000] (limits.max_latency_ms)"),
        javaCase("reload null", l -> l.engine.reload(null), NullPointerException.class, "configJson"));
  }

  @TestFactory
  Stream<DynamicTest> eachBadInputIsRefusedAndChangesNothing() {
    return cases().stream().map(c -> DynamicTest.dynamicTest(c.name(), () -> {
      try (Live live = new Live()) {
        String before = live.engine.snapshotJson();
        Throwable thrown = org.assertj.core.api.Assertions.catchThrowable(() -> c.call().accept(live));
        assertThat(thrown).as(c.name()).isInstanceOf(c.type()).hasMessageContaining(c.message());
        if (c.status() != null) {
          assertThat(((WeightedException) thrown).status()).isEqualTo(c.status());
        }
        assertThat(live.engine.snapshotJson()).as("state after " + c.name()).isEqualTo(before);
        assertThat(live.engine.drainEvents()).as("events after " + c.name()).isEmpty();
      }
    }));
  }

  @Test
  void aReportOnARemovedEndpointIsStaleAndCountedAsSuch() {
    try (Live live = new Live()) {
      long keyB = live.orders.endpointKey("b");
      live.orders.setEndpoints(new String[] {"a"}, new double[] {100});
      assertThatThrownBy(() -> live.orders.report(keyB, 1, Outcome.SUCCESS))
          .isInstanceOf(StaleEndpointException.class)
          .hasMessageContaining("is not in service \"orders\"");
      assertThat(live.engine.snapshotJson()).contains("\"stale_reports\":1");
    }
  }

  static String[] manyIds(int n) {
    String[] ids = new String[n];
    for (int i = 0; i < n; i++) {
      ids[i] = "e" + i;
    }
    return ids;
  }

  static double[] filled(int n, double v) {
    double[] w = new double[n];
    java.util.Arrays.fill(w, v);
    return w;
  }
}
