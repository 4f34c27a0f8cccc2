package io.weighted.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.weighted.jni.ClockMode;
import io.weighted.jni.Engine;
import io.weighted.jni.Json;
import io.weighted.jni.Outcome;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.CompletionContext;
import org.springframework.cloud.client.loadbalancer.DefaultRequest;
import org.springframework.cloud.client.loadbalancer.DefaultResponse;
import org.springframework.cloud.client.loadbalancer.EmptyResponse;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.client.loadbalancer.ResponseData;
import org.springframework.cloud.client.loadbalancer.RetryableRequestContext;
import org.springframework.cloud.loadbalancer.core.SelectedInstanceCallback;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.support.ServiceInstanceListSuppliers;
import org.springframework.cloud.loadbalancer.support.SimpleObjectProvider;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import reactor.core.publisher.Flux;

/**
 * The balancer on its own, in the style of Spring's RoundRobinLoadBalancerTests: suppliers built
 * from fixed instances, a seeded engine on the manual clock, a fake nanosecond clock for latency.
 */
class WeightedLoadBalancerTests {
  static final String CONFIG =
      "{\"seed\": 42, \"slow_start\": {\"window_ms\": 0}, \"picker\": {\"mode\": \"weighted\"}}";

  Engine engine;
  final AtomicLong nanos = new AtomicLong();
  final WeightedLoadBalancerLifecycle lifecycle =
      new WeightedLoadBalancerLifecycle(new DefaultOutcomeClassifier());

  @BeforeEach
  void setUp() {
    engine = Engine.create(CONFIG, ClockMode.MANUAL);
  }

  @AfterEach
  void tearDown() {
    engine.close();
  }

  static ServiceInstance instance(String host, int port, Map<String, String> metadata) {
    return new DefaultServiceInstance(host + ":" + port, "svc", host, port, false, metadata);
  }

  static ServiceInstance instance(String host) {
    return instance(host, 8080, Map.of());
  }

  WeightedLoadBalancer balancer(ServiceInstance... instances) {
    return new WeightedLoadBalancer(ServiceInstanceListSuppliers.toProvider("svc", instances), "svc",
        engine, nanos::get);
  }

  static Map<String, Integer> counts(WeightedLoadBalancer lb, int n, Request<?> request) {
    Map<String, Integer> c = new HashMap<>();
    for (int i = 0; i < n; i++) {
      Response<ServiceInstance> r = lb.choose(request).block();
      ServiceInstance s = r.getServer();
      c.merge(s.getHost(), 1, Integer::sum);
      ((WeightedServiceInstance) s).cancel();
    }
    return c;
  }

  @Test
  void shouldReturnEmptyResponseWhenNoInstances() {
    WeightedLoadBalancer lb = balancer();
    Response<ServiceInstance> r = lb.choose().block();
    assertThat(r).isInstanceOf(EmptyResponse.class);
    assertThat(r.hasServer()).isFalse();
  }

  @Test
  void shouldReturnTheOnlyInstance() {
    WeightedLoadBalancer lb = balancer(instance("h1"));
    for (int i = 0; i < 10; i++) {
      ServiceInstance s = lb.choose().block().getServer();
      assertThat(s).isInstanceOf(WeightedServiceInstance.class);
      assertThat(s.getHost()).isEqualTo("h1");
      assertThat(s).isEqualTo(instance("h1"));  // equality is the delegate's
      ((WeightedServiceInstance) s).cancel();
    }
  }

  @Test
  void shouldSpreadEquallyOverEqualInstances() {
    WeightedLoadBalancer lb = balancer(instance("h1"), instance("h2"), instance("h3"));
    Map<String, Integer> c = counts(lb, 3000, new DefaultRequest<>());
    assertThat(c).containsOnlyKeys("h1", "h2", "h3");
    c.values().forEach(v -> assertThat(v).isBetween(880, 1120));
  }

  @Test
  void samePicksForTheSameSeed() {
    List<String> first = sequence();
    engine.close();
    engine = Engine.create(CONFIG, ClockMode.MANUAL);
    assertThat(sequence()).isEqualTo(first);
  }

