package com.example.ribbon;

import com.netflix.client.ClientException;
import com.netflix.client.ClientFactory;
import com.netflix.client.config.ClientConfigFactory;
import com.netflix.client.config.CommonClientConfigKey;
import com.netflix.client.config.IClientConfig;
import com.netflix.loadbalancer.BaseLoadBalancer;
import com.netflix.loadbalancer.ILoadBalancer;
import com.netflix.loadbalancer.Server;
import com.netflix.loadbalancer.reactive.LoadBalancerCommand;
import io.weighted.ribbon.WeightedExecutionListener;
import io.weighted.ribbon.WeightedRule;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import rx.Observable;

/**
 * A plain Ribbon client whose rule is the weighted engine: the rule comes from config.properties
 * ({@code demo.ribbon.NFLoadBalancerRuleClassName}), every call is a {@link LoadBalancerCommand},
 * and {@link WeightedExecutionListener#track} reports each attempt's outcome to the engine.
 */
public final class RibbonExample {
  private final ILoadBalancer loadBalancer;
  private final WeightedRule rule;
  private final WeightedExecutionListener<Object, HttpResponse<String>> outcomes;
  private final HttpClient http = HttpClient.newBuilder()
      .connectTimeout(Duration.ofSeconds(2)).build();

  /** The client "demo" of config.properties, on these servers ("host:port,host:port"). */
  public RibbonExample(String listOfServers) throws ClientException {
    IClientConfig config = ClientConfigFactory.DEFAULT.newConfig();
    config.loadProperties("demo");
    config.set(CommonClientConfigKey.ListOfServers, listOfServers);
    loadBalancer = ClientFactory.registerNamedLoadBalancerFromclientConfig("demo", config);
    rule = (WeightedRule) ((BaseLoadBalancer) loadBalancer).getRule();
    outcomes = new WeightedExecutionListener<>(rule, HttpResponse::statusCode);
  }

  public WeightedRule rule() {
    return rule;
  }

  /** One GET /work through the load balancer: the body that came back. */
  public String call() {
    return LoadBalancerCommand.<HttpResponse<String>>builder()
        .withLoadBalancer(loadBalancer)
        .build()
        .submit(outcomes.track(server -> Observable.defer(() -> Observable.just(get(server)))))
        .toBlocking()
        .first()
        .body();
  }

  private HttpResponse<String> get(Server server) {
    HttpRequest r = HttpRequest.newBuilder(
        URI.create("http://" + server.getHostPort() + "/work")).timeout(Duration.ofSeconds(2)).build();
    try {
      return http.send(r, HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new RuntimeException(e);  // Ribbon's retry handler and track() look at the cause
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new RuntimeException(e);
    }
  }

  /** {@code n} calls in a row: how often each answer came. */
  public Map<String, Integer> round(int n) {
    Map<String, Integer> answers = new TreeMap<>();
    for (int i = 0; i < n; i++) {
      answers.merge(call(), 1, Integer::sum);
    }
    return answers;
  }

  /** The backend that answered most often in a round ("backend i (...)" answers). */
  public static int busiest(Map<String, Integer> answers) {
    return answers.entrySet().stream().max(Map.Entry.comparingByValue())
        .map(e -> Integer.parseInt(e.getKey().split(" ")[1])).orElseThrow();
  }

  public static void main(String[] args) throws Exception {
    try (ToyBackends backends = ToyBackends.start(3)) {
      RibbonExample demo = new RibbonExample(backends.listOfServers());
      Map<String, Integer> healthy = demo.round(300);
      System.out.println("healthy:               " + healthy);
      int sick = busiest(healthy);
      backends.setFailing(sick, true);
      System.out.println("backend " + sick + " answers 503: " + demo.round(300));
      System.out.println("the engine's view:     " + demo.rule().getEngine().snapshotJson());
    }
  }
}
