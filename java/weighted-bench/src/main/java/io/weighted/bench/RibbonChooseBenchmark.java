package io.weighted.bench;

import com.netflix.loadbalancer.BaseLoadBalancer;
import com.netflix.loadbalancer.RoundRobinRule;
import com.netflix.loadbalancer.Server;
import com.netflix.loadbalancer.WeightedResponseTimeRule;
import io.weighted.jni.ClockMode;
import io.weighted.jni.Engine;
import io.weighted.ribbon.WeightedRule;
import java.util.ArrayList;
import java.util.List;
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

/** Ribbon: the weighted rule against RoundRobinRule and WeightedResponseTimeRule. */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class RibbonChooseBenchmark {
  /** The exact picker (no in-flight tracking), so a pick without a report leaks nothing. */
  static final String CONFIG =
      "{\"slow_start\": {\"window_ms\": 0}, \"picker\": {\"mode\": \"weighted\"}}";

  Engine engine;
  BaseLoadBalancer weighted;
  BaseLoadBalancer roundRobin;
  BaseLoadBalancer responseTime;

  @Setup(Level.Trial)
  public void setUp() {
    List<Server> servers = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      servers.add(new Server("10.0.0." + i, 8080));
    }
    engine = Engine.create(CONFIG, ClockMode.REAL);
    weighted = lb(new WeightedRule(engine, "svc"), servers);
    roundRobin = lb(new RoundRobinRule(), servers);
    responseTime = lb(new WeightedResponseTimeRule(), servers);
  }

  private static BaseLoadBalancer lb(com.netflix.loadbalancer.IRule rule, List<Server> servers) {
    BaseLoadBalancer lb = new BaseLoadBalancer();
    lb.setRule(rule);
    lb.addServers(servers);
    return lb;
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    weighted.shutdown();
    roundRobin.shutdown();
    responseTime.shutdown();
    engine.close();
  }

  @Benchmark
  public Server weightedRule() {
    return weighted.chooseServer(null);
  }

  @Benchmark
  public Server roundRobinRule() {
    return roundRobin.chooseServer(null);
  }

  @Benchmark
  public Server weightedResponseTimeRule() {
    return responseTime.chooseServer(null);
  }
}
