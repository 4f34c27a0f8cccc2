package com.example.weighted;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.web.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Walks through README.md as a reader would: starts the application as {@code mvn
 * spring-boot:run} does (its own application.yml and weighted.json: the default load-aware
 * picker, the real clock; only the ports are free ones instead of 8080 and 9001-9003), sends the
 * README's requests over HTTP, and checks each claim the README makes about what they show. The
 * README's commands and claims are quoted here and must stay in it word for word, so that neither
 * changes without the other.
 *
 * <p>The README promises what a user can rely on, not exact shares: those depend on timing, and
 * the default picker may change. The margins were set from five runs of this walkthrough on the
 * shared 2-core machine (load 4-6): after the fault backend 2 answered 194-198 of 200 calls and
 * 1-3 calls saw a 503; under the 8-at-a-time load after recovery both recovered backends had 10%
 * of a batch within 1-17 s; with the exact picker backend 2 had 47-58% of 400 calls.
 */
class ReadmeWalkthroughTests {
  static final String SICK_CALLS = "for i in $(seq 200); do curl -s localhost:8080/call; echo; done"
      + " | sort | uniq -c";
  static final String LOAD = "seq 400 | xargs -P 8 -I{} curl -s -w '\\n' localhost:8080/call"
      + " | sort | uniq -c";
  static final List<String> COMMANDS = List.of(
      "for i in $(seq 20); do curl -s localhost:8080/call; echo; done",
      LOAD,
      "curl -XPOST 'localhost:8080/demo/backends/0?mode=slow'",
      "curl -XPOST 'localhost:8080/demo/backends/1?mode=fail'",
      SICK_CALLS,
      "curl -s localhost:8080/actuator/prometheus | grep '^weighted_'",
      "curl -XPOST 'localhost:8080/demo/backends/0?mode=ok'",
      "curl -XPOST 'localhost:8080/demo/backends/1?mode=ok'",
      "mvn -q spring-boot:run"
          + " -Dspring-boot.run.arguments=--weighted.loadbalancer.config=classpath:weighted-exact.json");
  static final List<String> CLAIMS = List.of(
      "Every call is answered by one of the three backends",
      "at least 9 in 10 of these 200 calls go to backend 2",
      "at most a handful (10) get backend 1's 503",
      "within a minute both get at least 5% of a 400-call round again",
      "backend 2 (base weight 2) gets more calls than each of the others, about half",
      "weighted_endpoint_weight", "weighted_endpoint_base_weight", "weighted_endpoint_penalty",
      "weighted_endpoint_state", "weighted_service_panic");

  static final HttpClient HTTP = HttpClient.newBuilder()
      .connectTimeout(Duration.ofSeconds(10)).build();
  static final Pattern ANSWER = Pattern.compile("^backend (\\d) \\((\\w+)\\)$");

  ConfigurableApplicationContext app;
  String base;

  @BeforeAll
  static void theReadmeSaysWhatThisTestDoes() throws IOException {
    String readme = Files.readString(Path.of("README.md"));
    for (String s : COMMANDS) {
      assertThat(readme).as("README command").contains(s);
    }
    for (String s : CLAIMS) {
      assertThat(readme.replaceAll("\\s+", " ")).as("README claim").contains(s);
    }
  }

  @AfterEach
  void stopTheApp() {
    if (app != null) {
      app.close();
    }
  }

  /** {@code mvn spring-boot:run} with these arguments (and free ports). */
  void start(String... arguments) throws IOException {
    List<String> args = new ArrayList<>(List.of("--server.port=0"));
    for (int i = 0; i < 3; i++) {
      try (ServerSocket s = new ServerSocket(0)) {
        args.add("--demo.backends.port" + i + "=" + s.getLocalPort());
      }
    }
    args.addAll(List.of(arguments));
    app = SpringApplication.run(DemoApplication.class, args.toArray(new String[0]));
    base = "http://127.0.0.1:" + ((WebServerApplicationContext) app).getWebServer().getPort();
  }

