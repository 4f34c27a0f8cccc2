package io.weighted.ribbon;

import static org.assertj.core.api.Assertions.assertThat;

import com.netflix.client.config.IClientConfig;
import com.netflix.loadbalancer.BaseLoadBalancer;
import com.netflix.loadbalancer.ILoadBalancer;
import com.netflix.loadbalancer.Server;
import com.netflix.loadbalancer.reactive.ExecutionContext;
import com.netflix.loadbalancer.reactive.ExecutionInfo;
import io.weighted.jni.ClockMode;
import io.weighted.jni.Engine;
import io.weighted.jni.Outcome;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The Ribbon rule inside a real BaseLoadBalancer, on a seeded manual-clock engine. */
class WeightedRuleTest {
  Engine engine;
  WeightedRule rule;
  BaseLoadBalancer lb;
  final AtomicLong nanos = new AtomicLong();

  @BeforeEach
  void setUp() {
    engine = Engine.create("{\"seed\": 3, \"slow_start\": {\"window_ms\": 0}, \"picker\": {\"mode\": \"weighted\"}}", ClockMode.MANUAL);
    rule = new WeightedRule(engine, "orders");
    lb = new BaseLoadBalancer();
    lb.setRule(rule);
    lb.addServers(List.of(new Server("h1", 80), new Server("h2", 80), new Server("h3", 80)));
  }

  @AfterEach
  void tearDown() {
    lb.shutdown();
    engine.close();
  }

  Map<String, Integer> counts(int n) {
    Map<String, Integer> c = new HashMap<>();
    for (int i = 0; i < n; i++) {
      c.merge(lb.chooseServer(null).getHost(), 1, Integer::sum);
    }
    return c;
  }

  @Test
  void spreadsOverEveryReachableServer() {
    Map<String, Integer> c = counts(3000);
    assertThat(c).containsOnlyKeys("h1", "h2", "h3");
    c.values().forEach(v -> assertThat(v).isBetween(880, 1120));
  }

  @Test
  void aServerListChangedInPlaceAndNewServerObjectsAreSeen() {
    List<Server> servers = new ArrayList<>(List.of(new Server("a1", 80), new Server("a2", 80)));
    ILoadBalancer same = new BaseLoadBalancer() {
      @Override
      public List<Server> getReachableServers() {
        return servers;  // one mutable list object, as a hand-written load balancer may keep
      }
    };
    WeightedRule r = new WeightedRule(engine, "inplace");
    r.setLoadBalancer(same);
    Map<String, Integer> c = new HashMap<>();
    for (int i = 0; i < 200; i++) {
      c.merge(r.choose(null).getHost(), 1, Integer::sum);
    }
    assertThat(c).containsOnlyKeys("a1", "a2");
    servers.set(1, new Server("a3", 80));  // replaced in place
    c.clear();
    for (int i = 0; i < 200; i++) {
      c.merge(r.choose(null).getHost(), 1, Integer::sum);
    }
    assertThat(c).containsOnlyKeys("a1", "a3");
    // New objects, same ids: the rule keeps the engine's set and hands out the new objects.
    Server fresh = new Server("a1", 80);
    servers.set(0, fresh);
    boolean sawFresh = false;
    for (int i = 0; i < 200; i++) {
      Server s = r.choose(null);
      sawFresh |= s == fresh;
      assertThat(s.getHost()).isIn("a1", "a3");
    }
    assertThat(sawFresh).isTrue();
    assertThat(r.getService().endpointKey("a1:80")).isNotZero();
  }

  @Test
  void listenerOutcomesMoveTrafficAwayAndRecoveryBringsItBack() {
    WeightedExecutionListener<Object, Integer> listener =
        new WeightedExecutionListener<>(rule, status -> status, nanos::get);
    ExecutionContext<Object> ctx = new ExecutionContext<>(new Object(), null, null, null);
    for (int i = 0; i < 300; i++) {
      Server s = lb.chooseServer(null);
      ExecutionInfo info = ExecutionInfo.create(s, 0, 0);
      listener.onStartWithServer(ctx, info);
      nanos.addAndGet(2_000_000);
      if (s.getHost().equals("h2")) {
        listener.onExceptionWithServer(ctx, new ConnectException("refused"), info);
      } else {
        listener.onExecutionSuccess(ctx, 200, info);
      }
    }
    engine.advance(Duration.ofSeconds(5));
    // Error rate 100%: the graded error rule's full penalty, so h2 is half-isolated at once and
    // gets probes only, a few percent of the picks.
    assertThat(counts(2000).getOrDefault("h2", 0)).isBetween(1, 100);

    // Healthy again: the bad samples leave the 10 s window, then the weight steps back up by
    // 10% of base per 5 s cycle (default profile).
    for (int round = 0; round < 12; round++) {
      for (int i = 0; i < 100; i++) {
        rule.record(lb.chooseServer(null), 2.0, Outcome.SUCCESS);
      }
      engine.advance(Duration.ofSeconds(5));
    }
    assertThat(counts(3000).get("h2")).isBetween(880, 1120);
  }

