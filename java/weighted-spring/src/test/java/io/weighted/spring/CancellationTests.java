package io.weighted.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import io.weighted.jni.Engine;
import io.weighted.jni.Json;
import io.weighted.jni.Outcome;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.cloud.client.loadbalancer.LoadBalanced;
import org.springframework.context.annotation.Bean;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.Disposable;
import reactor.netty.DisposableServer;

/**
 * Exchanges their callers give up on are timeouts of the endpoint they were sent to: a
 * {@code timeout()} on the result, a disposed subscription, and a server whose own client hung up
 * while it waited on the backend. The backend is a real loopback server that answers only when
 * the test lets it (never, for these requests); the engine runs on the manual clock in the
 * load-aware mode, so its in-flight count can only return to 0 through the cancellation (the
 * engine's own expiry needs controller cycles, which the test does not run).
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.NONE,
    classes = CancellationTests.App.class,
    properties = {
        "weighted.loadbalancer.config=classpath:weighted-loadaware.json",
        "weighted.loadbalancer.clock=manual",
        "spring.cloud.loadbalancer.cache.enabled=false",
    })
class CancellationTests {
  static final Backend BACKEND = new Backend();

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
    Heard heard() {
      return new Heard();
    }
  }

  /** Hears outcomes as a circuit breaker would (S-P3: one data source). */
  static final class Heard implements OutcomeListener {
    final List<Outcome> outcomes = new CopyOnWriteArrayList<>();
    final List<String> cancels = new CopyOnWriteArrayList<>();

    @Override
    public void onOutcome(String serviceId, String endpointId, double latencyMs, Outcome outcome) {
      outcomes.add(outcome);
    }

    @Override
    public void onCancel(String serviceId, String endpointId) {
      cancels.add(endpointId);
    }
  }

  @DynamicPropertySource
  static void backends(DynamicPropertyRegistry registry) {
    registry.add("spring.cloud.discovery.client.simple.instances.backend[0].uri",
        () -> "http://127.0.0.1:" + BACKEND.port());
  }

  @AfterAll
  static void stopBackend() {
    BACKEND.stop();
  }

  @Autowired
  WebClient.Builder builder;

  @Autowired
  Engine engine;

  @Autowired
  Heard heard;

  WebClient web;

  @BeforeEach
  void setUp() {
    web = builder.baseUrl("http://backend").build();
    heard.outcomes.clear();
    heard.cancels.clear();
    BACKEND.received.drainPermits();
  }

  @Test
  void aTimeoutOperatorIsReportedAsATimeout() {
    long before = total("timeout");
    assertThatThrownBy(() -> web.get().uri("/hang").retrieve().bodyToMono(String.class)
        .timeout(Duration.ofMillis(300)).block(Duration.ofSeconds(30)))
        .hasCauseInstanceOf(TimeoutException.class);
    // The timeout operator cancels upstream before it signals the error: nothing to wait for.
    assertThat(inflight()).isZero();
    assertThat(total("timeout")).isEqualTo(before + 1);
    assertThat(heard.outcomes).containsExactly(Outcome.TIMEOUT);
  }

  @Test
  void aDisposedSubscriptionIsReportedAsATimeout() throws InterruptedException {
    long before = total("timeout");
    Disposable d = web.get().uri("/hang").retrieve().bodyToMono(String.class).subscribe();
    assertThat(BACKEND.received.tryAcquire(30, TimeUnit.SECONDS)).isTrue();  // it was sent
    assertThat(inflight()).isEqualTo(1);
    d.dispose();
    assertThat(inflight()).isZero();
    assertThat(total("timeout")).isEqualTo(before + 1);
    assertThat(heard.outcomes).containsExactly(Outcome.TIMEOUT);
  }

  @Test
  void aSubscriptionCancelledBeforeAnythingWasSentCountsNothing() {
    long before = total("timeout") + total("success");
    assertThat(web.get().uri("/hang").retrieve().bodyToMono(String.class).flux().take(0)
        .collectList().block(Duration.ofSeconds(30))).isEmpty();
    assertThat(inflight()).isZero();
    assertThat(total("timeout") + total("success")).isEqualTo(before);
    assertThat(heard.outcomes).isEmpty();
  }

  @Test
  void aClientThatHangsUpOnTheServerMakesItsBackendCallATimeout() throws Exception {
    long before = total("timeout");
    // A reactive server in front of the backend, as a WebFlux application would be.
    DisposableServer front = reactor.netty.http.server.HttpServer.create()
        .host("127.0.0.1").port(0)
        .route(r -> r.get("/proxy", (req, res) -> res.sendString(
            web.get().uri("/hang").retrieve().bodyToMono(String.class))))
        .bindNow(Duration.ofSeconds(30));
    try (Socket client = new Socket("127.0.0.1", front.port())) {
      client.getOutputStream().write(
          "GET /proxy HTTP/1.1\r\nHost: front\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
      client.getOutputStream().flush();
      assertThat(BACKEND.received.tryAcquire(30, TimeUnit.SECONDS)).isTrue();
      assertThat(inflight()).isEqualTo(1);
    }  // the client hangs up; the server cancels its response, and with it the backend call
    try {
      // The server learns of the hang-up on its event loop: wait for it, bounded.
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (total("timeout") == before && System.nanoTime() < deadline) {
        Thread.sleep(5);
      }
      assertThat(total("timeout")).isEqualTo(before + 1);
      assertThat(inflight()).isZero();
    } finally {
      front.disposeNow(Duration.ofSeconds(10));
    }
  }

  private Map<?, ?> endpoint() {
    for (Object s : (List<?>) Json.parseObject(engine.snapshotJson()).get("services")) {
      if ("backend".equals(((Map<?, ?>) s).get("name"))) {
        return (Map<?, ?>) ((List<?>) ((Map<?, ?>) s).get("endpoints")).get(0);
      }
    }
    throw new AssertionError("no service 'backend' in the engine");
  }

  private long inflight() {
    return ((Number) endpoint().get("inflight")).longValue();
  }

  private long total(String outcome) {
    for (Object s : (List<?>) Json.parseObject(engine.snapshotJson()).get("services")) {
      if ("backend".equals(((Map<?, ?>) s).get("name"))) {
        List<?> eps = (List<?>) ((Map<?, ?>) s).get("endpoints");
        return eps.isEmpty() ? 0
            : ((Number) ((Map<?, ?>) ((Map<?, ?>) eps.get(0)).get("totals")).get(outcome))
                .longValue();
      }
    }
    return 0;  // no call has reached the balancer yet
  }

  /** A loopback backend whose /hang answers after 60 s at the earliest (these tests never wait). */
  static final class Backend {
    final HttpServer server;
    final Semaphore received = new Semaphore(0);
    final CountDownLatch stopping = new CountDownLatch(1);

    Backend() {
      try {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
      } catch (IOException e) {
        throw new IllegalStateException(e);
      }
      server.setExecutor(Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "hanging-backend");
        t.setDaemon(true);
        return t;
      }));
      server.createContext("/hang", exchange -> {
        received.release();
        try {
          stopping.await(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        byte[] body = "late".getBytes(StandardCharsets.UTF_8);
        exchange.sendResponseHeaders(200, body.length);
        try (OutputStream out = exchange.getResponseBody()) {
          out.write(body);
        } catch (IOException gone) {
          // the client stopped waiting long ago
        }
      });
      server.start();
    }

    int port() {
      return server.getAddress().getPort();
    }

    void stop() {
      stopping.countDown();
      server.stop(0);
    }
  }
}
