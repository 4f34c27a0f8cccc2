package io.weighted.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.weighted.jni.ClockMode;
import io.weighted.jni.Engine;
import io.weighted.jni.Json;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.loadbalancer.core.RoundRobinLoadBalancer;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.support.SimpleObjectProvider;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The checks that let choose() skip rebuilding the endpoint set (Registered.matches) and the
 * one-operator path for synchronous suppliers: whatever shape the supplier's lists take, the
 * engine's set follows discovery exactly and every pick maps to the instance it names.
 */
class EndpointSetChangeTests {
  static final String CONFIG =
      "{\"seed\": 7, \"slow_start\": {\"window_ms\": 0}, \"picker\": {\"mode\": \"weighted\"}}";

  Engine engine;

  @BeforeEach
  void setUp() {
    engine = Engine.create(CONFIG, ClockMode.MANUAL);
  }

  @AfterEach
  void tearDown() {
    engine.close();
  }

  static ServiceInstance instance(String host, String weight) {
    Map<String, String> md = weight == null ? Map.of() : Map.of("weight", weight);
    return new DefaultServiceInstance(host + ":80", "svc", host, 80, false, new HashMap<>(md));
  }

  static ServiceInstance instance(String host) {
    return instance(host, null);
  }

  static ServiceInstanceListSupplier supplier(Supplier<Flux<List<ServiceInstance>>> lists) {
    return new ServiceInstanceListSupplier() {
      @Override
      public Flux<List<ServiceInstance>> get() {
        return lists.get();
      }

      @Override
      public String getServiceId() {
        return "svc";
      }
    };
  }

  WeightedLoadBalancer balancer(Supplier<List<ServiceInstance>> lists) {
    return new WeightedLoadBalancer(
        new SimpleObjectProvider<>(supplier(() -> Flux.just(lists.get()))), "svc", engine);
  }

  /** Picks n times; checks each pick names the instance it returns; counts by host. */
  static Map<String, Integer> picks(WeightedLoadBalancer lb, int n) {
    Map<String, Integer> c = new HashMap<>();
    for (int i = 0; i < n; i++) {
      WeightedServiceInstance s = (WeightedServiceInstance) lb.choose().block().getServer();
      assertThat(s.getEndpointId()).isEqualTo(s.getHost() + ":" + s.getPort());
      c.merge(s.getHost(), 1, Integer::sum);
      s.cancel();
    }
    return c;
  }

  @Test
  void anImmutableListHandedOutAgainRegistersOnce() {
    List<ServiceInstance> list = List.of(instance("h1"), instance("h2"), instance("h3"));
    WeightedLoadBalancer lb = balancer(() -> list);
    assertThat(picks(lb, 300)).containsOnlyKeys("h1", "h2", "h3");
    assertThat(epoch()).isEqualTo(1);
  }

  @Test
  void theSameMutableListChangedInPlaceIsSeen() {
    List<ServiceInstance> list = new ArrayList<>(List.of(instance("h1"), instance("h2")));
    WeightedLoadBalancer lb = balancer(() -> list);  // one list object, as a naive cache hands out
    assertThat(picks(lb, 200)).containsOnlyKeys("h1", "h2");
    assertThat(epoch()).isEqualTo(1);

    list.add(instance("h3"));
    assertThat(picks(lb, 300)).containsOnlyKeys("h1", "h2", "h3");
    assertThat(epoch()).isEqualTo(2);

    list.set(0, instance("h4"));  // same size, one element replaced
    assertThat(picks(lb, 300)).containsOnlyKeys("h4", "h2", "h3");
    assertThat(endpointIds()).containsExactly("h4:80", "h2:80", "h3:80");

    list.remove(1);
    assertThat(picks(lb, 200)).containsOnlyKeys("h4", "h3");
    assertThat(endpointIds()).containsExactly("h4:80", "h3:80");
    assertThat(epoch()).isEqualTo(4);
  }

  @Test
  void aNewListOfEqualNewInstancesPerCallDoesNotTouchTheEngine() {
    WeightedLoadBalancer lb = balancer(() -> new ArrayList<>(
        List.of(instance("h1", "2"), instance("h2", "1"))));  // a supplier without a cache
    Map<String, Integer> c = picks(lb, 3000);
    assertThat(c.get("h1")).isBetween(1850, 2150);
    assertThat(epoch()).isEqualTo(1);
  }

