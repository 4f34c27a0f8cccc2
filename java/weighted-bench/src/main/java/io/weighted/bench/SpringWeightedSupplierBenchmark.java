package io.weighted.bench;

import io.weighted.jni.ClockMode;
import io.weighted.jni.Engine;
import io.weighted.spring.WeightedLoadBalancer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
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
import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.DefaultRequest;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.loadbalancer.core.RoundRobinLoadBalancer;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.core.WeightedServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.support.SimpleObjectProvider;
import reactor.core.publisher.Flux;

/**
 * Spring Cloud LoadBalancer's own weighted configuration ({@code withWeighted()}: a
 * RoundRobinLoadBalancer over a {@link WeightedServiceInstanceListSupplier}, static weights from
 * the instances' {@code weight} metadata) against the weighted balancer reading the same
 * metadata from the same instances: the comparison the performance targets ask for with the
 * `weighted` supplier configuration that Spring Cloud ships. Weights 1, 2, 3, 1, 2, 3, ... so
 * Spring's supplier has a list to expand.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class SpringWeightedSupplierBenchmark {
  @Param({"3", "20"})
  public int instances;

  Engine engine;
  WeightedLoadBalancer weighted;
  RoundRobinLoadBalancer springWeighted;
  final Request<?> request = new DefaultRequest<>();

  @Setup(Level.Trial)
  public void setUp() {
    List<ServiceInstance> list = new ArrayList<>();
    for (int i = 0; i < instances; i++) {
      DefaultServiceInstance s = new DefaultServiceInstance("i" + i, "svc", "10.0.0." + i, 8080,
          false, Map.of("weight", Integer.toString(i % 3 + 1)));
      list.add(s);
    }
    ServiceInstanceListSupplier base = SpringChooseBenchmark.supplier(List.copyOf(list), Flux::just);
    engine = Engine.create(SpringChooseBenchmark.CONFIG, ClockMode.REAL);
    weighted = new WeightedLoadBalancer(new SimpleObjectProvider<>(base), "svc", engine);
    springWeighted = new RoundRobinLoadBalancer(
        new SimpleObjectProvider<>(new WeightedServiceInstanceListSupplier(base)), "svc");
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    engine.close();
  }

  @Benchmark
  public Response<ServiceInstance> springWeightedSupplierChoose() {
    return springWeighted.choose(request).block();
  }

  @Benchmark
  public Response<ServiceInstance> weightedChooseMetadataWeights() {
    return weighted.choose(request).block();
  }
}
