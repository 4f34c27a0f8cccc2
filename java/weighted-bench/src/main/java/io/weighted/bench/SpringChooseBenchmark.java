package io.weighted.bench;

import io.weighted.jni.ClockMode;
import io.weighted.jni.Engine;
import io.weighted.spring.WeightedLoadBalancer;
import io.weighted.spring.WeightedServiceInstance;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.DefaultRequest;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.loadbalancer.core.RandomLoadBalancer;
import org.springframework.cloud.loadbalancer.core.RoundRobinLoadBalancer;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.support.SimpleObjectProvider;
import reactor.core.publisher.Flux;

/**
 * {@code choose()} of the weighted balancer against Spring's RoundRobinLoadBalancer and
 * RandomLoadBalancer, over the same supplier (one cached list, as a caching supplier returns).
 * The project's performance target: weighted at most 1.2x round-robin (docs/performance.md). {@code weightedChooseAndComplete} adds the
 * outcome report the lifecycle makes after each call.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class SpringChooseBenchmark {
  /** The exact picker (no in-flight tracking), so a pick without a report leaks nothing. */
  static final String CONFIG =
      "{\"slow_start\": {\"window_ms\": 0}, \"picker\": {\"mode\": \"weighted\"}}";

  @Param({"3", "20"})
  public int instances;

  Engine engine;
  WeightedLoadBalancer weighted;
  /** The default config (load-aware picks: two candidates by cost, an in-flight count each). */
  Engine defaultEngine;
  WeightedLoadBalancer weightedDefault;
  RoundRobinLoadBalancer roundRobin;
  RandomLoadBalancer random;
  final Request<?> request = new DefaultRequest<>();

  /** A supplier of {@code n} fixed instances of "svc", each list handed out through {@code flux}. */
  static ServiceInstanceListSupplier supplier(int n,
      Function<List<ServiceInstance>, Flux<List<ServiceInstance>>> flux) {
    ServiceInstance[] list = new ServiceInstance[n];
    for (int i = 0; i < n; i++) {
      list[i] = new DefaultServiceInstance("i" + i, "svc", "10.0.0." + i, 8080, false);
    }
    return supplier(List.of(list), flux);
  }

  /** A supplier of "svc" handing out {@code cached} through {@code flux}. */
  static ServiceInstanceListSupplier supplier(List<ServiceInstance> cached,
      Function<List<ServiceInstance>, Flux<List<ServiceInstance>>> flux) {
    return new ServiceInstanceListSupplier() {
      @Override
      public Flux<List<ServiceInstance>> get() {
        return flux.apply(cached);
      }

      @Override
      public String getServiceId() {
        return "svc";
      }
    };
  }

  @Setup(Level.Trial)
  public void setUp() {
    ServiceInstanceListSupplier supplier = supplier(instances, Flux::just);
    engine = Engine.create(CONFIG, ClockMode.REAL);
    weighted = new WeightedLoadBalancer(new SimpleObjectProvider<>(supplier), "svc", engine);
    defaultEngine = Engine.create("{}", ClockMode.REAL);
    weightedDefault =
        new WeightedLoadBalancer(new SimpleObjectProvider<>(supplier), "svc", defaultEngine);
    roundRobin = new RoundRobinLoadBalancer(new SimpleObjectProvider<>(supplier), "svc");
    random = new RandomLoadBalancer(new SimpleObjectProvider<>(supplier), "svc");
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    engine.close();
    defaultEngine.close();
  }

  @Benchmark
  public Response<ServiceInstance> roundRobinChoose() {
    return roundRobin.choose(request).block();
  }

  @Benchmark
  public Response<ServiceInstance> randomChoose() {
    return random.choose(request).block();
  }

  @Benchmark
  public Response<ServiceInstance> weightedChoose() {
    return weighted.choose(request).block();
  }

  @Benchmark
  public boolean weightedChooseAndComplete() {
    return chooseAndComplete(weighted);
  }

  /**
   * choose() with the default (load-aware) picker, what an application gets out of the box. Each
   * pick takes an in-flight count that nobody finishes here: the engine lets it expire after one
   * to two controller cycles, as it does for a real request that is never sent.
   */
  @Benchmark
  public Response<ServiceInstance> weightedDefaultChoose() {
    return weightedDefault.choose(request).block();
  }

  /** The same with the default (load-aware) picker: what an application gets out of the box. */
  @Benchmark
  public boolean weightedDefaultChooseAndComplete() {
    return chooseAndComplete(weightedDefault);
  }

  private boolean chooseAndComplete(WeightedLoadBalancer balancer) {
    WeightedServiceInstance s = (WeightedServiceInstance) balancer.choose(request).block().getServer();
    s.markStarted();
    return s.complete(io.weighted.jni.Outcome.SUCCESS);
  }
}
