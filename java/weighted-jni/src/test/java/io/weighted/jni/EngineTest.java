package io.weighted.jni;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The JNI wrapper: behaviour, error mapping and the close guard. Manual clock throughout. */
class EngineTest {
  // The exact (weighted) picker: these tests assert pick frequencies against weights.
  static final String SEEDED =
      "{\"seed\": 42, \"slow_start\": {\"window_ms\": 0}, \"picker\": {\"mode\": \"weighted\"}}";

  Engine engine;
  Service svc;

  @BeforeEach
  void setUp() {
    engine = Engine.create(SEEDED, ClockMode.MANUAL);
    svc = engine.service("orders");
    svc.setEndpoints(new String[] {"a:80", "b:80", "c:80"}, new double[] {1, 1, 1});
  }

  @AfterEach
  void tearDown() {
    engine.close();
  }

  @Test
  void libraryLoadsAndReportsItsVersion() {
    assertThat(Engine.libraryVersion()).startsWith("2.");
    assertThat(NativeLibrary.platform()).matches("[a-z]+-[a-z0-9_]+");
  }

  @Test
  void picksCoverEveryEndpointAndMapBackToIds() {
    int[] counts = new int[3];
    for (int i = 0; i < 3000; i++) {
      Pick p = svc.pick();
      assertThat(p.epoch()).isEqualTo(1);
      assertThat(svc.endpointId(p.key())).isEqualTo(new String[] {"a:80", "b:80", "c:80"}[p.index()]);
      counts[p.index()]++;
      svc.complete(p, 5.0, Outcome.SUCCESS);
    }
    for (int c : counts) {
      assertThat(c).isBetween(850, 1150);
    }
  }

  @Test
  void pickIntoIsTheAllocationFreeFormOfPick() {
    long[] out = new long[4];
    svc.pickInto(out);
    Pick p = Pick.fromPacked(out);
    assertThat(p.index()).isBetween(0, 2);
    assertThat(p.key()).isEqualTo(svc.endpointKey(svc.endpointId(p.key())));
    svc.complete(p.key(), p.epoch(), p.index(), p.flags(), p.ticket(), 1.0,
        Outcome.SUCCESS.code());
  }

  @Test
  void loadAwarePicksAreTrackedUntilCompletedOrCancelled() {
    try (Engine e = Engine.create("{\"seed\": 1, \"picker\": {\"mode\": \"load_aware\"}}",
        ClockMode.MANUAL)) {
      Service s = e.service("la");
      s.setEndpoints(new String[] {"x:1", "y:1"}, new double[] {1, 1});
      Pick a = s.pick();
      Pick b = s.pick();
      assertThat(a.isTracked()).isTrue();
      assertThat(inflight(e)).isEqualTo(2);
      s.complete(a, 3.0, Outcome.SUCCESS);
      s.cancel(b);
      assertThat(inflight(e)).isZero();
    }
  }

  /**
   * A tracked pick carries the controller cycle that counted it in its ticket (C ABI 1 kept only
   * its low byte, in the top of the flags): past cycle 127, and past 255, the pick still reads
   * as a pick of its own set, and completing it with its ticket releases its in-flight count.
   */
  @Test
  void loadAwarePicksStayPicksAfterTheCycleByteReaches128() {
    try (Engine e = Engine.create("{\"seed\": 1, \"picker\": {\"mode\": \"load_aware\"}, "
        + "\"controller\": {\"interval_ms\": 1000}}", ClockMode.MANUAL)) {
      Service s = e.service("la");
      EndpointTable<String> table = s.setEndpoints(new String[] {"x:1", "y:1"}, new double[] {1, 1});
      for (int cycle = 1; cycle <= 260; cycle++) {
        e.advance(java.time.Duration.ofSeconds(1));
        Picked p = s.pick(new Picked());
        assertThat(table.contains(p.entry())).isTrue();
        int index = p.index();
        assertThat(index).isBetween(0, 1);
        assertThat(p.key()).isEqualTo(table.key(index));
        assertThat(p.flags() & Pick.TRACKED).isEqualTo(Pick.TRACKED);
        assertThat(p.ticket()).isEqualTo(cycle);
        assertThat(inflight(e)).isEqualTo(1);
        s.complete(p.key(), p.epoch(), index, p.flags(), p.ticket(), 2.0, Outcome.SUCCESS.code());
        assertThat(inflight(e)).as("cycle %d", cycle).isZero();
      }
    }
  }

  static long inflight(Engine e) {
    long n = 0;
    for (Object s : (List<?>) Json.parseObject(e.snapshotJson()).get("services")) {
      for (Object ep : (List<?>) ((Map<?, ?>) s).get("endpoints")) {
        n += ((Number) ((Map<?, ?>) ep).get("inflight")).longValue();
      }
    }
    return n;
  }

