package io.weighted.jni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Monitor: the engine's state file read back through wt_monitor_* (the JNI glue's one place). */
class MonitorTest {
  @TempDir Path dir;

  private Engine engineWithFile(Path file) {
    String json = "{\"seed\": 1, \"export\": {\"state_file\": \""
        + file.toString().replace("\\", "\\\\") + "\", \"service_name\": \"orders-svc\"}}";
    return Engine.create(json, ClockMode.MANUAL);
  }

  @SuppressWarnings("unchecked")
  private static List<Object> list(Object o) {
    return (List<Object>) o;
  }

  @Test
  void readsWhatTheEngineWrote() {
    Path file = dir.resolve("orders.state");
    try (Engine engine = engineWithFile(file)) {
      Service svc = engine.service("orders");
      svc.setEndpoints(new String[] {"a", "b"}, new double[] {100, 100});
      for (int i = 0; i < 50; i++) {
        svc.report("a", 10.0, Outcome.SUCCESS);
        svc.report("b", 10.0, Outcome.SUCCESS);
      }
      engine.advance(Duration.ofSeconds(5));
      try (Monitor own = Monitor.of(engine); Monitor byPath = Monitor.open(file)) {
        Map<String, Object> info = Json.parseObject(own.infoJson());
        assertEquals("orders-svc", info.get("service"));
        assertEquals("running", info.get("state"));
        assertEquals(own.snapshotJson(), byPath.snapshotJson());
        Map<String, Object> snap = Json.parseObject(byPath.snapshotJson());
        Map<String, Object> service = (Map<String, Object>) list(snap.get("services")).get(0);
        assertEquals(2, list(service.get("endpoints")).size());
        Map<String, Object> events = Json.parseObject(byPath.eventsJson(0, 0));
        assertEquals(2, list(events.get("events")).size());
        double next = (Double) events.get("next");
        assertTrue(list(Json.parseObject(byPath.eventsJson((long) next, 0)).get("events")).isEmpty());
        Map<String, Object> history = Json.parseObject(byPath.historyJson(0, 0));
        assertEquals(1, list(history.get("points")).size());
        assertThrows(IllegalArgumentException.class, () -> byPath.eventsJson(-1, 0));
      }
    }
  }

  @Test
  void refusalsAreExceptionsWithTheirReason() throws IOException {
    try (Engine plain = Engine.create("{}", ClockMode.MANUAL)) {
      NotFoundException e = assertThrows(NotFoundException.class, () -> Monitor.of(plain));
      assertTrue(e.getMessage().contains("export.state_file"), e.getMessage());
    }
    assertThrows(ConfigException.class, () -> Monitor.open(dir.resolve("missing.state")));
    Path junk = Files.writeString(dir.resolve("junk.state"), "x".repeat(8192));
    WeightedException e = assertThrows(WeightedException.class, () -> Monitor.open(junk));
    assertEquals(Status.FORMAT, e.status());
    assertTrue(e.getMessage().contains("bad magic"), e.getMessage());
  }

  @Test
  void aClosedMonitorRefusesCalls() {
    try (Engine engine = engineWithFile(dir.resolve("c.state"))) {
      Monitor m = Monitor.of(engine);
      assertFalse(m.isClosed());
      m.close();
      m.close();
      assertTrue(m.isClosed());
      assertThrows(IllegalStateException.class, m::snapshotJson);
    }
  }
}
