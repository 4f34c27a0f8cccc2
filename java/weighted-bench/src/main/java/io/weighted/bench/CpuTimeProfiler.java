package io.weighted.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.profile.InternalProfiler;
import org.openjdk.jmh.results.AggregationPolicy;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.ScalarResult;

/**
 * CPU time per operation of the benchmark threads ({@code -prof io.weighted.bench.CpuTimeProfiler}),
 * as the secondary result {@code cpu.ns/op}. On a shared machine the wall-clock score also
 * counts the time other jobs held the core; the CPU time is what the code itself costs (the
 * core suite's CPU column, the same idea). It includes the JMH loop's own few nanoseconds.
 */
public final class CpuTimeProfiler implements InternalProfiler {
  /** The name of the secondary result. */
  public static final String RESULT = "cpu.ns/op";
  private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
  private final Map<Long, Long> start = new HashMap<>();

  @Override
  public String getDescription() {
    return "CPU time per operation of the JMH worker threads";
  }

  @Override
  public void beforeIteration(BenchmarkParams benchmarkParams, IterationParams iterationParams) {
    start.clear();
    // The workers of the previous iteration are reused; new ones start at 0 CPU time.
    for (long id : threads.getAllThreadIds()) {
      start.put(id, cpu(id));
    }
  }

  @Override
  public List<? extends Result> afterIteration(BenchmarkParams benchmarkParams,
      IterationParams iterationParams, IterationResult result) {
    long total = 0;
    for (var info : threads.getThreadInfo(threads.getAllThreadIds())) {
      if (info == null || !info.getThreadName().contains("jmh-worker")) {
        continue;
      }
      long now = cpu(info.getThreadId());
      total += Math.max(0, now - start.getOrDefault(info.getThreadId(), 0L));
    }
    long ops = result.getMetadata().getAllOps();
    double perOp = ops == 0 ? Double.NaN : (double) total / ops;
    return List.of(new ScalarResult(RESULT, perOp, "ns/op", AggregationPolicy.AVG));
  }

  private long cpu(long id) {
    long t = threads.getThreadCpuTime(id);
    return t < 0 ? 0 : t;
  }
}
