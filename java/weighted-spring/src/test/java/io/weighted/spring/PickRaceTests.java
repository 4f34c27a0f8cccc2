package io.weighted.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.weighted.jni.ClockMode;
import io.weighted.jni.Engine;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.support.SimpleObjectProvider;
import reactor.core.publisher.Flux;

/**
 * choose() while other chooses register a changed instance list: every response carries one of
 * the instance objects discovery handed out, for the endpoint the engine picked, and no choose
 * fails. The pick is resolved in the set it was drawn from, not looked up again in whatever set
 * is current by then.
 */
class PickRaceTests {
  static final long BUDGET_NANOS = 3_000_000_000L;

  static ServiceInstance instance(String host) {
    return new DefaultServiceInstance(host + ":80", "svc", host, 80, false);
  }

  @Test
  void everyChooseDuringListChurnReturnsAnInstanceOfAListDiscoveryHandedOut() throws Exception {
    List<ServiceInstance> a = List.of(instance("a1"), instance("a2"), instance("a3"),
        instance("a4"));
    List<ServiceInstance> b = List.of(instance("b1"));
    AtomicReference<List<ServiceInstance>> live = new AtomicReference<>(a);
    ServiceInstanceListSupplier churning =
        EndpointSetChangeTests.supplier(() -> Flux.just(live.get()));
    try (Engine engine = Engine.create("{\"seed\": 4, \"picker\": {\"mode\": \"weighted\"}}",
        ClockMode.MANUAL)) {
      WeightedLoadBalancer lb =
          new WeightedLoadBalancer(new SimpleObjectProvider<>(churning), "svc", engine);
      AtomicReference<String> failure = new AtomicReference<>();
      long deadline = System.nanoTime() + BUDGET_NANOS;
      List<Thread> choosers = new ArrayList<>();
      for (int t = 0; t < 2; t++) {
        choosers.add(new Thread(() -> {
          while (failure.get() == null && System.nanoTime() < deadline) {
            try {
              Response<ServiceInstance> r = lb.choose().block();
              ServiceInstance s = r == null ? null : r.getServer();
              if (!(s instanceof WeightedServiceInstance w)) {
                failure.compareAndSet(null, "choose() gave " + r + " (" + s + ")");
              } else if (!containsSame(a, w.getDelegate()) && !containsSame(b, w.getDelegate())) {
                failure.compareAndSet(null, "choose() returned " + w + ", in neither list");
              } else if (!w.getEndpointId().equals(w.getHost() + ":" + w.getPort())) {
                failure.compareAndSet(null, "choose() returned " + w + " for another endpoint");
              } else {
                w.cancel();
              }
            } catch (RuntimeException e) {
              failure.compareAndSet(null, "choose() threw " + e);
            }
          }
        }));
      }
      choosers.forEach(Thread::start);
      for (long flips = 0; choosers.stream().anyMatch(Thread::isAlive); flips++) {
        live.set(flips % 2 == 0 ? b : a);
        Thread.onSpinWait();
      }
      for (Thread t : choosers) {
        t.join();
      }
      assertThat(failure.get()).isNull();
    }
  }

  private static boolean containsSame(List<ServiceInstance> list, ServiceInstance s) {
    for (ServiceInstance x : list) {
      if (x == s) {
        return true;
      }
    }
    return false;
  }
}
