package io.weighted.spring.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/**
 * WebFlux on Netty: run by its own surefire execution with Tomcat left off the class path (the
 * pom says so), since Boot starts Tomcat whenever it can.
 */
class NettyBackendTest {
  @SpringBootConfiguration
  @EnableAutoConfiguration
  @RestController
  static class Backend {
    @GetMapping("/hello")
    Mono<String> hello() {
      return Mono.just("hello");
    }
  }

  @Test
  void aNettyBackendReportsItsEventLoops() throws Exception {
    try (ConfigurableApplicationContext app = new SpringApplicationBuilder(Backend.class)
        .web(WebApplicationType.REACTIVE)
        .properties("server.port=0", "server.address=127.0.0.1", "spring.main.banner-mode=off")
        .run()) {
      int port = Integer.parseInt(app.getEnvironment().getProperty("local.server.port"));
      HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
          URI.create("http://127.0.0.1:" + port + "/hello")).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(r.body()).isEqualTo("hello");
      assertThat(app.getBean(LoadReportAutoConfiguration.WebServerWatcher.class).server())
          .isEqualTo("netty");
      // Idle loops: none has a backlog, so the pool reads 0 (not unknown).
      assertThat(r.headers().firstValue(LoadSampler.HEADER)).get().asString()
          .startsWith("TEXT ").contains("mem_utilization=")
          .contains("named_metrics.thread_pool=0.000");
    }
  }
}
