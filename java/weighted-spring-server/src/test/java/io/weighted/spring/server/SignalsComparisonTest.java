package io.weighted.spring.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.weighted.jni.Engine;
import io.weighted.spring.EnableWeightedLoadBalancer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.cloud.client.loadbalancer.LoadBalanced;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.RestClient;

/**
 * The same Spring client twice against the same two real backends and the same fault: one
 * engine reads the servers' load reports, the other runs on client-side signals only. The fault
 * holds the request threads of one backend: first all but one (the pool is full, yet a request
 * that gets the last thread is as fast as ever), then the last one too (its requests time out).
 * Both engines run on the manual clock and the test drives their cycles, so "earlier" is counted
 * in cycles, not read off a wall clock.
 *
 * <p>"Client-side signals only" is the same config with {@code load_report.max_age_ms} at 1: a
 * server's figure is a second old at every cycle the test drives, so the rules never read one,
 * while the client, its balancer and its header handling stay exactly the same. The latency
 * rule reads the window's mean, not its p99: with ten requests per endpoint in a window the p99
 * is the slowest one, and a single scheduler stall on a loaded machine fired it for the
 * client-only engine a cycle before any request failed.
 */
class SignalsComparisonTest {
  static final HttpClient HTTP = HttpClient.newHttpClient();
  static final int THREADS = 8;
  static final int REQUESTS_PER_CYCLE = 20;

  /** The backend the fault hits: /hold keeps its Tomcat thread until released. */
  @SpringBootConfiguration
  @EnableAutoConfiguration
  @RestController
  static class SickBackend {
    static final AtomicInteger holding = new AtomicInteger();
    static volatile CountDownLatch release = new CountDownLatch(1);

    @GetMapping("/hello")
    String hello() {
      return "hello";
    }

    @GetMapping("/hold")
    String hold() throws InterruptedException {
      holding.incrementAndGet();
      try {
        release.await(60, TimeUnit.SECONDS);
      } finally {
        holding.decrementAndGet();
      }
      return "held";
    }
  }

  @SpringBootConfiguration
  @EnableAutoConfiguration
  @RestController
  static class HealthyBackend {
    @GetMapping("/hello")
    String hello() {
      return "hello";
    }
  }

  @SpringBootConfiguration
  @EnableAutoConfiguration
  @EnableWeightedLoadBalancer
  static class Client {
    /** A request that waits for a thread longer than this fails, as a caller's deadline would. */
    @Bean
    @LoadBalanced
    RestClient.Builder restClient() {
      JdkClientHttpRequestFactory f = new JdkClientHttpRequestFactory();
      f.setReadTimeout(Duration.ofMillis(500));
      return RestClient.builder().requestFactory(f);
    }
  }

  static ConfigurableApplicationContext backend(Class<?> app) {
    return new SpringApplicationBuilder(app).web(WebApplicationType.SERVLET)
        .properties("server.port=0", "server.address=127.0.0.1",
            "server.tomcat.threads.max=" + THREADS, "server.tomcat.threads.min-spare=" + THREADS,
            "weighted.server.load-report.interval=20ms", "spring.main.banner-mode=off",
            "spring.datasource.generate-unique-name=true")
        .run();
  }

  static ConfigurableApplicationContext client(String config, String sick, String healthy) {
    return new SpringApplicationBuilder(Client.class).web(WebApplicationType.NONE)
        .properties("weighted.loadbalancer.config=classpath:" + config,
            "weighted.loadbalancer.clock=manual",
            "spring.cloud.loadbalancer.cache.enabled=false", "spring.main.banner-mode=off",
            "spring.cloud.discovery.client.simple.instances.backend[0].uri=" + sick,
            "spring.cloud.discovery.client.simple.instances.backend[1].uri=" + healthy)
        .run();
  }

  /** One client's view: its balancer, its engine, the errors its callers saw, its shift. */
  static final class Side {
    final String name;
    final RestClient rest;
    final Engine engine;
    int errors;
    final List<String> why = new ArrayList<>();
    int shiftedAt = -1;  // the first fault cycle after which the sick backend is not healthy

    Side(String name, ConfigurableApplicationContext c) {
      this.name = name;
      this.rest = c.getBean(RestClient.Builder.class).baseUrl("http://backend").build();
      this.engine = c.getBean(Engine.class);
    }

    void send() {
      try {
        rest.get().uri("/hello").retrieve().toBodilessEntity();
      } catch (RuntimeException e) {
        errors++;
        why.add(e.toString());
      }
    }

