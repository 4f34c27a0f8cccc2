package io.weighted.bench;

import java.util.Collection;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.CommandLineOptions;

/**
 * Runs the benchmarks (JMH command-line options pass through) and prints, from this same run, the
 * ratios issue 5 asks about: weighted choose() / RoundRobinLoadBalancer choose() (bar: 1.2) and
 * the median of a JNI pick + complete (bar: 150 ns).
 */
public final class BenchMain {
  private BenchMain() {}

  public static void main(String[] args) throws Exception {
    Collection<RunResult> results = new Runner(new CommandLineOptions(args)).run();
    Map<String, Double> score = new HashMap<>();
    for (RunResult r : results) {
      String name = r.getParams().getBenchmark();
      String inst = r.getParams().getParam("instances");
      String key = name.substring(name.lastIndexOf('.') + 1) + (inst == null ? "" : "@" + inst);
      score.put(key, r.getPrimaryResult().getScore());
      if (r.getParams().getMode() == org.openjdk.jmh.annotations.Mode.SampleTime) {
        score.put(key + ".p50", r.getPrimaryResult().getStatistics().getPercentile(50));
      }
    }
    System.out.println();
    System.out.println("== weighted Java benchmark ratios (same run) ==");
    for (String n : new String[] {"3", "20"}) {
      ratio(score, "weightedChoose@" + n, "roundRobinChoose@" + n, 1.2);
      ratio(score, "weightedChoose@" + n, "randomChoose@" + n, Double.NaN);
    }
    ratio(score, "weightedRule", "roundRobinRule", Double.NaN);
    ratio(score, "weightedRule", "weightedResponseTimeRule", Double.NaN);
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
