package io.weighted.spring.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import io.weighted.jni.Engine;
import io.weighted.jni.Json;
import io.weighted.spring.EnableWeightedLoadBalancer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.cloud.client.loadbalancer.LoadBalanced;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.RestClient;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Mono;

/**
 * Real Spring Boot backends on loopback (Servlet on Tomcat, WebFlux on whichever server Boot
 * picks) with the auto-configured filter, and a Spring client (load-balanced RestClient and
 * WebClient through the weighted balancer) that reads their reports. A fault holds request
 * threads of one backend: its header says so before any request is slow.
 */
class BackendsTest {
  static final HttpClient HTTP = HttpClient.newHttpClient();
  static ConfigurableApplicationContext servlet;
  static ConfigurableApplicationContext reactive;

  /** A servlet backend whose /hold requests keep their Tomcat thread until released. */
  @SpringBootConfiguration
  @EnableAutoConfiguration
  @RestController
  static class ServletBackend {
    static volatile CountDownLatch release = new CountDownLatch(1);
    static volatile HikariDataSource pool;

    @GetMapping("/hello")
    String hello() {
      return "hello";
    }

    @GetMapping("/hold")
    String hold() throws InterruptedException {
      release.await(60, TimeUnit.SECONDS);
      return "held";
    }

    @Bean
    DataSource dataSource() {
      HikariDataSource h = new HikariDataSource();
      h.setJdbcUrl("jdbc:h2:mem:backend;DB_CLOSE_DELAY=-1");
      h.setMaximumPoolSize(4);
      pool = h;
      return h;
    }
  }

  @SpringBootConfiguration
  @EnableAutoConfiguration
  @RestController
  static class ReactiveBackend {
    @GetMapping("/hello")
    Mono<String> hello() {
      return Mono.just("hello");
    }
  }

  @SpringBootConfiguration
  @EnableAutoConfiguration
  @EnableWeightedLoadBalancer
  static class Client {
    @Bean
    @LoadBalanced
    RestClient.Builder restClient() {
      return RestClient.builder();
    }

    @Bean
    @LoadBalanced
    WebClient.Builder webClient() {
      return WebClient.builder();
    }
  }

  @BeforeAll
  static void start() {
    servlet = new SpringApplicationBuilder(ServletBackend.class)
        .web(WebApplicationType.SERVLET)
        .properties("server.port=0", "server.address=127.0.0.1", "server.tomcat.threads.max=8",
            "server.tomcat.threads.min-spare=8", "weighted.server.load-report.interval=20ms",
            "spring.main.banner-mode=off")
        .run();
    reactive = new SpringApplicationBuilder(ReactiveBackend.class)
        .web(WebApplicationType.REACTIVE)
        .properties("server.port=0", "server.address=127.0.0.1",
            "weighted.server.load-report.interval=20ms", "spring.main.banner-mode=off")
        .run();
  }

  @AfterAll
  static void stop() {
    ServletBackend.release.countDown();
    if (servlet != null) {
      servlet.close();
    }
    if (reactive != null) {
      reactive.close();
    }
  }

  static int port(ConfigurableApplicationContext c) {
    return Integer.parseInt(c.getEnvironment().getProperty("local.server.port"));
  }

