package io.weighted.jni;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Endpoint sets with the caller's items: picks resolve to the item of the set they were drawn
 * from, the engine releases the items' references once no pick can return them, and removed
 * services close.
 */
class EndpointTableTest {
  static final String CONFIG =
      "{\"seed\": 11, \"slow_start\": {\"window_ms\": 0}, \"picker\": {\"mode\": \"weighted\"}}";

  Engine engine;
  Service svc;

  @BeforeEach
  void setUp() {
    engine = Engine.create(CONFIG, ClockMode.MANUAL);
    svc = engine.service("orders");
  }

  @AfterEach
  void tearDown() {
    engine.close();
  }

  record Backend(String host) {}

  @Test
  void aSetComesBackWithItsKeysEpochAndItems() {
    List<Backend> items = List.of(new Backend("a"), new Backend("b"));
    EndpointTable<Backend> t = svc.setEndpoints(items, new String[] {"a:1", "b:1"},
        new double[] {1, 3});
    assertThat(t.epoch()).isEqualTo(1);
    assertThat(t.size()).isEqualTo(2);
    assertThat(t.items()).containsExactlyElementsOf(items);
    for (int i = 0; i < 2; i++) {
      assertThat(t.key(i)).isEqualTo(svc.endpointKey(t.id(i)));
      assertThat(t.entry(i).key()).isEqualTo(t.key(i));
      assertThat(t.entry(i).epoch()).isEqualTo(1);
      assertThat(t.entry(i).index()).isEqualTo(i);
    }
    assertThat(t.indexOf("b:1")).isEqualTo(1);
    assertThat(t.indexOf("zz:1")).isEqualTo(-1);
    assertThat(t.baseWeight(1)).isEqualTo(3.0);
    int[] counts = new int[2];
    for (int i = 0; i < 4000; i++) {
      Picked p = svc.pick(new Picked());
      assertThat(t.contains(p.entry())).isTrue();
      assertThat(p.item()).isSameAs(items.get(p.index()));
      assertThat(p.id()).isEqualTo(t.id(p.index()));
      assertThat(p.key()).isEqualTo(t.key(p.index()));
      assertThat(p.epoch()).isEqualTo(t.epoch());
      counts[p.index()]++;
      svc.complete(p, 1.0, Outcome.SUCCESS);
    }
    assertThat(counts[1]).isBetween(2850, 3150);
    // An endpoint that stays keeps its key; the table of the next set says so.
    EndpointTable<String> next = svc.setEndpoints(new String[] {"b:1", "c:1"}, new double[] {1, 1});
    assertThat(next.key(0)).isEqualTo(t.key(1));
    assertThat(next.epoch()).isEqualTo(2);
    assertThat(t.contains(next.entry(0))).isFalse();
  }

  @Test
  void aTablesPickResolvesInTheSetInstalledNowWhicheverThatIs() {
    EndpointTable<String> a = svc.setEndpoints(new String[] {"a:1", "b:1"}, new double[] {1, 1});
    for (int i = 0; i < 100; i++) {
      Picked p = a.pick(new Picked());
      assertThat(a.contains(p.entry())).isTrue();
      assertThat(p.key()).isEqualTo(a.key(p.index()));
      assertThat(p.epoch()).isEqualTo(a.epoch());
      assertThat(p.item()).isEqualTo(a.id(p.index()));
    }
    EndpointTable<String> b = svc.setEndpoints(new String[] {"c:1"}, new double[] {1});
    Picked p = a.pick(new Picked());  // a's set is gone: the pick is b's
    assertThat(b.contains(p.entry())).isTrue();
    assertThat(p.id()).isEqualTo("c:1");
    assertThat(p.key()).isEqualTo(b.key(0));
    assertThat(p.epoch()).isEqualTo(b.epoch());
  }

  /**
   * A pick through a table whose set another thread has replaced: it resolves to the newer set's
   * entry, with that set's key and epoch, through a resolver and into a Picked alike; and the
   * reference that carried the entry across JNI is dropped (the set's items can go once it is
   * released).
   */
  @Test
  void aPickFromASetAnotherThreadInstalledResolvesToThatSet() throws Exception {
    EndpointTable<String> a = svc.setEndpoints(new String[] {"a:1", "b:1"}, new double[] {1, 1});
    AtomicReference<EndpointTable<Backend>> b = new AtomicReference<>();
    Thread writer = new Thread(() -> b.set(svc.setEndpoints(List.of(new Backend("c")),
        new String[] {"c:1"}, new double[] {1})));
    writer.start();
    writer.join();
    EndpointTable<Backend> newer = b.get();
    for (int i = 0; i < 100; i++) {
      Picked p = a.pick(new Picked());
      assertThat(p.entry()).isSameAs(newer.entry(0));
      assertThat(p.item()).isSameAs(newer.item(0));
      assertThat(p.key()).isEqualTo(newer.key(0));
      assertThat(p.epoch()).isEqualTo(newer.epoch());
      assertThat(p.index()).isZero();
      Object[] seen = a.pickWith((e, key, epoch, index, flags, ticket) ->
          new Object[] {e, key, epoch, index});
      assertThat(seen).containsExactly(newer.entry(0), newer.key(0), newer.epoch(), 0);
    }
    WeakReference<Backend> item = new WeakReference<>(newer.item(0));
    b.set(null);
    newer = null;
    svc.setEndpoints(new String[] {"d:1"}, new double[] {1});
    svc.setEndpoints(new String[] {"e:1"}, new double[] {1});  // deletes what was released
    assertThat(collected(item)).as("no reference from the picks is left behind").isTrue();
  }