    void cycle(int n, String sickId) {
      engine.advance(Duration.ofSeconds(1));
      Map<?, ?> ep = BackendsTest.endpoint(engine, sickId);
      if (shiftedAt < 0 && !"healthy".equals(ep.get("state"))) {
        shiftedAt = n;
      }
    }
  }

  static void holdUntil(int threads, String sickUri, List<CompletableFuture<?>> held)
      throws InterruptedException {
    while (held.size() < threads) {
      held.add(HTTP.sendAsync(HttpRequest.newBuilder(URI.create(sickUri + "/hold")).build(),
          HttpResponse.BodyHandlers.ofString()));
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (SickBackend.holding.get() < threads) {
      assertThat(System.nanoTime()).as("%d threads held", threads).isLessThan(deadline);
      Thread.sleep(5);
    }
  }

  @Test
  void readingTheHeaderShiftsTrafficCyclesEarlierWithFewerErrors() throws Exception {
    SickBackend.release = new CountDownLatch(1);
    List<CompletableFuture<?>> held = new ArrayList<>();
    try (ConfigurableApplicationContext sick = backend(SickBackend.class);
         ConfigurableApplicationContext healthy = backend(HealthyBackend.class)) {
      String sickUri = "http://127.0.0.1:" + BackendsTest.port(sick);
      String healthyUri = "http://127.0.0.1:" + BackendsTest.port(healthy);
      String sickId = "127.0.0.1:" + BackendsTest.port(sick);
      try {
        compare(sick, sickUri, healthyUri, sickId, held);
      } finally {
        SickBackend.release.countDown();  // before the backend closes under its held requests
      }
      for (var f : held) {
        assertThat(((HttpResponse<?>) f.get(30, TimeUnit.SECONDS)).statusCode()).isEqualTo(200);
      }
    } finally {
      SickBackend.release.countDown();
    }
  }

  static void compare(ConfigurableApplicationContext sick, String sickUri, String healthyUri,
      String sickId, List<CompletableFuture<?>> held) throws Exception {
    try (ConfigurableApplicationContext withHeader =
             client("weighted-server-it.json", sickUri, healthyUri);
         ConfigurableApplicationContext clientOnly =
             client("weighted-client-signals-it.json", sickUri, healthyUri)) {
      Side header = new Side("header", withHeader);
      Side client = new Side("client-only", clientOnly);
      Side[] sides = {header, client};
      // Warm up (a cold JVM's first requests may miss the deadline: not counted), then let
      // the healthy samples leave the 2 s window.
      for (int i = 0; i < 2 * REQUESTS_PER_CYCLE; i++) {
        for (Side s : sides) {
          s.send();
        }
      }
      for (Side s : sides) {
        s.engine.advance(Duration.ofSeconds(3));
        assertThat(BackendsTest.endpoint(s.engine, sickId).get("state")).isEqualTo("healthy");
        s.errors = 0;
      }

      // Cycles 1-2: all threads but one held. Cycles 3-5: the last one too.
      for (int n = 1; n <= 5; n++) {
        if (n == 1) {
          holdUntil(THREADS - 1, sickUri, held);
          BackendsTest.await(BackendsTest.headerContains(sick,
              "named_metrics.thread_pool=1.000"), "a full pool in the header");
        } else if (n == 3) {
          holdUntil(THREADS, sickUri, held);
        }
        for (int i = 0; i < REQUESTS_PER_CYCLE; i++) {
          for (Side s : sides) {
            s.send();
          }
        }
        for (Side s : sides) {
          s.cycle(n, sickId);
        }
        if (n == 2) {
          // Until here no caller saw anything wrong: the pool was full, the requests fast.
          assertThat(header.errors).as("%s", header.why).isZero();
          assertThat(client.errors).as("%s", client.why).isZero();
        }
      }
      assertThat(header.shiftedAt).as("header engine shifted").isEqualTo(1);
      assertThat(client.shiftedAt).as("client-only engine shifted once requests failed")
          .isGreaterThan(0);
      assertThat(client.shiftedAt - header.shiftedAt).as("cycles earlier")
          .isGreaterThanOrEqualTo(2);
      assertThat(header.errors).as("errors: header %d, client-only %d", header.errors,
          client.errors).isLessThan(client.errors);
      // The client-only engine did parse the reports; it only never used them.
      Map<?, ?> ep = BackendsTest.endpoint(client.engine, sickId);
      assertThat(((Number) ((Map<?, ?>) ep.get("server_report")).get("reports")).longValue())
          .isPositive();
      System.out.printf("shifted after fault cycle: header %d, client-only %d; errors: header"
          + " %d, client-only %d%n", header.shiftedAt, client.shiftedAt, header.errors,
          client.errors);
    }
  }
}