  record Reply(int status, String loadReport) {}

  @Test
  void aResponsesLoadReportFeedsTheResourceRules() {
    WeightedExecutionListener<Object, Reply> listener = new WeightedExecutionListener<>(rule,
        Reply::status, Reply::loadReport, nanos::get);
    ExecutionContext<Object> ctx = new ExecutionContext<>(new Object(), null, null, null);
    for (int i = 0; i < 300; i++) {
      Server s = lb.chooseServer(null);
      ExecutionInfo info = ExecutionInfo.create(s, 0, 0);
      listener.onStartWithServer(ctx, info);
      nanos.addAndGet(2_000_000);
      // Same latency, no errors: only h2's own report says it is busy.
      String cpu = s.getHost().equals("h2") ? "0.95" : "0.2";
      listener.onExecutionSuccess(ctx, new Reply(200, "TEXT cpu_utilization=" + cpu), info);
    }
    listener.onExecutionSuccess(ctx, new Reply(200, "TEXT cpu=1"),
        ExecutionInfo.create(lb.getAllServers().get(0), 0, 0));  // malformed: counted, no throw
    engine.advance(Duration.ofSeconds(5));
    // CPU over 80% adds 0.2: weights 1 : 0.8 : 1, so h2 gets 0.8 / 2.8 = 29% of the picks.
    assertThat(counts(2800).getOrDefault("h2", 0)).isBetween(700, 900);
    String snap = engine.snapshotJson();
    assertThat(snap).contains("\"bad_load_reports\":1");
    assertThat(snap).contains("\"resource_origin\":{\"cpu\":\"server\"");
  }

  @Test
  void serverListChangesAreForwarded() {
    counts(10);
    lb.addServer(new Server("h4", 80));
    assertThat(counts(4000)).containsKeys("h1", "h2", "h3", "h4");
    lb.setServersList(List.of(new Server("h1", 80)));
    assertThat(counts(50)).containsOnlyKeys("h1");
    rule.record(new Server("gone", 1), 1.0, Outcome.SUCCESS);  // unknown servers are ignored
  }

  @Test
  void aRemovedServiceIsReplacedAndTheServersRegisteredAgain() {
    counts(10);
    io.weighted.jni.Service removed = rule.getService();
    removed.remove();
    assertThat(counts(300)).containsOnlyKeys("h1", "h2", "h3");
    assertThat(rule.getService()).isNotSameAs(removed);
    assertThat(rule.getService().isClosed()).isFalse();
    rule.record(lb.chooseServer(null), 1.0, Outcome.SUCCESS);  // reaches the new service
    engine.runCycle();
    long requests = 0;
    for (Object svc : (List<?>) io.weighted.jni.Json.parseObject(engine.snapshotJson())
        .get("services")) {
      for (Object e : (List<?>) ((Map<?, ?>) svc).get("endpoints")) {
        requests += ((Number) ((Map<?, ?>) ((Map<?, ?>) e).get("window")).get("requests"))
            .longValue();
      }
    }
    assertThat(requests).isEqualTo(1);
  }

  @Test
  void exceptionsAreClassified() {
    assertThat(WeightedExecutionListener.classify(new SocketTimeoutException()))
        .isEqualTo(Outcome.TIMEOUT);
    assertThat(WeightedExecutionListener.classify(new RuntimeException(new ConnectException())))
        .isEqualTo(Outcome.CONNECT_ERROR);
    assertThat(WeightedExecutionListener.classify(new IllegalStateException())).isNull();
  }

  @Test
  void ribbonStyleInitUsesTheClientNameAndConfigKey() {
    WeightedRule byName = new WeightedRule();
    byName.initWithNiwsConfig(clientConfig("billing"));
    assertThat(byName.getService().name()).isEqualTo("billing");
    assertThat(byName.getEngine()).isSameAs(WeightedRule.sharedEngine(null));
  }

  /** A client config as Ribbon hands rules one: a name, and no WeightedConfig set. */
  static IClientConfig clientConfig(String name) {
    return (IClientConfig) java.lang.reflect.Proxy.newProxyInstance(
        IClientConfig.class.getClassLoader(), new Class<?>[] {IClientConfig.class},
        (proxy, method, args) -> switch (method.getName()) {
          case "getClientName" -> name;
          case "toString" -> "IClientConfig[" + name + "]";
          case "hashCode" -> System.identityHashCode(proxy);
          case "equals" -> proxy == args[0];
          default -> method.getReturnType() == boolean.class ? false : null;
        });
  }
}
