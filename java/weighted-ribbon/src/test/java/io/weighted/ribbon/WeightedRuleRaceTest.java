package io.weighted.ribbon;

import static org.assertj.core.api.Assertions.assertThat;

import com.netflix.loadbalancer.BaseLoadBalancer;
import com.netflix.loadbalancer.ILoadBalancer;
import com.netflix.loadbalancer.Server;
import io.weighted.jni.ClockMode;
import io.weighted.jni.Engine;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * choose() while other threads' chooses register a changed server list. Every server returned
 * must be one of the Server objects the load balancer handed out: the pick is resolved in the
 * set it was drawn from, never by an index or an id looked up in whatever set is current by
 * then (which returned another list's server, null, or threw ArrayIndexOutOfBoundsException
 * when two reads of the current set straddled a change).
 */
class WeightedRuleRaceTest {
  static final long BUDGET_NANOS = 3_000_000_000L;

  @Test
  void everyChooseDuringListChurnReturnsAServerOfAListTheBalancerHandedOut() throws Exception {
    List<Server> a = List.of(new Server("a1", 80), new Server("a2", 80), new Server("a3", 80),
        new Server("a4", 80));
    List<Server> b = List.of(new Server("b1", 80));
    AtomicReference<List<Server>> live = new AtomicReference<>(a);
    ILoadBalancer churning = new BaseLoadBalancer() {
      @Override
      public List<Server> getReachableServers() {
        return live.get();
      }
    };
    try (Engine engine = Engine.create("{\"seed\": 3, \"picker\": {\"mode\": \"weighted\"}}",
        ClockMode.MANUAL)) {
      WeightedRule rule = new WeightedRule(engine, "churn");
      rule.setLoadBalancer(churning);
      AtomicReference<String> failure = new AtomicReference<>();
      long deadline = System.nanoTime() + BUDGET_NANOS;
      List<Thread> choosers = new ArrayList<>();
      for (int t = 0; t < 2; t++) {
        choosers.add(new Thread(() -> {
          while (failure.get() == null && System.nanoTime() < deadline) {
            try {
              Server s = rule.choose(null);
              if (!containsSame(a, s) && !containsSame(b, s)) {
                failure.compareAndSet(null, "choose() returned " + s + ", in neither list");
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

  private static boolean containsSame(List<Server> list, Server s) {
    for (Server x : list) {
      if (x == s) {
        return true;
      }
    }
    return false;
  }
}
