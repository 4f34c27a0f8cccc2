package com.example.weighted;

import static org.assertj.core.api.Assertions.assertThat;

import io.weighted.jni.Monitor;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.web.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The state store end to end, across processes: this JVM runs the example application (its real
 * loopback backends, the real clock) with {@code export.state_file} set and
 * {@code /actuator/weighted} exposed, under load from 8 client threads, with backend 1 answering
 * 503s. A separate Python process then runs {@code tests/python/spring_console_check.py}, which
 * reads the file with {@code weighted.attach}, starts the console as a third process attached to
 * the file and then to the actuator URL, and checks in headless Chromium that the page shows the
 * application's endpoints, their shares and the failing backend's weight cut (screenshots in
 * build/test-artifacts).
 *
 * <p>The Python interpreter is the system property {@code weighted.python} (the Makefile passes
 * its PYTHON, whose environment has the weighted package, pytest and selenium), else
 * {@code python3}. Without one that can run the check, this test fails: it is not skipped.
 */
class ConsoleEndToEndTests {
  static final HttpClient HTTP = HttpClient.newBuilder()
      .connectTimeout(Duration.ofSeconds(10)).build();
  static final Path REPO = Path.of("../..").toAbsolutePath().normalize();

  @TempDir
  Path dir;
  ConfigurableApplicationContext app;
  ExecutorService load;
  final AtomicBoolean loading = new AtomicBoolean(true);
  final AtomicLong answered = new AtomicLong();

  @AfterEach
  void stop() throws InterruptedException {
    loading.set(false);
    if (load != null) {
      load.shutdownNow();
      assertThat(load.awaitTermination(60, TimeUnit.SECONDS)).as("load threads ended").isTrue();
    }
    if (app != null) {
      app.close();
    }
  }

  String send(String base, String method, String path) throws IOException, InterruptedException {
    HttpRequest r = HttpRequest.newBuilder(URI.create(base + path))
        .method(method, HttpRequest.BodyPublishers.noBody())
        .timeout(Duration.ofSeconds(30)).build();
    return HTTP.send(r, HttpResponse.BodyHandlers.ofString()).body();
  }

  @Test
  void theConsoleInAnotherProcessShowsTheApplicationsEndpointsSharesAndEvents() throws Exception {
    Path stateFile = dir.resolve("weighted-demo.state");
    Path config = dir.resolve("weighted.json");
    // The example's own weighted.json plus the state file.
    String example = Files.readString(Path.of("src/main/resources/weighted.json"));
    Files.writeString(config, example.replaceFirst("\\{", "{\n  \"export\": {\"state_file\": \""
        + stateFile + "\", \"service_name\": \"weighted-demo\"},"));
    List<String> args = new ArrayList<>(List.of("--server.port=0",
        "--weighted.loadbalancer.config=file:" + config,
        "--management.endpoints.web.exposure.include=health,weighted"));
    List<String> ports = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      try (ServerSocket s = new ServerSocket(0)) {
        ports.add(String.valueOf(s.getLocalPort()));
        args.add("--demo.backends.port" + i + "=" + s.getLocalPort());
      }
    }
    app = SpringApplication.run(DemoApplication.class, args.toArray(new String[0]));
    String base = "http://127.0.0.1:" + ((WebServerApplicationContext) app).getWebServer().getPort();

    send(base, "POST", "/demo/backends/1?mode=fail");
    load = Executors.newFixedThreadPool(8);
    for (int i = 0; i < 8; i++) {
      load.submit(() -> {
        while (loading.get() && !Thread.currentThread().isInterrupted()) {
          try {
            send(base, "GET", "/call");
            answered.incrementAndGet();
          } catch (InterruptedException e) {
            return null;
          } catch (IOException e) {
            // A call that failed is load too; the app's answer is not what this test checks.
          }
        }
        return null;
      });
    }

    // The engine exists once the first call went through; wait until it cut backend 1's weight
    // for its errors and wrote that to the file (polled, with a deadline): a weight change or,
    // since the graded error rule gives a backend failing every call its full penalty, an
    // isolation, judged on the few 503s the load-aware picker still sends it.
    String failing = "127.0.0.1:" + ports.get(1);
    long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
    String last = "";
    boolean cut = false;
    while (!cut && System.nanoTime() < deadline) {
      if (Files.exists(stateFile)) {
        try (Monitor m = Monitor.open(stateFile)) {
          last = m.eventsJson(0, 500);
        }
        cut = Arrays.stream(last.split("\\{\"n\":")).anyMatch(e -> (e.contains("\"weight_changed\"")
            || e.contains("\"isolated\"")) && e.contains("\"endpoint\":\"" + failing + "\"")
            && e.contains("\"error_rate\""));
      }
      if (!cut) {
        Thread.sleep(100);
      }
    }
    assertThat(cut).as("a cut (weight or isolation) of %s for error_rate in %s: %s", failing, stateFile, last)
        .isTrue();

    String python = System.getProperty("weighted.python", "python3");
    Path artifacts = REPO.resolve("build/test-artifacts");
    for (String shot : List.of("console-spring-state-file.png", "console-spring-actuator.png")) {
      Files.deleteIfExists(artifacts.resolve(shot));
    }
    ProcessBuilder pb = new ProcessBuilder(python, "-m", "pytest", "-q", "-p", "no:cacheprovider",
        "tests/python/spring_console_check.py")
        .directory(REPO.toFile())
        .redirectErrorStream(true);
    pb.environment().put("WT_E2E_STATE_FILE", stateFile.toString());
    pb.environment().put("WT_E2E_ACTUATOR", base + "/actuator/weighted");
    pb.environment().put("WT_E2E_SERVICE", "backend");
    pb.environment().put("WT_E2E_ENDPOINTS",
        String.join(",", ports.stream().map(p -> "127.0.0.1:" + p).toList()));
    pb.environment().put("WT_E2E_FAILING", failing);
    pb.environment().put("WT_E2E_ARTIFACTS", artifacts.toString());
    Path log = dir.resolve("check.log");
    pb.redirectOutput(log.toFile());
    Process check = pb.start();
    boolean ended = check.waitFor(300, TimeUnit.SECONDS);
    if (!ended) {
      check.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
    }
    String output = Files.readString(log, StandardCharsets.UTF_8);
    System.out.println(output);
    assertThat(ended).as("the Python check ended within 300 s:\n%s", output).isTrue();
    assertThat(check.exitValue()).as("pytest spring_console_check.py:\n%s", output).isZero();
    assertThat(output).contains("3 passed");
    assertThat(answered.get()).as("calls answered under load").isGreaterThan(100);
    assertThat(artifacts.resolve("console-spring-state-file.png")).exists();
    assertThat(artifacts.resolve("console-spring-actuator.png")).exists();
  }
}
