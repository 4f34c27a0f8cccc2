package io.weighted.discovery;

import static org.assertj.core.api.Assertions.assertThat;

import com.netflix.discovery.DiscoveryClient;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.cloud.netflix.eureka.server.EnableEurekaServer;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A Spring Cloud Netflix Eureka server embedded in the test (its own Spring context on a loopback
 * port), backends registered through Eureka's REST API (what every non-Java Eureka client does),
 * and the client on Spring Cloud's Eureka discovery client behind Spring's stock blocking
 * discovery supplier: Eureka's client keeps its own copy of the registry, so an outage needs
 * nothing more.
 */
class EurekaDiscoveryTest extends DiscoveryScenario {
  @SpringBootConfiguration
  @EnableAutoConfiguration
  @EnableEurekaServer
  static class EurekaServerApp {}

  private final HttpClient http = HttpClient.newHttpClient();
  private int port;
  private ConfigurableApplicationContext server;
  /** What each registered instance id was registered with, to register again after a restart. */
  private final Map<String, Object[]> registered = new LinkedHashMap<>();

  @BeforeAll
  void start() throws Exception {
    port = freePort();
    server = startServer(false);
    startClient();
  }

  /**
   * {@code restarted}: a server that comes back empty refuses registry reads for 3 s
   * ({@code wait-time-in-ms-when-sync-empty}, what a replicated Eureka does while it syncs) so
   * the client keeps its copy until the backends have registered again, as their heartbeats'
   * 404 makes them do.
   */
  private ConfigurableApplicationContext startServer(boolean restarted) {
    Map<String, Object> p = new HashMap<>();
    p.put("server.port", port);
    p.put("server.address", "127.0.0.1");
    p.put("spring.application.name", "eureka");
    p.put("spring.main.banner-mode", "off");
    p.put("eureka.client.register-with-eureka", "false");
    p.put("eureka.client.fetch-registry", "false");
    // Itself as its only zone, by the name it knows itself by: a standalone server, no peers.
    p.put("eureka.instance.hostname", "127.0.0.1");
    p.put("eureka.client.service-url.defaultZone", "http://127.0.0.1:" + port + "/eureka/");
    p.put("eureka.server.enable-self-preservation", "false");
    // Reads see a registration at once (the read-only cache would lag up to 30 s).
    p.put("eureka.server.use-read-only-response-cache", "false");
    p.put("eureka.dashboard.enabled", "false");
    p.put("spring.cloud.zookeeper.enabled", "false");
    if (restarted) {
      p.put("eureka.server.defaultOpenForTrafficCount", "0");
      p.put("eureka.server.wait-time-in-ms-when-sync-empty", "3000");
    }
    return new SpringApplicationBuilder(EurekaServerApp.class).properties(p).run();
  }

  @Override
  protected Map<String, Object> registryProperties() {
    Map<String, Object> p = new HashMap<>();
    p.put("eureka.client.service-url.defaultZone", "http://127.0.0.1:" + port + "/eureka/");
    p.put("eureka.client.register-with-eureka", "false");
    p.put("eureka.client.registry-fetch-interval-seconds", "1");
    // The server's Jersey is on this class path too; the client talks over Spring's RestClient.
    p.put("eureka.client.jersey.enabled", "false");
    p.put("eureka.client.restclient.enabled", "true");
    p.put("spring.cloud.zookeeper.enabled", "false");
    return p;
  }

  private String apps() {
    return "http://127.0.0.1:" + port + "/eureka/apps/" + SERVICE.toUpperCase();
  }

  private HttpResponse<String> send(HttpRequest.Builder r) throws Exception {
    return http.send(r.header("Accept", "application/json").build(),
        HttpResponse.BodyHandlers.ofString());
  }

  @Override
  protected void register(Backend b, String instanceId, String weight) throws Exception {
    registered.put(instanceId, new Object[] {b, weight});
    String json = """
        {"instance": {"instanceId": "%s", "hostName": "127.0.0.1", "app": "%s",
          "ipAddr": "127.0.0.1", "vipAddress": "%s", "status": "UP",
          "port": {"$": %d, "@enabled": "true"}, "securePort": {"$": 443, "@enabled": "false"},
          "leaseInfo": {"renewalIntervalInSecs": 30, "durationInSecs": 600},
          "dataCenterInfo": {"@class": "com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo",
            "name": "MyOwn"},
          "metadata": {"weight": "%s"}}}
        """.formatted(instanceId, SERVICE.toUpperCase(), SERVICE, b.port(), weight);
    HttpResponse<String> r = send(HttpRequest.newBuilder(URI.create(apps()))
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(json)));
    assertThat(r.statusCode()).as("register %s: %s", instanceId, r.body()).isEqualTo(204);
  }

  @Override
  protected void deregister(Backend b, String instanceId) throws Exception {
    registered.remove(instanceId);
    HttpResponse<String> r =
        send(HttpRequest.newBuilder(URI.create(apps() + "/" + instanceId)).DELETE());
    assertThat(r.statusCode()).as("cancel %s", instanceId).isEqualTo(200);
  }

  /** Eureka's metadata update: the server changes the instance's map and re-registers it. */
  @Override
  protected void setWeight(Backend b, String instanceId, String weight) throws Exception {
    registered.put(instanceId, new Object[] {b, weight});
    HttpResponse<String> r = send(HttpRequest.newBuilder(URI.create(apps() + "/" + instanceId
        + "/metadata?weight=" + URLEncoder.encode(weight, StandardCharsets.UTF_8)))
        .PUT(HttpRequest.BodyPublishers.noBody()));
    assertThat(r.statusCode()).as("metadata of %s", instanceId).isEqualTo(200);
  }

  @Override
  protected void stopRegistry() {
    server.close();
  }

  @Override
  protected boolean clientSeesOutage() {
    DiscoveryClient eureka = client.getBean(DiscoveryClient.class);
    // Three fetch intervals without a successful fetch, each past the balancer's cache.
    return eureka.getLastSuccessfulRegistryFetchTimePeriod() > 3000;
  }

  /** The restarted server refuses reads until the backends are back: no list lacks one. */
  @Override
  protected boolean restartKeepsEveryEndpoint() {
    return true;
  }

  @Override
  protected void startRegistry() throws Exception {
    server = startServer(true);
    for (Map.Entry<String, Object[]> e : new LinkedHashMap<>(registered).entrySet()) {
      register((Backend) e.getValue()[0], e.getKey(), (String) e.getValue()[1]);
    }
  }

  @Override
  @AfterAll
  void stopAll() {
    super.stopAll();
    if (server != null) {
      server.close();
    }
  }
}