  @Test
  void failingEndpointLosesTrafficAfterACycle() {
    long key = svc.endpointKey("b:80");
    for (int i = 0; i < 200; i++) {
      Pick p = svc.pick();
      svc.complete(p, 10.0, p.key() == key ? Outcome.HTTP_5XX : Outcome.SUCCESS);
    }
    engine.advance(Duration.ofSeconds(5));
    int toB = 0;
    for (int i = 0; i < 1000; i++) {
      Pick p = svc.pick();
      if (p.key() == key) {
        toB++;
      }
      svc.cancel(p);
    }
    assertThat(toB).isLessThan(250);  // 5xx rate 100% > 1%: penalty 0.5, weight halved at once
    Map<String, Object> snap = Json.parseObject(engine.snapshotJson());
    assertThat(snap.get("clock")).isEqualTo("manual");
    assertThat(engine.prometheusText()).contains("weighted_endpoint_weight");
  }

  @Test
  void badConfigsThrowConfigExceptionWithWhereAndWhy() {
    assertThatThrownBy(() -> Engine.create("{\"controller\": ", ClockMode.MANUAL))
        .isInstanceOf(ConfigException.class)
        .satisfies(e -> assertThat(((WeightedException) e).status()).isEqualTo(Status.CONFIG_PARSE))
        .hasMessageContaining("WT_ERR_CONFIG_PARSE").hasMessageContaining("line");
    assertThatThrownBy(() -> Engine.validateConfig("{\"controller\": {\"interval_ms\": \"5s\"}}"))
        .isInstanceOf(ConfigException.class)
        .satisfies(e -> assertThat(((WeightedException) e).status()).isEqualTo(Status.CONFIG_INVALID))
        .hasMessageContaining("interval_ms");
    assertThatThrownBy(() -> Engine.validateConfig("{\"no_such_key\": 1}"))
        .isInstanceOf(ConfigException.class).hasMessageContaining("no_such_key");
    assertThatThrownBy(() -> Engine.fromFile(Path.of("/nonexistent/weighted.json"), ClockMode.REAL))
        .isInstanceOf(ConfigException.class)
        .satisfies(e -> assertThat(((WeightedException) e).status()).isEqualTo(Status.IO));
  }

  @Test
  void resolveFillsDefaultsAndFileConfigsWork(@TempDir Path dir) throws Exception {
    Map<String, Object> resolved = Json.parseObject(Engine.resolveConfig("{}"));
    assertThat(resolved.get("profile")).isEqualTo("default");
    Path file = dir.resolve("weighted.json");
    Files.writeString(file, "{\"profile\": \"article\"}", StandardCharsets.UTF_8);
    try (Engine e = Engine.fromFile(file, ClockMode.MANUAL)) {
      assertThat(Json.parseObject(e.snapshotJson()).get("profile")).isEqualTo("article");
      e.reloadFromFile(file);
    }
  }

  @Test
  void invalidReloadKeepsTheOldConfig() {
    String before = engine.snapshotJson();
    assertThatThrownBy(() -> engine.reload("{\"window\": {\"length_ms\": -1}}"))
        .isInstanceOf(ConfigException.class).hasMessageContaining("length_ms");
    assertThat(Json.parseObject(engine.snapshotJson()).get("profile"))
        .isEqualTo(Json.parseObject(before).get("profile"));
    engine.reload("{\"seed\": 7}");
  }

  @Test
  void unknownEndpointIsNotFound() {
    assertThatThrownBy(() -> svc.endpointKey("zz:1")).isInstanceOf(NotFoundException.class)
        .hasMessageContaining("zz:1");
    assertThatThrownBy(() -> svc.report("zz:1", 1.0, Outcome.SUCCESS))
        .isInstanceOf(NotFoundException.class);
  }

  @Test
  void staleKeyIsReportedAsStale() {
    Pick p = svc.pick();
    String id = svc.endpointId(p.key());
    List<String> rest = new ArrayList<>(List.of("a:80", "b:80", "c:80"));
    rest.remove(id);
    svc.setEndpoints(rest.toArray(new String[0]), new double[] {1, 1});
    assertThatThrownBy(() -> svc.complete(p, 3.0, Outcome.SUCCESS))
        .isInstanceOf(StaleEndpointException.class)
        .satisfies(e -> assertThat(((WeightedException) e).status()).isEqualTo(Status.STALE));
  }

