package io.weighted.bench;

import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.CommandLineOptions;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;

/**
 * Runs the benchmarks (JMH command-line options pass through) and prints, from this same run, the
 * numbers the project's performance targets bound (docs/performance.md): weighted choose() /
 * RoundRobinLoadBalancer choose() (bar: 1.2) and the median of a JNI pick + complete (bar:
 * 150 ns).
 */
public final class BenchMain {
  private BenchMain() {}

  public static void main(String[] args) throws Exception {
    // Every run also records CPU time per operation (CpuTimeProfiler): on a shared machine the
    // wall-clock ratios swing with the other jobs, the CPU ratios much less.
    Options options = new OptionsBuilder().parent(new CommandLineOptions(args))
        .addProfiler(CpuTimeProfiler.class).build();
    Collection<RunResult> results = new Runner(options).run();
    Map<String, Double> score = new HashMap<>();
    Map<String, Double> cpu = new HashMap<>();
    for (RunResult r : results) {
      String name = r.getParams().getBenchmark();
      String inst = r.getParams().getParam("instances");
      String key = name.substring(name.lastIndexOf('.') + 1) + (inst == null ? "" : "@" + inst);
      score.put(key, r.getPrimaryResult().getScore());
      if (r.getParams().getMode() == org.openjdk.jmh.annotations.Mode.SampleTime) {
        score.put(key + ".p50", r.getPrimaryResult().getStatistics().getPercentile(50));
      }
      Result<?> c = r.getSecondaryResults().get(CpuTimeProfiler.RESULT);
      if (c != null) {
        cpu.put(key, c.getScore());
      }
    }
    for (Map<String, Double> s : List.of(score, cpu)) {
      System.out.println();
      System.out.println(s == score ? "== weighted Java benchmark ratios (same run, wall clock) =="
          : "== the same ratios in CPU time per operation (CpuTimeProfiler) ==");
      for (String n : new String[] {"3", "20"}) {
        ratio(s, "weightedChoose@" + n, "roundRobinChoose@" + n, 1.2);
        ratio(s, "weightedDefaultChoose@" + n, "roundRobinChoose@" + n, 1.2);
        ratio(s, "weightedChoose@" + n, "randomChoose@" + n, Double.NaN);
        ratio(s, "weightedChooseDeferred@" + n, "roundRobinChooseDeferred@" + n, Double.NaN);
        ratio(s, "weightedChooseMetadataWeights@" + n, "springWeightedSupplierChoose@" + n,
            Double.NaN);
      }
      ratio(s, "weightedRule", "roundRobinRule", Double.NaN);
      ratio(s, "weightedRule", "weightedResponseTimeRule", Double.NaN);
    }
    Double p50 = score.get("pickAndComplete.p50");
    if (p50 != null) {
      System.out.printf(Locale.ROOT, "JNI pick + complete median: %.1f ns (bar 150 ns: %s)%n", p50,
          p50 <= 150 ? "met" : "NOT met");
    }
  }

  private static void ratio(Map<String, Double> s, String a, String b, double bar) {
    Double x = s.get(a);
    Double y = s.get(b);
    if (x == null || y == null) {
      return;
    }
    double r = x / y;
    System.out.printf(Locale.ROOT, "%s / %s = %.2f (%.1f / %.1f ns)%s%n", a, b, r, x, y,
        Double.isNaN(bar) ? "" : " (bar " + bar + ": " + (r <= bar ? "met" : "NOT met") + ")");
  }
}
