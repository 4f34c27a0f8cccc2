package io.weighted.bench;

import io.weighted.jni.ClockMode;
import io.weighted.jni.Engine;
import io.weighted.spring.WeightedLoadBalancer;
import java.util.concurrent.TimeUnit;
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
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.DefaultRequest;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.loadbalancer.core.RoundRobinLoadBalancer;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.support.SimpleObjectProvider;
import reactor.core.publisher.Flux;

/**
 * {@link SpringChooseBenchmark} with a supplier whose Flux is not a synchronous scalar
 * ({@code Flux.defer}, the shape of DiscoveryClientServiceInstanceListSupplier): both balancers
 * then run the same {@code next().map()} chain, and the difference is the weighted pick alone.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class SpringChooseDeferredBenchmark {
  @Param({"3", "20"})
  public int instances;

  Engine engine;
  WeightedLoadBalancer weighted;
  RoundRobinLoadBalancer roundRobin;
  final Request<?> request = new DefaultRequest<>();

  @Setup(Level.Trial)
  public void setUp() {
    ServiceInstanceListSupplier supplier = SpringChooseBenchmark.supplier(instances,
        cached -> Flux.defer(() -> Flux.just(cached)));
    engine = Engine.create(SpringChooseBenchmark.CONFIG, ClockMode.REAL);
    weighted = new WeightedLoadBalancer(new SimpleObjectProvider<>(supplier), "svc", engine);
    roundRobin = new RoundRobinLoadBalancer(new SimpleObjectProvider<>(supplier), "svc");
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    engine.close();
  }

  @Benchmark
  public Response<ServiceInstance> roundRobinChooseDeferred() {
    return roundRobin.choose(request).block();
  }

  @Benchmark
  public Response<ServiceInstance> weightedChooseDeferred() {
    return weighted.choose(request).block();
  }
}