  private List<String> sequence() {
    WeightedLoadBalancer lb = balancer(instance("h1"), instance("h2"), instance("h3"));
    List<String> hosts = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      WeightedServiceInstance s = (WeightedServiceInstance) lb.choose().block().getServer();
      hosts.add(s.getHost());
      s.cancel();
    }
    return hosts;
  }

  @Test
  void baseWeightComesFromMetadataWeightThenNacosWeight() {
    WeightedLoadBalancer lb = balancer(instance("h1", 80, Map.of("weight", "3")),
        instance("h2", 80, Map.of("nacos.weight", "1.0")),
        instance("h3", 80, Map.of("weight", "0")));  // weight 0: sent nothing
    Map<String, Integer> c = counts(lb, 4000, new DefaultRequest<>());
    assertThat(c).containsOnlyKeys("h1", "h2");
    assertThat(c.get("h1")).isBetween(2850, 3150);
    assertThat(Endpoints.baseWeight(instance("x", 1, Map.of("weight", "abc")))).isEqualTo(1.0);
    assertThat(Endpoints.baseWeight(instance("x", 1, Map.of("nacos.weight", "2.5")))).isEqualTo(2.5);
  }

  @Test
  void outcomesThroughTheLifecycleMoveTrafficAwayFromA5xxInstance() {
    WeightedLoadBalancer lb = balancer(instance("h1"), instance("h2"), instance("h3"));
    for (int i = 0; i < 300; i++) {
      Request<Object> req = new DefaultRequest<>();
      Response<ServiceInstance> r = lb.choose(req).block();
      lifecycle.onStartRequest(req, new DefaultResponse(r.getServer()));  // as the blocking client
      int status = r.getServer().getHost().equals("h2") ? 503 : 200;
      ResponseData data = new ResponseData(HttpStatus.valueOf(status), new HttpHeaders(), null, null);
      lifecycle.onComplete(new CompletionContext<>(CompletionContext.Status.SUCCESS, req, r, data));
    }
    engine.advance(Duration.ofSeconds(5));
    Map<String, Integer> c = counts(lb, 2000, new DefaultRequest<>());
    // Error rate 100%: the graded error rule's full penalty (1 from 50% up), so h2 is
    // half-isolated at once and gets probes only, a few percent; h1 and h3 share the rest.
    assertThat(c.getOrDefault("h2", 0)).isBetween(1, 100);
    assertThat(c.get("h1") + c.get("h3")).isGreaterThan(1900);
    Map<String, Object> h2 = endpoint("h2:8080");
    assertThat(h2.get("state")).isEqualTo("isolated");
    assertThat((Double) h2.get("penalty")).isEqualTo(1.0);
  }

  @Test
  void latencyIsMeasuredFromRequestStartOnTheGivenClock() {
    WeightedLoadBalancer lb = balancer(instance("h1"));
    for (int i = 0; i < 10; i++) {
      Request<Object> req = new DefaultRequest<>();
      Response<ServiceInstance> r = lb.choose(req).block();
      nanos.addAndGet(7_000_000_000L);  // queueing before the request starts is not counted
      lifecycle.onStartRequest(req, r);
      nanos.addAndGet(250_000_000L);
      lifecycle.onComplete(new CompletionContext<>(CompletionContext.Status.SUCCESS, req, r,
          new ResponseData(HttpStatus.OK, new HttpHeaders(), null, null)));
      // a second completion of the same pick (another lifecycle path) is not counted twice
      lifecycle.onComplete(new CompletionContext<>(CompletionContext.Status.SUCCESS, req, r));
    }
    engine.runCycle();  // window statistics are computed by the controller
    Map<?, ?> window = (Map<?, ?>) endpoint("h1:8080").get("window");
    assertThat(((Number) window.get("requests")).intValue()).isEqualTo(10);
    assertThat((Double) window.get("mean_ms")).isEqualTo(250.0);
  }

  @Test
  void failuresAreClassifiedByExceptionType() {
    DefaultOutcomeClassifier c = new DefaultOutcomeClassifier();
    assertThat(c.classify(new java.net.ConnectException("refused"))).isEqualTo(Outcome.CONNECT_ERROR);
    assertThat(c.classify(new java.util.concurrent.TimeoutException())).isEqualTo(Outcome.TIMEOUT);
    assertThat(c.classify(new RuntimeException(new java.net.SocketTimeoutException())))
        .isEqualTo(Outcome.TIMEOUT);
    assertThat(c.classify(new org.springframework.web.client.ResourceAccessException("io",
        new java.io.IOException("reset")))).isEqualTo(Outcome.CONNECT_ERROR);
    assertThat(c.classify(org.springframework.web.client.HttpServerErrorException.create(
        HttpStatus.BAD_GATEWAY, "bad", new HttpHeaders(), new byte[0], null)))
        .isEqualTo(Outcome.HTTP_5XX);
    assertThat(c.classify(new IllegalArgumentException("caller bug"))).isNull();
  }

  @Test
  void retryExclusionDoesNotChangeTheEndpointSet() {
    ServiceInstance h1 = instance("h1");
    ServiceInstance h2 = instance("h2");
    ServiceInstance h3 = instance("h3");
    List<ServiceInstance> all = List.of(h1, h2, h3);
    ServiceInstanceListSupplier retryAware = new ServiceInstanceListSupplier() {
      @Override
      public Flux<List<ServiceInstance>> get() {
        return Flux.just(all);
      }

      @Override
      public Flux<List<ServiceInstance>> get(Request request) {
        if (request.getContext() instanceof RetryableRequestContext ctx
            && ctx.getPreviousServiceInstance() != null) {
          List<ServiceInstance> l = new ArrayList<>(all);
          l.remove(ctx.getPreviousServiceInstance());  // as RetryAwareServiceInstanceListSupplier
          return Flux.just(l);
        }
        return get();
      }

      @Override
      public String getServiceId() {
        return "svc";
      }
    };
    WeightedLoadBalancer lb =
        new WeightedLoadBalancer(new SimpleObjectProvider<>(retryAware), "svc", engine, nanos::get);
    WeightedServiceInstance first = (WeightedServiceInstance) lb.choose().block().getServer();
    for (int i = 0; i < 200; i++) {
      Request<RetryableRequestContext> retry =
          new DefaultRequest<>(new RetryableRequestContext(first));
      WeightedServiceInstance next = (WeightedServiceInstance) lb.choose(retry).block().getServer();
      assertThat(next).isNotEqualTo(first);
      next.cancel();
    }
    first.cancel();
    Map<String, Object> service = service();
    assertThat(((Number) service.get("epoch")).intValue()).isEqualTo(1);
  }

  @Test
  void discoveryChangesKeepStateOfEndpointsThatStay() {
    List<ServiceInstance> current = new ArrayList<>(List.of(instance("h1"), instance("h2")));
    ServiceInstanceListSupplier changing =
        EndpointSetChangeTests.supplier(() -> Flux.just(List.copyOf(current)));
    WeightedLoadBalancer lb =
        new WeightedLoadBalancer(new SimpleObjectProvider<>(changing), "svc", engine, nanos::get);
    WeightedServiceInstance s = (WeightedServiceInstance) lb.choose().block().getServer();
    s.markStarted();
    s.complete(Outcome.SUCCESS);
    current.add(instance("h3"));
    engine.runCycle();
    Map<String, Integer> c = counts(lb, 300, new DefaultRequest<>());
    assertThat(c).containsKeys("h1", "h2", "h3");
    assertThat(((Number) service().get("epoch")).intValue()).isEqualTo(2);
    long total = 0;
    for (Object e : (List<?>) service().get("endpoints")) {
      total += ((Number) ((Map<?, ?>) ((Map<?, ?>) e).get("window")).get("requests")).longValue();
    }
    assertThat(total).isEqualTo(1);  // the one completed outcome survived the update
  }

  @Test
  void droppedTrackedPicksExpireInTheEngineWithinTwoCycles() {
    // No finalizer per pick: a tracked pick that is never sent nor finished stops counting in
    // flight when the second controller cycle after it begins (interval 5 s by default).
    try (Engine loadAware = Engine.create("{\"seed\": 2, \"picker\": {\"mode\": \"load_aware\"}}",
        ClockMode.MANUAL)) {
      WeightedLoadBalancer lb = new WeightedLoadBalancer(
          ServiceInstanceListSuppliers.toProvider("svc", instance("h1"), instance("h2")), "svc",
          loadAware, nanos::get);
      for (int i = 0; i < 20; i++) {  // chosen, never sent, never completed: dropped
        assertThat(((WeightedServiceInstance) lb.choose().block().getServer()).isFinished())
            .isFalse();
      }
      loadAware.advance(Duration.ofSeconds(5));  // one cycle: still counted
      WeightedServiceInstance kept = (WeightedServiceInstance) lb.choose().block().getServer();
      assertThat(inflight(loadAware)).isEqualTo(21);
      loadAware.advance(Duration.ofSeconds(5));  // the second cycle: the dropped ones expire
      assertThat(inflight(loadAware)).isEqualTo(1);  // only the pick taken a cycle ago
      kept.markStarted();
      assertThat(kept.complete(Outcome.SUCCESS)).isTrue();
      assertThat(inflight(loadAware)).isZero();
    }
  }

  private static long inflight(Engine e) {
    long n = 0;
    for (Object s : (List<?>) Json.parseObject(e.snapshotJson()).get("services")) {
      for (Object ep : (List<?>) ((Map<?, ?>) s).get("endpoints")) {
        n += ((Number) ((Map<?, ?>) ep).get("inflight")).longValue();
      }
    }
    return n;
  }

  @Test
  void concurrentChoosesDuringDiscoveryChurnAlwaysResolve() throws Exception {
    List<ServiceInstance> a = List.of(instance("h1"), instance("h2"), instance("h3"));
    List<ServiceInstance> b = List.of(instance("h3"), instance("h4"));
    java.util.concurrent.atomic.AtomicReference<List<ServiceInstance>> live =
        new java.util.concurrent.atomic.AtomicReference<>(a);
    ServiceInstanceListSupplier churning =
        EndpointSetChangeTests.supplier(() -> Flux.just(live.get()));
    try (Engine la = Engine.create("{\"seed\": 4, \"picker\": {\"mode\": \"load_aware\"}}",
        ClockMode.MANUAL)) {
      WeightedLoadBalancer lb =
          new WeightedLoadBalancer(new SimpleObjectProvider<>(churning), "svc", la, nanos::get);
      java.util.concurrent.atomic.AtomicReference<Throwable> failure =
          new java.util.concurrent.atomic.AtomicReference<>();
      List<Thread> threads = new ArrayList<>();
      for (int t = 0; t < 3; t++) {
        threads.add(new Thread(() -> {
          try {
            for (int i = 0; i < 3000; i++) {
              WeightedServiceInstance s =
                  (WeightedServiceInstance) lb.choose().block().getServer();
              assertThat(s.getHost()).isIn("h1", "h2", "h3", "h4");
              assertThat(s.getEndpointId()).isEqualTo(s.getHost() + ":8080");
              s.markStarted();
              s.complete(Outcome.SUCCESS);  // may be stale after a flip: not an error
            }
          } catch (Throwable e) {
            failure.compareAndSet(null, e);
          }
        }));
      }
      threads.forEach(Thread::start);
      for (int flip = 0; flip < 200 && threads.stream().anyMatch(Thread::isAlive); flip++) {
        live.set(flip % 2 == 0 ? b : a);
        Thread.sleep(1);
      }
      for (Thread t : threads) {
        t.join(60_000);
      }
      assertThat(failure.get()).isNull();
      live.set(a);
      lb.choose().block();  // back to set a, so every endpoint still there is ...
      assertThat(inflight(la)).isEqualTo(1);  // ... released but the one just chosen
    }
  }

  @Test
  void aRemovedServiceIsReplacedAndTheListRegisteredAgain() {
    WeightedLoadBalancer lb = balancer(instance("h1"), instance("h2"));
    WeightedServiceInstance open = (WeightedServiceInstance) lb.choose().block().getServer();
    io.weighted.jni.Service removed = lb.getService();
    removed.remove();
    assertThat(removed.isClosed()).isTrue();
    Map<String, Integer> c = counts(lb, 200, new DefaultRequest<>());
    assertThat(c).containsOnlyKeys("h1", "h2");
    assertThat(lb.getService()).isNotSameAs(removed);
    assertThat(((Number) service().get("epoch")).intValue()).isEqualTo(1);  // a new service
    open.markStarted();
    assertThat(open.complete(Outcome.SUCCESS)).isFalse();  // its service is gone: a no-op
  }

  @Test
  void selectedInstanceCallbackIsCalled() {
    List<ServiceInstance> selected = new ArrayList<>();
    class Callback implements ServiceInstanceListSupplier, SelectedInstanceCallback {
      @Override
      public Flux<List<ServiceInstance>> get() {
        return Flux.just(List.of(instance("h1"), instance("h2")));
      }

      @Override
      public String getServiceId() {
        return "svc";
      }

      @Override
      public void selectedServiceInstance(ServiceInstance serviceInstance) {
        selected.add(serviceInstance);
      }
    }
    WeightedLoadBalancer lb =
        new WeightedLoadBalancer(new SimpleObjectProvider<>(new Callback()), "svc", engine);
    ServiceInstance s = lb.choose().block().getServer();
    assertThat(selected).containsExactly(s);
  }

  private Map<String, Object> service() {
    for (Object s : (List<?>) Json.parseObject(engine.snapshotJson()).get("services")) {
      @SuppressWarnings("unchecked")
      Map<String, Object> m = (Map<String, Object>) s;
      if ("svc".equals(m.get("name"))) {
        return m;
      }
    }
    throw new AssertionError("no service svc");
  }

  @SuppressWarnings("unchecked")
  private Map<String, Object> endpoint(String id) {
    for (Object e : (List<?>) service().get("endpoints")) {
      if (id.equals(((Map<?, ?>) e).get("id"))) {
        return (Map<String, Object>) e;
      }
    }
    throw new AssertionError("no endpoint " + id);
  }
}