  static String header(ConfigurableApplicationContext c, String path) throws Exception {
    HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + port(c) + path)).build(),
        HttpResponse.BodyHandlers.ofString());
    return r.headers().firstValue(LoadSampler.HEADER).orElse(null);
  }

  /** Polls until the condition holds: the sample is refreshed every 20 ms on the server. */
  static void await(BooleanSupplier condition, String what) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime()).as("timed out waiting for " + what).isLessThan(deadline);
      Thread.sleep(10);
    }
  }

  static BooleanSupplier headerContains(ConfigurableApplicationContext c, String text) {
    return () -> {
      try {
        String h = header(c, "/hello");
        return h != null && h.contains(text);
      } catch (Exception e) {
        return false;
      }
    };
  }

  @Test
  void everyResponseCarriesTheServersFigures() throws Exception {
    String h = header(servlet, "/hello");
    assertThat(h).startsWith("TEXT ").contains("mem_utilization=");
    assertThat(servlet.getBean(LoadReportAutoConfiguration.WebServerWatcher.class).server())
        .isEqualTo("tomcat");
    // With both on the class path, Boot 3 runs WebFlux on Tomcat and Boot 4 on Netty; either
    // way the WebFilter sends the server's pool. NettyBackendTest runs Netty without Tomcat.
    assertThat(header(reactive, "/hello")).startsWith("TEXT ").contains("mem_utilization=")
        .contains("named_metrics.thread_pool=");
    assertThat(reactive.getBean(LoadReportAutoConfiguration.WebServerWatcher.class).server())
        .isIn("tomcat", "netty");
    // A 404 gets the header too: every response, not only the application's.
    assertThat(header(servlet, "/nowhere")).startsWith("TEXT ");
    // The requests served so far, timed by either filter: the server's own latency.
    await(headerContains(servlet, "named_metrics.latency_ms="), "the servlet's latency");
    await(headerContains(reactive, "named_metrics.latency_ms="), "the WebFlux latency");
  }

  @Test
  void heldThreadsAndConnectionsShowBeforeAnyRequestIsSlow() throws Exception {
    ServletBackend.release = new CountDownLatch(1);
    List<CompletableFuture<HttpResponse<String>>> held = new ArrayList<>();
    List<Connection> connections = new ArrayList<>();
    try {
      for (int i = 0; i < 5; i++) {
        held.add(HTTP.sendAsync(HttpRequest.newBuilder(URI.create(
            "http://127.0.0.1:" + port(servlet) + "/hold")).build(),
            HttpResponse.BodyHandlers.ofString()));
      }
      for (int i = 0; i < 3; i++) {
        connections.add(ServletBackend.pool.getConnection());
      }
      // 5 held + the request that reads the header: 6 of Tomcat's 8 threads; 3 of Hikari's 4.
      await(headerContains(servlet, "named_metrics.thread_pool=0.7500"), "thread_pool=0.75");
      await(headerContains(servlet, "named_metrics.connection_pool=0.7500"),
          "connection_pool=0.75");
    } finally {
      ServletBackend.release.countDown();
      for (Connection c : connections) {
        c.close();
      }
    }
    for (var f : held) {
      assertThat(f.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
    }
    await(headerContains(servlet, "named_metrics.thread_pool=0.1250"), "thread_pool=0.125");
  }

  @Test
  void aSpringClientReadsEveryReportAndShiftsAwayFromTheSaturatedPool() throws Exception {
    String servletUri = "http://127.0.0.1:" + port(servlet);
    String reactiveUri = "http://127.0.0.1:" + port(reactive);
    // weighted-server-it.json turns the capacity guard off: both backends run in this test's
    // JVM and report its process CPU, which on a busy machine reads near 1 for both, so the
    // guard would (rightly, for what it reads) hold the cut this test is about.
    try (ConfigurableApplicationContext client = new SpringApplicationBuilder(Client.class)
        .web(WebApplicationType.NONE)
        .properties("weighted.loadbalancer.config=classpath:weighted-server-it.json",
            "weighted.loadbalancer.clock=manual",
            "spring.cloud.loadbalancer.cache.enabled=false", "spring.main.banner-mode=off",
            "spring.cloud.discovery.client.simple.instances.backend[0].uri=" + servletUri,
            "spring.cloud.discovery.client.simple.instances.backend[1].uri=" + reactiveUri)
        .run()) {
      RestClient rest = client.getBean(RestClient.Builder.class).baseUrl("http://backend").build();
      WebClient web = client.getBean(WebClient.Builder.class).baseUrl("http://backend").build();
      Engine engine = client.getBean(Engine.class);
      Runnable send = () -> {
        for (int i = 0; i < 20; i++) {
          rest.get().uri("/hello").retrieve().toBodilessEntity();
          web.get().uri("/hello").retrieve().toBodilessEntity().block(Duration.ofSeconds(30));
        }
      };
      send.run();
      engine.advance(Duration.ofSeconds(1));
      Map<?, ?> healthy = endpoint(engine, "127.0.0.1:" + port(servlet));
      assertThat(healthy.get("state")).as("%s", healthy).isEqualTo("healthy");
      long reports = 0;
      for (String id : new String[] {"127.0.0.1:" + port(servlet), "127.0.0.1:" + port(reactive)}) {
        Map<?, ?> ep = endpoint(engine, id);
        reports += ((Number) ((Map<?, ?>) ep.get("server_report")).get("reports")).longValue();
        assertThat(((Map<?, ?>) ((Map<?, ?>) ep.get("window")).get("resource_origin"))
            .get("memory")).isEqualTo("server");
      }
      assertThat(reports).isEqualTo(40);  // every response, through both clients
      engine.advance(Duration.ofSeconds(3));  // the healthy samples leave the 2 s window

      // The fault: 7 of the servlet backend's 8 threads hang. A request that gets the last
      // thread is as fast as before; only the server's report shows the pool is full.
      ServletBackend.release = new CountDownLatch(1);
      List<CompletableFuture<HttpResponse<String>>> held = new ArrayList<>();
      try {
        for (int i = 0; i < 7; i++) {
          held.add(HTTP.sendAsync(HttpRequest.newBuilder(URI.create(servletUri + "/hold"))
              .build(), HttpResponse.BodyHandlers.ofString()));
        }
        await(headerContains(servlet, "named_metrics.thread_pool=1.000"), "a full pool");
        send.run();
        engine.advance(Duration.ofSeconds(1));
        Map<?, ?> sick = endpoint(engine, "127.0.0.1:" + port(servlet));
        Map<?, ?> window = (Map<?, ?>) sick.get("window");
        assertThat(((Map<?, ?>) window.get("server_resources")).get("thread_pool"))
            .isEqualTo(1.0);
        assertThat(sick.get("state")).as("%s", sick).isEqualTo("degraded");
        assertThat(((Number) sick.get("effective_weight")).doubleValue()).as("%s", sick)
            .isLessThan(0.9);
        // Its latency did not move: the latency rule did not fire, the pool rule did.
        List<?> rules = (List<?>) sick.get("rules");
        for (Object r : rules) {
          Map<?, ?> rule = (Map<?, ?>) r;
          boolean fired = Boolean.TRUE.equals(rule.get("fired"));
          assertThat(fired).as("%s", rule).isEqualTo("thread_pool".equals(rule.get("metric")));
        }
      } finally {
        ServletBackend.release.countDown();
      }
      for (var f : held) {
        assertThat(f.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
      }
    }
  }

  static Map<?, ?> endpoint(Engine engine, String id) {
    for (Object s : (List<?>) Json.parseObject(engine.snapshotJson()).get("services")) {
      for (Object e : (List<?>) ((Map<?, ?>) s).get("endpoints")) {
        if (id.equals(((Map<?, ?>) e).get("id"))) {
          return (Map<?, ?>) e;
        }
      }
    }
    throw new AssertionError("no endpoint " + id + " in " + engine.snapshotJson());
  }
}