  @Test
  void aChangedWeightReachesTheEngine() {
    String[] w = {"1"};
    WeightedLoadBalancer lb = balancer(() -> List.of(instance("h1", w[0]), instance("h2", "1")));
    picks(lb, 10);
    assertThat(baseWeight("h1:80")).isEqualTo(1.0);

    w[0] = "3";  // new instances, equal hosts, new weight metadata
    Map<String, Integer> c = picks(lb, 4000);
    assertThat(baseWeight("h1:80")).isEqualTo(3.0);
    assertThat(c.get("h1")).isBetween(2850, 3150);
    assertThat(epoch()).isEqualTo(2);
  }

  @Test
  void aChangedWeightInTheSameMutableListIsSeen() {
    List<ServiceInstance> list = new ArrayList<>(List.of(instance("h1", "1"), instance("h2", "1")));
    WeightedLoadBalancer lb = balancer(() -> list);
    picks(lb, 10);
    list.set(0, instance("h1", "4"));
    picks(lb, 10);
    assertThat(baseWeight("h1:80")).isEqualTo(4.0);
  }

  /**
   * A discovery client that changes an instance's metadata map in place hands out the same
   * objects in the same list: the identity checks trust them, the periodic re-read sees the
   * change within {@link WeightedLoadBalancer.Registered#RECHECK_EVERY} chooses.
   */
  @Test
  void aWeightChangedInsideTheSameInstanceObjectIsSeen() {
    ServiceInstance h1 = instance("h1", "1");
    List<ServiceInstance> immutable = List.of(h1, instance("h2", "1"));
    WeightedLoadBalancer lb = balancer(() -> immutable);
    picks(lb, 10);
    assertThat(baseWeight("h1:80")).isEqualTo(1.0);

    h1.getMetadata().put("weight", "4");
    picks(lb, WeightedLoadBalancer.Registered.RECHECK_EVERY);
    assertThat(baseWeight("h1:80")).isEqualTo(4.0);
    assertThat(epoch()).isEqualTo(2);

    ServiceInstance h3 = instance("h3", "2");
    List<ServiceInstance> mutable = new ArrayList<>(List.of(h3, instance("h4", "2")));
    WeightedLoadBalancer other = balancer(() -> mutable);  // a cache's list of the same objects
    picks(other, 10);
    h3.getMetadata().remove("weight");
    h3.getMetadata().put("nacos.weight", "0.5");
    picks(other, WeightedLoadBalancer.Registered.RECHECK_EVERY);
    assertThat(baseWeight("h3:80")).isEqualTo(0.5);
    Map<String, Integer> c = picks(other, 2500);
    assertThat(c.get("h3")).isBetween(400, 600);  // 0.5 against 2: a fifth
  }

  @Test
  void aReorderedListStillMapsEachPickToItsInstance() {
    ServiceInstance h1 = instance("h1", "3");
    ServiceInstance h2 = instance("h2", "1");
    boolean[] reversed = {false};
    WeightedLoadBalancer lb = balancer(() -> reversed[0] ? List.of(h2, h1) : List.of(h1, h2));
    assertThat(picks(lb, 4000).get("h1")).isBetween(2850, 3150);
    reversed[0] = true;
    // The weights stay with their hosts, not with the positions.
    assertThat(picks(lb, 4000).get("h1")).isBetween(2850, 3150);
    reversed[0] = false;
    assertThat(picks(lb, 4000).get("h1")).isBetween(2850, 3150);
  }

  @Test
  void picksFromASetAnotherWriterRegisteredStillResolveAndLeakNothing() {
    try (Engine loadAware = Engine.create("{\"seed\": 5, \"picker\": {\"mode\": \"load_aware\"}}",
        ClockMode.MANUAL)) {
      List<ServiceInstance> list = List.of(instance("h1"), instance("h2"), instance("h3"));
      WeightedLoadBalancer lb = new WeightedLoadBalancer(new SimpleObjectProvider<>(
          supplier(() -> Flux.just(list))), "svc", loadAware);
      ((WeightedServiceInstance) lb.choose().block().getServer()).cancel();
      // Someone else sets the same service's endpoints, in another order: the engine's epoch is
      // no longer the balancer's, so every pick takes the full path and is resolved by id.
      loadAware.service("svc").setEndpoints(new String[] {"h3:80", "h1:80", "h2:80"},
          new double[] {1, 1, 1});
      for (int i = 0; i < 50; i++) {
        WeightedServiceInstance s = (WeightedServiceInstance) lb.choose().block().getServer();
        assertThat(s.getEndpointId()).isEqualTo(s.getHost() + ":" + s.getPort());
        assertThat(list).contains(s.getDelegate());
        assertThat(s.cancel()).isTrue();
      }
      assertThat(inflight(loadAware)).isZero();  // no pick from the other epoch kept its count
    }
  }