  /**
   * The window between the engine installing a set and the installing call returning: a pick
   * from another thread already resolves to the new set's entry, and carries the pick's key and
   * epoch while the entry does not know them yet.
   */
  @Test
  void aPickBeforeTheInstallingCallReturnsCarriesTheNewSetsKeyAndEpoch() throws Exception {
    EndpointTable<String> a = svc.setEndpoints(new String[] {"a:1"}, new double[] {1});
    Backend item = new Backend("n");
    AtomicReference<Picked> picked = new AtomicReference<>();
    AtomicReference<long[]> resolved = new AtomicReference<>();
    long[] entryKnew = new long[2];
    EndpointTable<Backend> installed = svc.setEndpoints(List.of(item), new String[] {"n:1"},
        new double[] {1}, () -> {
          Thread picker = new Thread(() -> {
            Picked p = a.pick(new Picked());
            picked.set(p);
            entryKnew[0] = p.entry().key();
            entryKnew[1] = p.entry().epoch();
            resolved.set(a.pickWith((e, key, epoch, index, flags, ticket) ->
                new long[] {e.item() == item ? 1 : 0, key, epoch, index}));
          });
          picker.start();
          try {
            picker.join();
          } catch (InterruptedException e) {
            throw new IllegalStateException(e);
          }
        });
    Picked p = picked.get();
    assertThat(p).as("the picker ran inside the installing call").isNotNull();
    assertThat(entryKnew).as("the entry did not know its key and epoch yet").containsExactly(0, 0);
    assertThat(p.entry()).isSameAs(installed.entry(0));
    assertThat(p.item()).isSameAs(item);
    assertThat(p.key()).isEqualTo(installed.key(0)).isNotZero();
    assertThat(p.epoch()).isEqualTo(installed.epoch()).isEqualTo(a.epoch() + 1);
    assertThat(resolved.get()).containsExactly(1, installed.key(0), installed.epoch(), 0);
    assertThat(installed.entry(0).key()).isEqualTo(installed.key(0));
    svc.complete(p, 1.0, Outcome.SUCCESS);  // the pick's own key is the engine's
  }

  @Test
  void aPickFromAnEmptySetThrowsTheEnginesError() {
    EndpointTable<String> empty = svc.setEndpoints(new String[0], new double[0]);
    assertThatThrownBy(() -> empty.pickWith((e, key, epoch, index, flags, ticket) -> e))
        .isInstanceOf(NoEndpointException.class).hasMessageContaining("orders");
    assertThatThrownBy(() -> empty.pick(new Picked())).isInstanceOf(NoEndpointException.class);
    assertThatThrownBy(() -> svc.pick(new Picked())).isInstanceOf(NoEndpointException.class);
  }

  @Test
  void badSetsAreRefusedBeforeAnythingIsRegistered() {
    assertThatThrownBy(() -> svc.setEndpoints(List.of("x"), new String[] {"a:1", "b:1"},
        new double[] {1, 1})).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("items");
    assertThatThrownBy(() -> svc.setEndpoints(List.of("x", "y"), new String[] {"a:1", "a:1"},
        new double[] {1, 1})).isInstanceOf(WeightedException.class)
        .satisfies(e -> assertThat(((WeightedException) e).status()).isEqualTo(Status.DUPLICATE));
    assertThatThrownBy(() -> svc.pick(new Picked())).isInstanceOf(NoEndpointException.class);
  }

