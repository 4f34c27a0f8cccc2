package io.weighted.bench;

import io.weighted.jni.ClockMode;
import io.weighted.jni.EndpointTable;
import io.weighted.jni.Engine;
import io.weighted.jni.Picked;
import io.weighted.jni.Service;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The raw binding: one pick plus one complete through JNI, all primitives. Sampled, so JMH
 * reports the median (p0.50), which the project's performance target bounds at 150 ns (JNI pick
 * + report, docs/performance.md).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class JniBenchmark {
  /** The exact picker (no in-flight tracking), so a pick without a report leaks nothing. */
  static final String CONFIG =
      "{\"slow_start\": {\"window_ms\": 0}, \"picker\": {\"mode\": \"weighted\"}}";

  Engine engine;
  Service service;
  EndpointTable<String> table;
  final long[] pick = new long[4];

  @Setup(Level.Trial)
  public void setUp() {
    engine = Engine.create(CONFIG, ClockMode.REAL);
    service = engine.service("svc");
    table = service.setEndpoints(new String[] {"a:1", "b:1", "c:1"}, new double[] {1, 1, 1});
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    engine.close();
  }

  @Benchmark
  public long pickOnly() {
    service.pickInto(pick);
    return pick[0];
  }

  /** What a resolver that keeps only the entry makes of a pick: no capture, no allocation. */
  static final EndpointTable.Resolver<Object> ENTRY = (e, key, epoch, index, flags, ticket) -> e;

  /**
   * The pick the Spring and Ribbon rules make: resolved to the entry of the set it came from
   * (wt_service_pick_pinned) through the table they hold, handed to a resolver as primitives.
   */
  @Benchmark
  public Object pickPinned() {
    return table.pickWith(ENTRY);
  }

  /** The same into a new Picked per pick (the general API), through the table. */
  @Benchmark
  public Object pickPinnedPicked() {
    return table.pick(new Picked()).entry();
  }

  /** The same through the service (which picks through the set it installed last). */
  @Benchmark
  public Object pickPinnedUnheld() {
    return service.pick(new Picked()).entry();
  }

  @Benchmark
  public long pickAndComplete() {
    service.pickInto(pick);
    long p = pick[2];
    service.complete(pick[0], pick[1], (int) p, (int) (p >>> 32), (int) pick[3], 1.5, 0);
    return pick[0];
  }
}
