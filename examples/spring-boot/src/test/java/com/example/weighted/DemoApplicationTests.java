package com.example.weighted;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.ServerSocket;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.autoconfigure.actuate.observability.AutoConfigureObservability;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.client.TestRestTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** The example starts, balances over its backends, and exposes the gauges to Prometheus. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = "weighted.loadbalancer.metrics-refresh=100ms")
@AutoConfigureObservability  // tests turn metrics export off unless asked
class DemoApplicationTests {

  @DynamicPropertySource
  static void ports(DynamicPropertyRegistry registry) throws IOException {
    for (int i = 0; i < 3; i++) {
      try (ServerSocket s = new ServerSocket(0)) {
        int port = s.getLocalPort();
        registry.add("demo.backends.port" + i, () -> port);
      }
    }
  }

  @Autowired
  TestRestTemplate http;

  @Test
  void callsAreBalancedAndGaugesAreExported() {
    for (int i = 0; i < 30; i++) {
      assertThat(http.getForObject("/call", String.class)).startsWith("backend ");
    }
    // The gauges follow the engine's snapshot, re-read every 100 ms here: wait (bounded) for the
    // first read after the endpoints appeared.
    String prometheus = "";
    for (long end = System.nanoTime() + 10_000_000_000L; System.nanoTime() < end; ) {
      prometheus = http.getForObject("/actuator/prometheus", String.class);
      if (prometheus.contains("weighted_endpoint_weight{")) {
        break;
      }
      Thread.onSpinWait();
    }
    assertThat(prometheus).contains("weighted_endpoint_weight{endpoint=\"127.0.0.1:");
    assertThat(prometheus).contains("weighted_endpoint_state{");
    assertThat(prometheus).contains("weighted_endpoint_penalty{");
  }
}
