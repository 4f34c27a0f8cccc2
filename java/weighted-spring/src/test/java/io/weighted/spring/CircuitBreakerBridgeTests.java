package io.weighted.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.weighted.jni.ClockMode;
import io.weighted.jni.Engine;
import io.weighted.jni.Json;
import io.weighted.jni.Outcome;
import io.weighted.spring.resilience4j.CircuitBreakerBridge;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.CompletionContext;
import org.springframework.cloud.client.loadbalancer.DefaultRequest;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.client.loadbalancer.ResponseData;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.support.ServiceInstanceListSuppliers;
import org.springframework.cloud.loadbalancer.support.SimpleObjectProvider;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import reactor.core.publisher.Flux;

/**
 * S-P3: a Resilience4j breaker per endpoint and the engine read one stream of outcomes (the
 * lifecycle's), each call counted once by each; an open breaker vetoes its endpoint at once,
 * before the engine's controller has run a single cycle.
 */
class CircuitBreakerBridgeTests {

  @Test
  void breakerAndEngineCountEachCallOnceAndAnOpenBreakerVetoesItsEndpoint() {
    CircuitBreakerRegistry registry = CircuitBreakerRegistry.of(CircuitBreakerConfig.custom()
        .slidingWindowSize(1000).minimumNumberOfCalls(5).failureRateThreshold(50)
        .waitDurationInOpenState(Duration.ofHours(1)).build());
    CircuitBreakerBridge bridge = new CircuitBreakerBridge(registry);
    AtomicLong nanos = new AtomicLong();
    try (Engine engine = Engine.create("{\"seed\": 5, \"slow_start\": {\"window_ms\": 0}, \"picker\": {\"mode\": \"weighted\"}}",
        ClockMode.MANUAL)) {
      ServiceInstance[] instances = new ServiceInstance[3];
      for (int i = 0; i < 3; i++) {
        instances[i] = new DefaultServiceInstance("h" + i, "svc", "h" + i, 80, false);
      }
      WeightedLoadBalancer lb = new WeightedLoadBalancer(
          ServiceInstanceListSuppliers.toProvider("svc", instances), "svc", engine, nanos::get,
          bridge);
      WeightedLoadBalancerLifecycle lifecycle =
          new WeightedLoadBalancerLifecycle(new DefaultOutcomeClassifier(), List.of(bridge));

      int callsToH1 = 0;
      int toH1AfterOpen = 0;
      CircuitBreaker h1 = bridge.breaker("svc", "h1:80");
      for (int i = 0; i < 300; i++) {
        boolean open = h1.getState() == CircuitBreaker.State.OPEN;
        Request<Object> req = new DefaultRequest<>();
        Response<ServiceInstance> r = lb.choose(req).block();
        String host = r.getServer().getHost();
        if (host.equals("h1")) {
          callsToH1++;
          if (open) {
            toH1AfterOpen++;
          }
        }
        lifecycle.onStartRequest(req, r);
        nanos.addAndGet(1_000_000);
        ResponseData data = new ResponseData(host.equals("h1") ? HttpStatus.BAD_GATEWAY
            : HttpStatus.OK, new HttpHeaders(), null, null);
        lifecycle.onComplete(new CompletionContext<>(CompletionContext.Status.SUCCESS, req, r, data));
      }
      assertThat(h1.getState()).isEqualTo(CircuitBreaker.State.OPEN);
      assertThat(toH1AfterOpen).isZero();  // vetoed at once; no controller cycle has run
      assertThat(callsToH1).isBetween(5, 10);
      // One stream, two consumers, each call once in each.
      assertThat(h1.getMetrics().getNumberOfFailedCalls()).isEqualTo(callsToH1);
      assertThat(engineTotal(engine, "h1:80", "http_5xx")).isEqualTo(callsToH1);
      long healthy = bridge.breaker("svc", "h0:80").getMetrics().getNumberOfBufferedCalls()
          + bridge.breaker("svc", "h2:80").getMetrics().getNumberOfBufferedCalls();
      assertThat(healthy).isEqualTo(300 - callsToH1);
      assertThat(engineTotal(engine, "h0:80", "success") + engineTotal(engine, "h2:80", "success"))
          .isEqualTo(300 - callsToH1);
    }
  }

  @Test
  void breakersOfDepartedEndpointsLeaveTheRegistryAndStayingOnesKeepTheirCounts() {
    CircuitBreakerRegistry registry = CircuitBreakerRegistry.ofDefaults();
    CircuitBreakerBridge bridge = new CircuitBreakerBridge(registry);
    List<ServiceInstance> current = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      current.add(new DefaultServiceInstance("h" + i, "svc", "h" + i, 80, false));
    }
    ServiceInstanceListSupplier changing =
        EndpointSetChangeTests.supplier(() -> Flux.just(List.copyOf(current)));
    try (Engine engine = Engine.create("{\"seed\": 5}", ClockMode.MANUAL)) {
      WeightedLoadBalancer lb = new WeightedLoadBalancer(
          new SimpleObjectProvider<>(changing), "svc", engine, System::nanoTime, bridge);
      lb.choose(new DefaultRequest<>()).block();
      CircuitBreaker h0 = bridge.breaker("svc", "h0:80");
      bridge.onOutcome("svc", "h0:80", 5, Outcome.SUCCESS);
      bridge.breaker("svc", "h1:80");
      bridge.breaker("svc", "h2:80");
      // Another service's breakers, one under a name that extends this service's.
      bridge.breaker("other", "h2:80");
      bridge.breaker("svc/x", "h9:80");

      current.remove(2);  // h2 leaves, h3 comes
      current.add(new DefaultServiceInstance("h3", "svc", "h3", 80, false));
      lb.choose(new DefaultRequest<>()).block();

      assertThat(registry.find("svc/h2:80")).isEmpty();
      assertThat(registry.find("svc/h0:80")).containsSame(h0);
      assertThat(h0.getMetrics().getNumberOfSuccessfulCalls()).isEqualTo(1);
      assertThat(registry.find("svc/h1:80")).isPresent();
      assertThat(registry.find("other/h2:80")).isPresent();
      assertThat(registry.find("svc/x/h9:80")).isPresent();

      // The same set again (another list object): nothing registered, nothing removed.
      CircuitBreaker h3 = bridge.breaker("svc", "h3:80");
      lb.choose(new DefaultRequest<>()).block();
      assertThat(registry.find("svc/h3:80")).containsSame(h3);
    }
  }

  private static long engineTotal(Engine engine, String id, String outcome) {
    for (Object s : (List<?>) Json.parseObject(engine.snapshotJson()).get("services")) {
      for (Object e : (List<?>) ((Map<?, ?>) s).get("endpoints")) {
        Map<?, ?> ep = (Map<?, ?>) e;
        if (id.equals(ep.get("id"))) {
          return ((Number) ((Map<?, ?>) ep.get("totals")).get(outcome)).longValue();
        }
      }
    }
    throw new AssertionError("no endpoint " + id);
  }
}
