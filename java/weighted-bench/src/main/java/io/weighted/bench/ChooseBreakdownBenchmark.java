package io.weighted.bench;

import io.weighted.jni.ClockMode;
import io.weighted.jni.Engine;
import io.weighted.jni.Service;
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
import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.DefaultResponse;
import org.springframework.cloud.client.loadbalancer.Response;
import reactor.core.publisher.Flux;

/** Temporary: the pieces of a weighted choose(), in average time. */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class ChooseBreakdownBenchmark {
  Engine engine;
  Service service;
  final long[] pick = new long[3];
  List<ServiceInstance> cached;

  @Setup(Level.Trial)
  public void setUp() {
    engine = Engine.create(SpringChooseBenchmark.CONFIG, ClockMode.REAL);
    service = engine.service("svc");
    service.setEndpoints(new String[] {"a:1", "b:1", "c:1"}, new double[] {1, 1, 1});
    cached = List.of(new DefaultServiceInstance("i0", "svc", "10.0.0.0", 8080, false));
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    engine.close();
  }

  @Benchmark
  public long jniPickAvg() {
    service.pickInto(pick);
    return pick[0];
  }

  @Benchmark
  public long jniPickIn() {
    return service.pickIn(1);
  }

  @Benchmark
  public Response<ServiceInstance> reactorOnly() {
    return Flux.just(cached).next().map(l -> (Response<ServiceInstance>) new DefaultResponse(l.get(0))).block();
  }
}
