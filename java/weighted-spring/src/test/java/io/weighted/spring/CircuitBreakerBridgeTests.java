package io.weighted.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.weighted.jni.ClockMode;
import io.weighted.jni.Engine;
import io.weighted.jni.Json;
import io.weighted.spring.resilience4j.CircuitBreakerBridge;
import java.time.Duration;
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
import org.springframework.cloud.loadbalancer.support.ServiceInstanceListSuppliers;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;

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
