package io.weighted.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import io.weighted.jni.Engine;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.cloud.client.loadbalancer.LoadBalanced;
import org.springframework.context.annotation.Bean;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestClientResponseException;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Real HTTP backends on loopback ports, called through a load-balanced WebClient and RestClient.
 * One backend turns slow, one answers 503: traffic moves to the healthy one, and comes back once
 * both recover. The engine runs on the manual clock, advanced by the test, so every controller
 * cycle happens at a known point. The latency rule is relative (mean latency over 1.5x the median
 * endpoint's, and over 120 ms): on a loaded machine every endpoint slows down together, and only
 * the one that is 250 ms slower than its peers is judged slow. The mean, not the p99: with ~20
 * requests per endpoint in a window the p99 is the slowest request, and one scheduler stall of a
 * healthy backend on a loaded machine (430 ms, seen in a run) then outweighs the slow one's 250.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.NONE,
    classes = FaultInjectionTests.App.class,
    properties = {
        "weighted.loadbalancer.config=classpath:weighted-fault-it.json",
        "weighted.loadbalancer.clock=manual",
        "spring.cloud.loadbalancer.cache.enabled=false",
    })
class FaultInjectionTests {
  static final int SLOW_MS = 250;
  static final List<Backend> BACKENDS = new ArrayList<>();

  static {
    for (int i = 0; i < 3; i++) {
      BACKENDS.add(new Backend("b" + i));
    }
  }

  @SpringBootConfiguration
  @EnableAutoConfiguration
  @EnableWeightedLoadBalancer
  static class App {
    @Bean
    @LoadBalanced
    WebClient.Builder loadBalancedWebClient() {
      return WebClient.builder();
    }

    @Bean
    @LoadBalanced
    RestClient.Builder loadBalancedRestClient() {
      return RestClient.builder();
    }
  }

  @DynamicPropertySource
  static void backends(DynamicPropertyRegistry registry) {
    for (int i = 0; i < BACKENDS.size(); i++) {
      int port = BACKENDS.get(i).port();
      registry.add("spring.cloud.discovery.client.simple.instances.backend[" + i + "].uri",
          () -> "http://127.0.0.1:" + port);
    }
  }

  @AfterAll
  static void stopBackends() {
    BACKENDS.forEach(Backend::stop);
  }

  @Autowired
  WebClient.Builder webClientBuilder;

  @Autowired
  RestClient.Builder restClientBuilder;

  @Autowired
  Engine engine;

  @Test
  void trafficMovesAwayFromSlowAnd5xxBackendsAndComesBack() {
    WebClient web = webClientBuilder.baseUrl("http://backend").build();
    RestClient rest = restClientBuilder.baseUrl("http://backend").build();

    // Warm-up (class loading, connection set-up can exceed the threshold), then let its
    // samples leave the 2 s window and any cut weight step back up.
    send(web, rest, 12);
    engine.advance(Duration.ofSeconds(6));
    reset();
    send(web, rest, 90);
    assertThat(hits()).as(this::engineState).allSatisfy(h -> assertThat(h).isBetween(15, 45));
    // The healthy samples leave the 2 s window (no cycle changes a weight on none), so the fault
    // is judged on the fault's own requests.
    engine.advance(Duration.ofSeconds(3));

    // Fault: b1 turns slow, b2 answers 503. One controller cycle later both are cut to 0.2.
    BACKENDS.get(1).slow = true;
    BACKENDS.get(2).failing = true;
    send(web, rest, 60);
    engine.advance(Duration.ofSeconds(1));
    reset();
    send(web, rest, 100);
    List<Integer> h = hits();
    // Weights 1 : 0.2 : 0.2, so b0 expects 71 of 100 and each sick one 14.
    assertThat(h.get(0)).as(this::engineState).isGreaterThanOrEqualTo(55);
    assertThat(h.get(1)).as(this::engineState).isLessThanOrEqualTo(25);
    assertThat(h.get(2)).as(this::engineState).isLessThanOrEqualTo(25);
    assertThat(h.get(1) + h.get(2)).isPositive();  // still a trickle: recovery stays observable

    // Recovery: once the bad samples leave the window, weights step back up (0.5 per cycle).
    BACKENDS.get(1).slow = false;
    BACKENDS.get(2).failing = false;
    for (int round = 0; round < 6; round++) {
      send(web, rest, 40);
      engine.advance(Duration.ofSeconds(1));
    }
    reset();
    send(web, rest, 90);
    assertThat(hits()).as(this::engineState).allSatisfy(x -> assertThat(x).isBetween(15, 45));
  }

  /** For failure messages: hits, and per endpoint what the engine saw and decided. */
  private String engineState() {
    StringBuilder b = new StringBuilder("hits " + hits() + "; engine:");
    for (Object s : (List<?>) io.weighted.jni.Json.parseObject(engine.snapshotJson()).get("services")) {
      for (Object e : (List<?>) ((java.util.Map<?, ?>) s).get("endpoints")) {
        java.util.Map<?, ?> ep = (java.util.Map<?, ?>) e;
        java.util.Map<?, ?> w = (java.util.Map<?, ?>) ep.get("window");
        b.append(String.format(" [%s %s weight=%s penalty=%s mean=%s p99=%s errors=%s n=%s]",
            ep.get("id"), ep.get("state"), ep.get("effective_weight"), ep.get("penalty"),
            w.get("mean_ms"), w.get("p99_ms"), w.get("error_rate"), w.get("requests")));
      }
    }
    return b.toString();
  }

  /** Half the calls through WebClient (6 at a time), half through RestClient. */
  private static void send(WebClient web, RestClient rest, int n) {
    Flux.range(0, n / 2)
        .flatMap(i -> web.get().uri("/hello").exchangeToMono(r -> r.releaseBody().thenReturn(1))
            .onErrorResume(e -> Mono.just(0)), 6)
        .blockLast(Duration.ofSeconds(60));
    for (int i = 0; i < n - n / 2; i++) {
      try {
        rest.get().uri("/hello").retrieve().toBodilessEntity();
      } catch (RestClientResponseException expected) {
        // the 503s of the failing backend
      }
    }
  }

  private static void reset() {
    BACKENDS.forEach(b -> b.hits.set(0));
  }

  private static List<Integer> hits() {
    return BACKENDS.stream().map(b -> b.hits.get()).toList();
  }

  /** A JDK HttpServer on 127.0.0.1 with an ephemeral port; slow and failing are switches. */
  static final class Backend {
    final String name;
    final HttpServer server;
    final AtomicInteger hits = new AtomicInteger();
    volatile boolean slow;
    volatile boolean failing;

    Backend(String name) {
      this.name = name;
      try {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
      } catch (IOException e) {
        throw new IllegalStateException(e);
      }
      server.setExecutor(Executors.newCachedThreadPool());
      server.createContext("/hello", exchange -> {
        hits.incrementAndGet();
        if (slow) {
          try {
            Thread.sleep(SLOW_MS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }
        byte[] body = (name + (failing ? " failing" : " ok")).getBytes(StandardCharsets.UTF_8);
        exchange.sendResponseHeaders(failing ? 503 : 200, body.length);
        try (OutputStream out = exchange.getResponseBody()) {
          out.write(body);
        }
      });
      server.start();
    }

    int port() {
      return server.getAddress().getPort();
    }

    void stop() {
      server.stop(0);
    }
  }
}
