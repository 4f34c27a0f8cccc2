package io.weighted.discovery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.weighted.jni.Engine;
import io.weighted.jni.Json;
import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.loadbalancer.core.CachingServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.core.DelegatingServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.core.HealthCheckServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.HttpEntity;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.web.client.RestTemplate;

/**
 * The discovery events of a real registry while a load-balanced client sends requests, run in
 * order against one client context (one per registry keeps the suite's time down). A subclass
 * starts its registry and says how a backend registers, leaves, changes weight, and how the
 * registry goes down and comes back. The engine runs on the manual clock: slow start moves only
 * when a step advances it; the lists move on the registry's and Spring's own timers, which the
 * steps wait for by polling what the client sees (its discovery client, its supplier chain, the
 * engine's snapshot), with a bound.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
abstract class DiscoveryScenario {
  static final String SERVICE = "backend";
  static final Duration BOUND = Duration.ofSeconds(30);

  protected final Map<String, Backend> backends = new LinkedHashMap<>();
  /** The instance id each backend is registered under now. */
  protected final Map<String, String> instanceIds = new HashMap<>();
  protected ConfigurableApplicationContext client;
  private Engine engine;
  private RestTemplate rest;
  private final AtomicLong seq = new AtomicLong();
  private Traffic traffic;
  private long keyOfCBeforeLeaving;

  /** The client's properties for this registry (its address, its discovery client on). */
  protected abstract Map<String, Object> registryProperties();

  protected abstract void register(Backend b, String instanceId, String weight) throws Exception;

  protected abstract void deregister(Backend b, String instanceId) throws Exception;

  protected abstract void setWeight(Backend b, String instanceId, String weight) throws Exception;

  /** Takes the registry down; returns once it refuses connections. */
  protected abstract void stopRegistry() throws Exception;

  /** Whether the client has noticed that the registry is down (several failed refreshes). */
  protected abstract boolean clientSeesOutage();

  /** Brings the registry back on the same address, with the backends registered as before. */
  protected abstract void startRegistry() throws Exception;

  /**
   * Whether every instance stays in the list while the registry comes back (then every endpoint
   * keeps its engine state across the restart); false where a list read during the comeback
   * can lack an instance for a moment.
   */
  protected abstract boolean restartKeepsEveryEndpoint();

  static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  void startClient() {
    Map<String, Object> p = new HashMap<>();
    p.put("spring.main.web-application-type", "none");
    p.put("spring.main.banner-mode", "off");
    p.put("weighted.loadbalancer.config", "classpath:discovery-weighted.json");
    p.put("weighted.loadbalancer.clock", "manual");
    p.put("weighted.loadbalancer.reload.enabled", "false");
    // Short timers so that each event reaches the balancer in about a second.
    p.put("spring.cloud.loadbalancer.cache.ttl", "300ms");
    p.put("spring.cloud.loadbalancer.health-check.interval", "300ms");
    p.put("spring.cloud.loadbalancer.health-check.initial-delay", "0");
    // Without it the health-check supplier reads discovery once and never sees a change.
    p.put("spring.cloud.loadbalancer.health-check.refetch-instances", "true");
    p.put("spring.cloud.loadbalancer.health-check.refetch-instances-interval", "300ms");
    // Otherwise each round hands out a growing list as the checks answer ([a], [a, c], ...):
    // to the balancer the instances not yet checked have left, and lose their state.
    p.put("spring.cloud.loadbalancer.health-check.update-results-list", "false");
    p.put("spring.cloud.loadbalancer.service-discovery.timeout", "1s");
    p.putAll(registryProperties());
    client = new SpringApplicationBuilder(ClientApp.class).properties(p).run();
    engine = client.getBean(Engine.class);
    rest = client.getBean("loadBalanced", RestTemplate.class);
  }

  @AfterAll
  void stopAll() {
    if (traffic != null) {
      traffic.close();
    }
    if (client != null) {
      client.close();
    }
    backends.values().forEach(Backend::close);
  }

  // ---- the events, in order ----

  @Test
  @Order(1)
  void threeBackendsRegisterAndShareTraffic() throws Exception {
    for (String n : List.of("a", "b", "c")) {
      Backend b = new Backend(n);
      backends.put(n, b);
      register(b, n + "-1", "1");
      instanceIds.put(n, n + "-1");
    }
    awaitEndpoints("a", "b", "c");
    assertThat(supplierChain()).as("the suppliers a production app stacks")
        .anyMatch(s -> s instanceof CachingServiceInstanceListSupplier)
        .anyMatch(s -> s instanceof HealthCheckServiceInstanceListSupplier);
    // The three may have arrived one list apart (the later ones then slow-start): end it.
    engine.advance(Duration.ofSeconds(31));
    traffic = new Traffic();
    Map<String, Integer> c = burst(450, "/work");
    assertThat(c.keySet()).containsExactlyInAnyOrder("a", "b", "c");
    assertThat(c.values()).allSatisfy(v -> assertThat(v).isBetween(90, 210));
    traffic.assertNoFailure();
  }

  @Test
  @Order(2)
  void aNewBackendSlowStartsInsteadOfTakingItsShareAtOnce() throws Exception {
    Backend d = new Backend("d");
    backends.put("d", d);
    register(d, "d-1", "1");
    instanceIds.put("d", "d-1");
    awaitEndpoints("a", "b", "c", "d");
    assertThat(endpoint("d").get("effective_weight")).as("slow start's min_fraction")
        .satisfies(w -> assertThat(((Number) w).doubleValue()).isLessThan(0.2));
    Map<String, Integer> early = burst(600, "/work");
    // min_fraction 0.1 against three at 1: about 3% (19); its full share would be 25% (150).
    assertThat(early.getOrDefault("d", 0)).as("d while slow-starting").isBetween(3, 60);

    engine.advance(Duration.ofSeconds(31));  // the 30 s window passes on the engine's clock
    Map<String, Integer> later = burst(600, "/work");
    assertThat(later.get("d")).as("d after the window").isBetween(90, 210);
    traffic.assertNoFailure();
  }

  @Test
  @Order(3)
  void aDeregisteredBackendGetsNothingOnceTheListRefreshesAndItsInFlightCallsAreStale()
      throws Exception {
    traffic.pause();  // exact counts of stale outcomes below
    Backend c = backends.get("c");
    c.holdRequests(true);
    ExecutorService pool = Executors.newFixedThreadPool(8);
    List<Future<String>> calls = new ArrayList<>();
    try {
      // Requests go to every backend; the ones on c wait there until released.
      await().atMost(BOUND).until(() -> {
        calls.add(pool.submit(() -> call("/hold")));
        return c.holding.get() >= 3;
      });
      // A call picked for c may still be on its way there: wait until every unfinished call is
      // one that c holds, so the calls in flight on c are exactly the ones it counts.
      await().atMost(BOUND).until(
          () -> calls.stream().filter(f -> !f.isDone()).count() == c.holding.get());
      long staleBefore = staleReports();
      keyOfCBeforeLeaving = key("c");
      int heldOnC = c.holding.get();
      deregister(c, instanceIds.get("c"));
      awaitEndpoints("a", "b", "d");
      long firstAfter = seq.get();  // every call numbered from here chose after the refresh
      Map<String, Integer> after = burst(300, "/work");
      assertThat(after).doesNotContainKey("c");
      c.release();
      for (Future<String> f : calls) {
        assertThat(f.get(30, TimeUnit.SECONDS)).isIn("a", "b", "c", "d");
      }
      assertThat(c.seqs).as("calls c served").allSatisfy(s -> assertThat(s).isLessThan(firstAfter));
      // Each call that was on c when it left completes as stale: none lands on another endpoint.
      await().atMost(BOUND).until(() -> staleReports() - staleBefore >= heldOnC);
      assertThat(staleReports() - staleBefore).isEqualTo(heldOnC);
    } finally {
      c.holdRequests(false);
      c.release();
      pool.shutdownNow();
      traffic.resume();
    }
    traffic.assertNoFailure();
  }

  @Test
  @Order(4)
  void aBackendBackOnTheSameAddressAfterLeavingStartsAfresh() throws Exception {
    Backend c = backends.get("c");
    c.restart();
    register(c, "c-2", "1");  // a restart registers under a new instance id
    instanceIds.put("c", "c-2");
    awaitEndpoints("a", "b", "c", "d");
    Map<String, Object> e = endpoint("c");
    assertThat(((Number) e.get("effective_weight")).doubleValue()).as("slow start again")
        .isLessThan(0.2);
    assertThat(key("c")).as("a new engine endpoint, not the one that left")
        .isNotEqualTo(keyOfCBeforeLeaving);
    engine.advance(Duration.ofSeconds(31));
    traffic.assertNoFailure();
  }

  @Test
  @Order(5)
  void aQuickRestartThatNeverLeavesTheListKeepsTheEndpointsState() throws Exception {
    Backend b = backends.get("b");
    burst(100, "/work");
    Map<String, Object> before = endpoint("b");
    long keyBefore = key("b");
    register(b, "b-2", "1");  // the new process registers before the old one's entry goes
    deregister(b, instanceIds.get("b"));
    instanceIds.put("b", "b-2");
    await().atMost(BOUND).until(() -> balancerInstanceIds().contains("b-2")
        && !balancerInstanceIds().contains("b-1"));
    burst(100, "/work");
    Map<String, Object> after = endpoint("b");
    assertThat(key("b")).as("the same engine endpoint").isEqualTo(keyBefore);
    assertThat(total(after)).as("its outcomes kept").isGreaterThan(total(before));
    assertThat(((Number) after.get("effective_weight")).doubleValue()).as("no slow start")
        .isEqualTo(((Number) after.get("base_weight")).doubleValue());
    traffic.assertNoFailure();
  }

  @Test
  @Order(6)
  void aWeightChangedInTheRegistryBecomesTheBaseWeight() throws Exception {
    Backend a = backends.get("a");
    setWeight(a, instanceIds.get("a"), "3");
    await().atMost(BOUND).until(() -> baseWeight("a") == 3.0);
    Map<String, Integer> c = burst(600, "/work");
    assertThat(c.get("a")).as("3 against three at 1: half").isBetween(230, 370);
    traffic.assertNoFailure();
  }

  @Test
  @Order(7)
  void theRegistryDownForAWhileLeavesTheListAndTheEngineAsTheyWere() throws Exception {
    Map<String, Object> before = service();
    stopRegistry();
    await().atMost(BOUND).until(this::clientSeesOutage);
    Map<String, Integer> during = burst(300, "/work");
    assertThat(during.keySet()).containsExactlyInAnyOrder("a", "b", "c", "d");
    traffic.assertNoFailure();
    Map<String, Object> still = service();
    assertThat(keysAndWeights(still)).as("the same endpoints, keys and base weights")
        .isEqualTo(keysAndWeights(before));
    assertThat(totalsById(still)).as("outcomes kept and counted on")
        .allSatisfy((id, n) -> assertThat(n).isGreaterThan(totalsById(before).get(id)));

    startRegistry();
    setWeight(backends.get("b"), instanceIds.get("b"), "2");  // discovery is in the loop again
    await().atMost(BOUND).until(() -> engineIds().contains(backends.get("b").id())
        && baseWeight("b") == 2.0);
    awaitEndpoints("a", "b", "c", "d");
    if (restartKeepsEveryEndpoint()) {
      Map<String, List<Object>> back = keysAndWeights(service());
      keysAndWeights(still).forEach((id, kw) ->
          assertThat(back.get(id).get(0)).as("%s kept its key", id).isEqualTo(kw.get(0)));
    }
    traffic.assertNoFailure();
  }

  // ---- helpers ----

  /** One load-balanced call, numbered before it chooses. */
  String call(String path) {
    HttpHeaders h = new HttpHeaders();
    h.add("X-Seq", Long.toString(seq.getAndIncrement()));
    return rest.exchange("http://" + SERVICE + path, HttpMethod.GET, new HttpEntity<>(h),
        String.class).getBody();
  }

  /** n calls from four threads at once (both cores busy), counted by the backend that answered. */
  Map<String, Integer> burst(int n, String path) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Future<String>> calls = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        calls.add(pool.submit(() -> call(path)));
      }
      Map<String, Integer> c = new HashMap<>();
      for (Future<String> f : calls) {
        c.merge(f.get(30, TimeUnit.SECONDS), 1, Integer::sum);
      }
      return c;
    } finally {
      pool.shutdownNow();
    }
  }

  void awaitEndpoints(String... names) {
    Set<String> want = new TreeSet<>();
    for (String n : names) {
      want.add(backends.get(n).id());
    }
    await().atMost(BOUND).pollInterval(Duration.ofMillis(50)).until(() -> {
      if (engineIds().equals(want)) {
        return true;
      }
      try {
        call("/work");  // a choose() hands the list to the engine
      } catch (RuntimeException e) {
        // No list yet (the first fetch has not come back): the next poll asks again.
      }
      return false;
    });
  }

  Set<String> engineIds() {
    Set<String> ids = new TreeSet<>();
    for (Map<String, Object> e : endpoints(service())) {
      ids.add((String) e.get("id"));
    }
    return ids;
  }

  Map<String, Object> service() {
    Map<String, Object> snap = Json.parseObject(engine.snapshotJson());
    for (Object s : (List<?>) snap.get("services")) {
      @SuppressWarnings("unchecked")
      Map<String, Object> m = (Map<String, Object>) s;
      if (SERVICE.equals(m.get("name"))) {
        return m;
      }
    }
    return Map.of("endpoints", List.of());
  }

  @SuppressWarnings("unchecked")
  static List<Map<String, Object>> endpoints(Map<String, Object> service) {
    return (List<Map<String, Object>>) service.get("endpoints");
  }

  Map<String, Object> endpoint(String backend) {
    String id = backends.get(backend).id();
    for (Map<String, Object> e : endpoints(service())) {
      if (id.equals(e.get("id"))) {
        return e;
      }
    }
    throw new AssertionError("no endpoint " + id + " in " + engineIds());
  }

  double baseWeight(String backend) {
    return ((Number) endpoint(backend).get("base_weight")).doubleValue();
  }

  /** Outcomes recorded over the endpoint's life, of every kind. */
  static long total(Map<String, Object> endpoint) {
    long n = 0;
    for (Object v : ((Map<?, ?>) endpoint.get("totals")).values()) {
      n += ((Number) v).longValue();
    }
    return n;
  }

  long staleReports() {
    return ((Number) service().get("stale_reports")).longValue();
  }

  /** The engine's key of an endpoint (from the binding: the snapshot's JSON numbers are doubles). */
  long key(String backend) {
    return engine.service(SERVICE).endpointKey(backends.get(backend).id());
  }

  /** Each endpoint's id, engine key and base weight. */
  Map<String, List<Object>> keysAndWeights(Map<String, Object> service) {
    Map<String, List<Object>> m = new HashMap<>();
    for (Map<String, Object> e : endpoints(service)) {
      String id = (String) e.get("id");
      m.put(id, List.of(engine.service(SERVICE).endpointKey(id), e.get("base_weight")));
    }
    return m;
  }

  static Map<String, Long> totalsById(Map<String, Object> service) {
    Map<String, Long> m = new HashMap<>();
    for (Map<String, Object> e : endpoints(service)) {
      m.put((String) e.get("id"), total(e));
    }
    return m;
  }

  /** The client's supplier chain for the service, outermost first. */
  List<ServiceInstanceListSupplier> supplierChain() {
    List<ServiceInstanceListSupplier> chain = new ArrayList<>();
    ServiceInstanceListSupplier s = client.getBean(LoadBalancerClientFactory.class)
        .getInstance(SERVICE, ServiceInstanceListSupplier.class);
    while (s != null) {
      chain.add(s);
      s = s instanceof DelegatingServiceInstanceListSupplier d ? d.getDelegate() : null;
    }
    return chain;
  }

  /** The instance ids in the list the balancer is handed now (through every supplier). */
  Set<String> balancerInstanceIds() {
    Set<String> ids = new TreeSet<>();
    List<ServiceInstance> list = supplierChain().get(0).get().blockFirst(Duration.ofSeconds(5));
    if (list != null) {
      list.forEach(i -> ids.add(i.getInstanceId()));
    }
    return ids;
  }

  /**
   * Requests in the background through every step, paced so the two cores are not saturated;
   * any failure is kept and fails the step that checks.
   */
  final class Traffic implements AutoCloseable {
    private final Thread thread;
    private volatile boolean running = true;
    private volatile boolean paused;
    final AtomicLong sent = new AtomicLong();
    final AtomicLong failures = new AtomicLong();
    final AtomicReference<Throwable> lastFailure = new AtomicReference<>();

    Traffic() {
      thread = new Thread(this::run, "discovery-traffic");
      thread.setDaemon(true);
      thread.start();
    }

    private void run() {
      while (running) {
        synchronized (this) {
          if (!paused) {
            try {
              call("/work");
              sent.incrementAndGet();
            } catch (RuntimeException e) {
              failures.incrementAndGet();
              lastFailure.set(e);
            }
          }
        }
        LockSupport.parkNanos(10_000_000);
      }
    }

    /** Returns once no background request is in flight. */
    synchronized void pause() {
      paused = true;
    }

    void resume() {
      paused = false;
    }

    void assertNoFailure() {
      assertThat(failures.get()).as("background requests failed (of %d sent), last: %s",
          sent.get(), lastFailure.get()).isZero();
    }

    @Override
    public void close() {
      running = false;
      try {
        thread.join(5000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
