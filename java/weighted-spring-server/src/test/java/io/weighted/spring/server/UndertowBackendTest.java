package io.weighted.spring.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * A Servlet backend on Undertow: its request threads are the XNIO worker pool, read through the
 * worker's own view. Boot 3 only (Boot 4 has no Undertow): run by the pom's undertow profile in
 * its own surefire execution with Tomcat left off the class path.
 */
class UndertowBackendTest {
  static final HttpClient HTTP = HttpClient.newHttpClient();

  @SpringBootConfiguration
  @EnableAutoConfiguration
  @RestController
  static class Backend {
    static volatile CountDownLatch release = new CountDownLatch(1);

    @GetMapping("/hello")
    String hello() {
      return "hello";
    }

    @GetMapping("/hold")
    String hold() throws InterruptedException {
      release.await(60, TimeUnit.SECONDS);
      return "held";
    }
  }

  static String header(int port) throws Exception {
    HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + port + "/hello")).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(r.body()).isEqualTo("hello");
    return r.headers().firstValue(LoadSampler.HEADER).orElse("");
  }

  /** Polls until the header shows `text`: the sample is refreshed every 20 ms on the server. */
  static void awaitHeader(int port, String text) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    String h = header(port);
    while (!h.contains(text)) {
      assertThat(System.nanoTime()).as("waiting for %s, last header %s", text, h)
          .isLessThan(deadline);
      Thread.sleep(10);
      h = header(port);
    }
  }

  @Test
  void anUndertowBackendReportsItsWorkerThreads() throws Exception {
    try (ConfigurableApplicationContext app = new SpringApplicationBuilder(Backend.class)
        .web(WebApplicationType.SERVLET)
        .properties("server.port=0", "server.address=127.0.0.1",
            "server.undertow.threads.worker=8", "weighted.server.load-report.interval=20ms",
            "spring.main.banner-mode=off")
        .run()) {
      int port = Integer.parseInt(app.getEnvironment().getProperty("local.server.port"));
      assertThat(app.getBean(LoadReportAutoConfiguration.WebServerWatcher.class).server())
          .isEqualTo("undertow");
      assertThat(header(port)).startsWith("TEXT ").contains("mem_utilization=")
          .contains("named_metrics.thread_pool=");

      Backend.release = new CountDownLatch(1);
      List<CompletableFuture<HttpResponse<String>>> held = new ArrayList<>();
      try {
        for (int i = 0; i < 5; i++) {
          held.add(HTTP.sendAsync(HttpRequest.newBuilder(URI.create(
              "http://127.0.0.1:" + port + "/hold")).build(),
              HttpResponse.BodyHandlers.ofString()));
        }
        // 5 held + the request that reads the header: 6 of the 8 workers.
        awaitHeader(port, "named_metrics.thread_pool=0.7500");
      } finally {
        Backend.release.countDown();
      }
      for (var f : held) {
        assertThat(f.get(30, TimeUnit.SECONDS).body()).isEqualTo("held");
      }
      // Released: only the reader's own worker is busy again.
      awaitHeader(port, "named_metrics.thread_pool=0.1250");
    }
  }
}