  /**
   * Two sets with different items alternate while other threads pick: each pick's entry is one
   * of the set the pick came from (its epoch, its key at its index), whichever set is installed
   * by the time the pick returns.
   */
  @Test
  void aPickRacingSetChangesResolvesInTheSetItWasDrawnFrom() throws Exception {
    List<Backend> a = List.of(new Backend("a1"), new Backend("a2"), new Backend("a3"));
    List<Backend> b = List.of(new Backend("b1"));
    String[] aIds = {"a1:1", "a2:1", "a3:1"};
    String[] bIds = {"b1:1"};
    AtomicReference<EndpointTable<Backend>> latest =
        new AtomicReference<>(svc.setEndpoints(a, aIds, new double[] {1, 1, 1}));
    AtomicReference<Throwable> failure = new AtomicReference<>();
    List<Thread> pickers = new ArrayList<>();
    for (int t = 0; t < 2; t++) {
      boolean throughTable = t == 0;  // the table the picker knows, or the service itself
      pickers.add(new Thread(() -> {
        try {
          for (int i = 0; i < 200_000 && failure.get() == null; i++) {
            Picked p = throughTable ? latest.get().pick(new Picked()) : svc.pick(new Picked());
            Backend item = (Backend) p.item();
            List<Backend> set = a.contains(item) ? a : b;
            assertThat(set.get(p.index())).isSameAs(item);
            assertThat(p.id()).isEqualTo(item.host() + ":1");
            assertThat(p.key()).isNotZero();
            assertThat(p.epoch()).isPositive();
            // A pick may come back while the set call that made its entry is still returning:
            // the entry learns its key and epoch then, the pick carries its own meanwhile.
            assertThat(p.entry().key()).isIn(0L, p.key());
            assertThat(p.entry().epoch()).isIn(0L, p.epoch());
          }
        } catch (Throwable e) {
          failure.compareAndSet(null, e);
        }
      }));
    }
    pickers.forEach(Thread::start);
    for (int flip = 0; pickers.stream().anyMatch(Thread::isAlive); flip++) {
      latest.set(flip % 2 == 0 ? svc.setEndpoints(b, bIds, new double[] {1})
          : svc.setEndpoints(a, aIds, new double[] {1, 1, 1}));
    }
    for (Thread t : pickers) {
      t.join();
    }
    assertThat(failure.get()).isNull();
  }

  @Test
  void itemsOfReplacedSetsAreReleased() {
    WeakReference<Backend> old = registerOne("old:1");
    svc.setEndpoints(new String[] {"new:1"}, new double[] {1});
    svc.setEndpoints(new String[] {"newer:1"}, new double[] {1});  // deletes what was released
    assertThat(collected(old)).as("the replaced set's item is no longer referenced").isTrue();
  }

  @Test
  void removingAServiceReleasesItsItemsAndClosesIt() {
    WeakReference<Backend> item = registerOne("a:1");
    Pick open = svc.pick(new Picked()).toPick();  // holds no entry, so the item may go
    engine.drainEvents();
    svc.remove();
    assertThat(svc.isClosed()).isTrue();
    assertThat(collected(item)).isTrue();
    assertThat(engine.drainEvents()).extracting(Event::type).contains(EventType.SERVICE_REMOVED);
    assertThatThrownBy(() -> svc.pick(new Picked())).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("orders").hasMessageContaining("closed");
    assertThatThrownBy(() -> svc.complete(open, 1.0, Outcome.SUCCESS))
        .isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> svc.setEndpoints(new String[] {"a:1"}, new double[] {1}))
        .isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(svc::remove).isInstanceOf(IllegalStateException.class);
    // The name now makes a new, empty service; the snapshot shows it as such.
    Service again = engine.service("orders");
    assertThat(again).isNotSameAs(svc);
    assertThat(again.isClosed()).isFalse();
    assertThatThrownBy(() -> again.pick(new Picked())).isInstanceOf(NoEndpointException.class);
    Map<String, Object> snap = Json.parseObject(engine.snapshotJson());
    assertThat((List<?>) snap.get("services")).hasSize(1);
    again.setEndpoints(new String[] {"b:1"}, new double[] {1});
    assertThat(again.pick(new Picked()).id()).isEqualTo("b:1");
  }

  @Test
  void closingTheEngineReleasesEveryItemAndClosesItsServices() {
    WeakReference<Backend> item = registerOne("a:1");
    engine.close();
    assertThat(svc.isClosed()).isTrue();
    assertThat(collected(item)).isTrue();
    assertThatThrownBy(svc::remove).isInstanceOf(IllegalStateException.class);
  }

  private WeakReference<Backend> registerOne(String id) {
    Backend b = new Backend(id);
    svc.setEndpoints(List.of(b), new String[] {id}, new double[] {1});
    return new WeakReference<>(b);
  }

  private static boolean collected(WeakReference<?> ref) {
    return eventually(() -> {
      System.gc();
      return ref.get() == null;
    });
  }

  private static boolean eventually(BooleanSupplier condition) {
    for (int i = 0; i < 50; i++) {
      if (condition.getAsBoolean()) {
        return true;
      }
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
    }
    return false;
  }
}