  @Test
  void badArgumentsAreRejectedAndStateIsUnchanged() {
    Pick p = svc.pick();
    String before = totals();
    for (double bad : new double[] {Double.NaN, -1.0, Double.POSITIVE_INFINITY, 1e12}) {
      assertThatThrownBy(() -> svc.complete(p, bad, Outcome.SUCCESS))
          .isInstanceOf(WeightedException.class)
          .satisfies(e -> assertThat(((WeightedException) e).status())
              .isEqualTo(Status.INVALID_ARGUMENT));
    }
    assertThatThrownBy(() -> svc.complete(p.key(), p.epoch(), p.index(), p.flags(), p.ticket(),
        1.0, 17))
        .isInstanceOf(WeightedException.class);
    assertThat(totals()).isEqualTo(before);
    assertThatThrownBy(() -> svc.setEndpoints(new String[] {"x:1", "x:1"}, new double[] {1, 1}))
        .satisfies(e -> assertThat(((WeightedException) e).status()).isEqualTo(Status.DUPLICATE));
    assertThatThrownBy(() -> svc.setEndpoints(new String[] {"x:1"}, new double[] {0}))
        .satisfies(e -> assertThat(((WeightedException) e).status())
            .isEqualTo(Status.INVALID_ARGUMENT));
    assertThatThrownBy(() -> svc.setEndpoints(new String[] {"x:1"}, new double[] {1, 2}))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> svc.setEndpoints(new String[] {"x\u0000y"}, new double[] {1}))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("NUL");
    assertThatThrownBy(() -> engine.service("")).isInstanceOf(WeightedException.class);
    assertThatThrownBy(() -> svc.reportResources("a:80", Resources.cpu(1.5)))
        .satisfies(e -> assertThat(((WeightedException) e).status())
            .isEqualTo(Status.INVALID_ARGUMENT));
    assertThat(svc.endpointKey("a:80")).isNotZero();  // the rejected sets changed nothing
    svc.complete(p, 1.0, Outcome.SUCCESS);
  }

  @Test
  void emptySetHasNoEndpoint() {
    Service empty = engine.service("empty");
    assertThatThrownBy(empty::pick).isInstanceOf(NoEndpointException.class);
    empty.setEndpoints(new String[0], new double[0]);
    assertThatThrownBy(empty::pick).isInstanceOf(NoEndpointException.class);
  }

  @Test
  void manualClockCallsOnARealClockEngineAreWrongClock() {
    try (Engine real = Engine.create("{}")) {
      assertThatThrownBy(() -> real.advance(Duration.ofSeconds(1)))
          .satisfies(e -> assertThat(((WeightedException) e).status())
              .isEqualTo(Status.WRONG_CLOCK));
      assertThat(real.nowNanos()).isPositive();
    }
  }

  @Test
  void eventsArePolledInOrder() {
    List<Event> events = engine.drainEvents();
    assertThat(events).extracting(Event::type).contains(EventType.ENDPOINT_ADDED);
    assertThat(events).filteredOn(e -> e.type() == EventType.ENDPOINT_ADDED)
        .extracting(Event::endpoint).containsExactlyInAnyOrder("a:80", "b:80", "c:80");
    assertThat(engine.pollEvent()).isEmpty();
  }

  @Test
  void batchReportsRecordValidEntriesAndFlagTheRest() {
    long a = svc.endpointKey("a:80");
    int[] statuses = new int[3];
    int recorded = svc.reportBatch(new long[] {a, a, 12345L}, new double[] {1, Double.NaN, 1},
        new int[] {0, 0, 0}, statuses);
    assertThat(recorded).isEqualTo(1);
    assertThat(statuses[0]).isZero();
    assertThat(Status.of(statuses[1])).isEqualTo(Status.INVALID_ARGUMENT);
    assertThat(statuses[2]).isNotZero();
  }

  @Test
  void closeRunsOnceAndUseAfterCloseThrowsIllegalState() {
    engine.close();
    engine.close();
    assertThat(engine.isClosed()).isTrue();
    assertThatThrownBy(svc::pick).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> svc.complete(new Pick(1, 1, 0, 0, 0), 1, Outcome.SUCCESS))
        .isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(engine::snapshotJson).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> engine.service("new")).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> engine.advance(Duration.ofSeconds(1)))
        .isInstanceOf(IllegalStateException.class);
  }

  @Test
  void closeWhileOtherThreadsPickNeverCrashes() throws Exception {
    int threads = 4;
    CountDownLatch running = new CountDownLatch(threads);
    AtomicLong picks = new AtomicLong();
    AtomicReference<Throwable> unexpected = new AtomicReference<>();
    List<Thread> ts = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      Thread th = new Thread(() -> {
        running.countDown();
        try {
          while (true) {
            Pick p = svc.pick();
            svc.complete(p, 1.0, Outcome.SUCCESS);
            picks.incrementAndGet();
          }
        } catch (IllegalStateException closed) {
          // the expected way out
        } catch (Throwable e) {
          unexpected.set(e);
        }
      });
      th.start();
      ts.add(th);
    }
    running.await();
    while (picks.get() < 10_000) {
      Thread.onSpinWait();
    }
    engine.close();
    for (Thread th : ts) {
      th.join(10_000);
      assertThat(th.isAlive()).isFalse();
    }
    assertThat(unexpected.get()).isNull();
  }

  private String totals() {
    StringBuilder b = new StringBuilder();
    Map<String, Object> snap = Json.parseObject(engine.snapshotJson());
    for (Object s : (List<?>) snap.get("services")) {
      for (Object e : (List<?>) ((Map<?, ?>) s).get("endpoints")) {
        b.append(((Map<?, ?>) e).get("totals"));
      }
    }
    return b.toString();
  }
}