  String send(String method, String path) {
    try {
      HttpRequest r = HttpRequest.newBuilder(URI.create(base + path))
          .method(method, HttpRequest.BodyPublishers.noBody())
          .timeout(Duration.ofSeconds(30)).build();
      return HTTP.send(r, HttpResponse.BodyHandlers.ofString()).body();
    } catch (IOException e) {
      throw new AssertionError(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  /** {@code n} calls of /call, {@code parallel} at a time: how often each answer came. */
  Map<String, Integer> calls(int n, int parallel) throws Exception {
    Map<String, Integer> answers = new TreeMap<>();
    ExecutorService pool = Executors.newFixedThreadPool(parallel);
    try {
      List<Future<String>> pending = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        pending.add(pool.submit(() -> send("GET", "/call")));
      }
      for (Future<String> f : pending) {
        answers.merge(f.get(), 1, Integer::sum);
      }
    } finally {
      pool.shutdown();
    }
    return answers;
  }

  /** Calls answered "backend {@code n} (...)". */
  static int by(Map<String, Integer> answers, int n) {
    int c = 0;
    for (Map.Entry<String, Integer> e : answers.entrySet()) {
      Matcher m = ANSWER.matcher(e.getKey());
      if (m.matches() && m.group(1).equals(String.valueOf(n))) {
        c += e.getValue();
      }
    }
    return c;
  }

  static int errors(Map<String, Integer> answers) {
    return answers.entrySet().stream().filter(e -> e.getKey().startsWith("error: "))
        .mapToInt(Map.Entry::getValue).sum();
  }

  @Test
  void theDefaultConfigWalkthrough() throws Exception {
    start();
    // Healthy: every call answered by a backend, whichever the picker chose.
    Map<String, Integer> first = calls(20, 1);
    assertThat(first.keySet()).allMatch(a -> a.matches("backend [012] \\(ok\\)"));
    Map<String, Integer> load = calls(400, 8);
    assertThat(load.keySet()).as("%s", load).allMatch(a -> a.matches("backend [012] \\(ok\\)"));
    assertThat(by(load, 0) + by(load, 1) + by(load, 2)).isEqualTo(400);

    // Backend 0 slow, backend 1 failing: traffic moves to backend 2 within a few calls.
    send("POST", "/demo/backends/0?mode=slow");
    send("POST", "/demo/backends/1?mode=fail");
    Map<String, Integer> sick = calls(200, 1);
    assertThat(by(sick, 2)).as("%s", sick).isGreaterThanOrEqualTo(180);
    assertThat(errors(sick)).as("%s", sick).isLessThanOrEqualTo(10);
    assertThat(sick.keySet()).allMatch(
        a -> a.matches("backend [02] \\((ok|slow)\\)") || a.startsWith("error: 503"));

    // The gauges are there for every endpoint.
    String prometheus = send("GET", "/actuator/prometheus");
    for (String g : List.of("weighted_endpoint_weight", "weighted_endpoint_base_weight",
        "weighted_endpoint_penalty", "weighted_endpoint_state")) {
      for (int i = 0; i < 3; i++) {
        String port = app.getEnvironment().getProperty("demo.backends.port" + i);
        assertThat(prometheus).containsPattern(
            "(?m)^" + g + "\\{[^}]*endpoint=\"127\\.0\\.0\\.1:" + port + "\"");
      }
    }
    assertThat(prometheus).contains("weighted_service_panic{");

    // Healthy again, under the README's load: both get calls again within a minute.
    send("POST", "/demo/backends/0?mode=ok");
    send("POST", "/demo/backends/1?mode=ok");
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    boolean back0 = false;
    boolean back1 = false;
    List<Map<String, Integer>> rounds = new ArrayList<>();
    while (!(back0 && back1) && System.nanoTime() < deadline) {
      Map<String, Integer> round = calls(400, 8);
      rounds.add(round);
      back0 |= by(round, 0) >= 20;
      back1 |= by(round, 1) >= 20;
    }
    assertThat(back0 && back1).as("rounds after recovery: %s", rounds).isTrue();
  }

  @Test
  void theExactPickerFollowsTheBaseWeights() throws Exception {
    start("--weighted.loadbalancer.config=classpath:weighted-exact.json");
    calls(20, 1);
    Map<String, Integer> load = calls(400, 8);
    assertThat(by(load, 2)).as("%s", load)
        .isGreaterThan(by(load, 0)).isGreaterThan(by(load, 1)).isBetween(140, 260);
  }
}
