package com.example.ribbon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weighted.jni.Json;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Runs the example as README.md describes it (the main's two rounds, against real loopback
 * backends) and checks what the README says they show. Plain JUnit: the example declares only
 * what it needs.
 */
class RibbonExampleTest {
  @Test
  void theRuleSpreadsCallsTheEngineSeesEachOneAndTrafficLeavesAFailingBackend() throws Exception {
    try (ToyBackends backends = ToyBackends.start(3)) {
      RibbonExample demo = new RibbonExample(backends.listOfServers());
      assertEquals("demo", demo.rule().getService().name());

      Map<String, Integer> healthy = demo.round(300);
      assertTrue(healthy.keySet().stream().allMatch(a -> a.matches("backend [012] \\(ok\\)")),
          healthy.toString());
      assertEquals(300, total(demo, "success"), "every call reached the engine: " + healthy);

      backends.setFailing(1, true);
      Map<String, Integer> sick = demo.round(300);
      int fails = sick.getOrDefault("backend 1 (fail)", 0);
      // The failure term of the load-aware picker avoids backend 1 after its first 503s. Five
      // runs here gave it 1-4 of the 300 calls; a third of them would be 100.
      assertTrue(fails >= 1 && fails <= 30, sick.toString());
      assertEquals(fails, total(demo, "http_5xx"), sick.toString());
      assertEquals(600 - fails, total(demo, "success"), sick.toString());
    }
  }

  static long total(RibbonExample demo, String outcome) {
    long n = 0;
    for (Object s : (List<?>) Json.parseObject(demo.rule().getEngine().snapshotJson())
        .get("services")) {
      for (Object e : (List<?>) ((Map<?, ?>) s).get("endpoints")) {
        n += ((Number) ((Map<?, ?>) ((Map<?, ?>) e).get("totals")).get(outcome)).longValue();
      }
    }
    return n;
  }
}