  // ---- the one-operator path for synchronous suppliers behaves as next().map() does ----

  @Test
  void eachSubscriptionPicksAnew() {
    WeightedLoadBalancer lb = balancer(() -> List.of(instance("h1"), instance("h2")));
    Mono<Response<ServiceInstance>> mono = lb.choose();
    ServiceInstance a = mono.block().getServer();
    ServiceInstance b = mono.block().getServer();
    assertThat(a).isNotSameAs(b);
    ((WeightedServiceInstance) a).cancel();
    ((WeightedServiceInstance) b).cancel();
  }

  @Test
  void nothingIsPickedUntilSubscribed() {
    try (Engine loadAware = Engine.create("{\"seed\": 3, \"picker\": {\"mode\": \"load_aware\"}}",
        ClockMode.MANUAL)) {
      WeightedLoadBalancer lb = new WeightedLoadBalancer(new SimpleObjectProvider<>(
          supplier(() -> Flux.just(List.of(instance("h1"), instance("h2"))))), "svc", loadAware);
      WeightedServiceInstance first = (WeightedServiceInstance) lb.choose().block().getServer();
      Mono<Response<ServiceInstance>> unsubscribed = lb.choose();
      assertThat(unsubscribed).isNotNull();
      assertThat(inflight(loadAware)).isEqualTo(1);  // only the subscribed choose took a count
      first.cancel();
      assertThat(inflight(loadAware)).isZero();
    }
  }

  @Test
  void emptyAndFailingSuppliersBehaveAsForRoundRobin() {
    IllegalStateException boom = new IllegalStateException("discovery down");
    List<Supplier<Flux<List<ServiceInstance>>>> sources = List.of(
        Flux::empty, () -> Flux.error(boom), () -> Flux.just(List.of()),
        () -> Flux.defer(() -> Flux.just(List.of(instance("h1")))));
    for (Supplier<Flux<List<ServiceInstance>>> source : sources) {
      ServiceInstanceListSupplier s = supplier(source);
      WeightedLoadBalancer weighted =
          new WeightedLoadBalancer(new SimpleObjectProvider<>(s), "svc", engine);
      RoundRobinLoadBalancer roundRobin =
          new RoundRobinLoadBalancer(new SimpleObjectProvider<>(s), "svc");
      Object expected = outcome(() -> roundRobin.choose().block());
      Object actual = outcome(() -> weighted.choose().block());
      if (expected instanceof Response<?> r && r.hasServer()) {
        assertThat(actual).isInstanceOf(Response.class);
        assertThat(((Response<?>) actual).getServer()).isEqualTo(r.getServer());
        ((WeightedServiceInstance) ((Response<?>) actual).getServer()).cancel();
      } else if (expected instanceof Throwable t) {
        assertThat(actual).isSameAs(t);
      } else {
        assertThat(actual == null ? null : actual.getClass())
            .isEqualTo(expected == null ? null : expected.getClass());
      }
    }
    assertThatThrownBy(() -> new WeightedLoadBalancer(new SimpleObjectProvider<>(
        supplier(() -> Flux.error(boom))), "svc", engine).choose().block()).isSameAs(boom);
  }

  private static Object outcome(Supplier<Object> call) {
    try {
      return call.get();
    } catch (RuntimeException e) {
      return e;
    }
  }

  // ---- the engine's view ----

  private Map<?, ?> service() {
    for (Object s : (List<?>) Json.parseObject(engine.snapshotJson()).get("services")) {
      if ("svc".equals(((Map<?, ?>) s).get("name"))) {
        return (Map<?, ?>) s;
      }
    }
    throw new AssertionError("no service svc");
  }

  private int epoch() {
    return ((Number) service().get("epoch")).intValue();
  }

  private List<String> endpointIds() {
    List<String> ids = new ArrayList<>();
    for (Object e : (List<?>) service().get("endpoints")) {
      ids.add((String) ((Map<?, ?>) e).get("id"));
    }
    return ids;
  }

  private double baseWeight(String id) {
    for (Object e : (List<?>) service().get("endpoints")) {
      if (id.equals(((Map<?, ?>) e).get("id"))) {
        return ((Number) ((Map<?, ?>) e).get("base_weight")).doubleValue();
      }
    }
    throw new AssertionError("no endpoint " + id);
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
}
