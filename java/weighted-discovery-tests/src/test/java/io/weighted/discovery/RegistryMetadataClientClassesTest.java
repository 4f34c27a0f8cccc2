package io.weighted.discovery;

import static org.assertj.core.api.Assertions.assertThat;

import com.alibaba.cloud.nacos.discovery.NacosServiceDiscovery;
import com.alibaba.nacos.api.naming.pojo.Instance;
import io.weighted.jni.ClockMode;
import io.weighted.jni.Engine;
import io.weighted.jni.Json;
import io.weighted.spring.Endpoints;
import io.weighted.spring.WeightedLoadBalancer;
import io.weighted.spring.WeightedServiceInstance;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.consul.discovery.ConsulServiceInstance;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.support.SimpleObjectProvider;
import reactor.core.publisher.Flux;

/**
 * Nacos and Consul: no server of theirs runs here, so their metadata conventions are held to the
 * instances their own Spring Cloud discovery clients build (Nacos's
 * {@code NacosServiceDiscovery.hostToServiceInstance} from a nacos-client {@link Instance};
 * Spring Cloud Consul's {@link ConsulServiceInstance} with a service's Meta and tags), fed to
 * the weighted balancer as a discovery supplier would.
 */
class RegistryMetadataClientClassesTest {
  Engine engine;
  final AtomicReference<List<ServiceInstance>> list = new AtomicReference<>();
  WeightedLoadBalancer lb;

  @BeforeEach
  void setUp() {
    engine = Engine.create("{\"seed\": 3, \"slow_start\": {\"window_ms\": 0}, "
        + "\"picker\": {\"mode\": \"weighted\"}}", ClockMode.MANUAL);
    ServiceInstanceListSupplier s = new ServiceInstanceListSupplier() {
      @Override
      public Flux<List<ServiceInstance>> get() {
        return Flux.just(list.get());
      }

      @Override
      public String getServiceId() {
        return "backend";
      }
    };
    lb = new WeightedLoadBalancer(new SimpleObjectProvider<>(s), "backend", engine);
  }

  @AfterEach
  void tearDown() {
    engine.close();
  }

  static ServiceInstance nacos(String ip, double weight, Map<String, String> metadata) {
    Instance i = new Instance();
    i.setInstanceId(ip + "#8080#DEFAULT#DEFAULT_GROUP@@backend");
    i.setIp(ip);
    i.setPort(8080);
    i.setWeight(weight);
    i.setHealthy(true);
    i.setEnabled(true);
    i.setMetadata(new HashMap<>(metadata));
    return NacosServiceDiscovery.hostToServiceInstance(i, "backend");
  }

  static ServiceInstance consul(String ip, Map<String, String> meta, List<String> tags) {
    return new ConsulServiceInstance(ip + "-8080", "backend", ip, 8080, false,
        new HashMap<>(meta), tags);
  }

  /** Chooses n times; counts by host. */
  Map<String, Integer> picks(int n) {
    Map<String, Integer> c = new HashMap<>();
    for (int i = 0; i < n; i++) {
      WeightedServiceInstance s = (WeightedServiceInstance) lb.choose().block().getServer();
      c.merge(s.getHost(), 1, Integer::sum);
      s.cancel();
    }
    return c;
  }

  Map<String, Double> baseWeights() {
    Map<String, Double> w = new HashMap<>();
    Map<String, Object> snap = Json.parseObject(engine.snapshotJson());
    for (Object s : (List<?>) snap.get("services")) {
      for (Object e : (List<?>) ((Map<?, ?>) s).get("endpoints")) {
        Map<?, ?> m = (Map<?, ?>) e;
        w.put((String) m.get("id"), ((Number) m.get("base_weight")).doubleValue());
      }
    }
    return w;
  }

  @Test
  void nacosWeightIsTheBaseWeightAndZeroSendsNothing() {
    ServiceInstance a = nacos("10.0.0.1", 2.5, Map.of());
    assertThat(a.getMetadata()).containsEntry(Endpoints.NACOS_WEIGHT, "2.5");
    list.set(new ArrayList<>(List.of(a, nacos("10.0.0.2", 1.0, Map.of()),
        nacos("10.0.0.3", 0.0, Map.of()))));  // Nacos's "take no traffic"
    Map<String, Integer> c = picks(3500);
    assertThat(baseWeights()).containsOnly(Map.entry("10.0.0.1:8080", 2.5),
        Map.entry("10.0.0.2:8080", 1.0));
    assertThat(c).doesNotContainKey("10.0.0.3");
    assertThat(c.get("10.0.0.1")).isBetween(2300, 2700);  // 2.5 of 3.5

    // The console changes a weight: Nacos's client builds new instances on the next query.
    list.set(new ArrayList<>(List.of(nacos("10.0.0.1", 1.0, Map.of()),
        nacos("10.0.0.2", 1.0, Map.of()), nacos("10.0.0.3", 1.0, Map.of()))));
    picks(10);
    assertThat(baseWeights()).containsOnly(Map.entry("10.0.0.1:8080", 1.0),
        Map.entry("10.0.0.2:8080", 1.0), Map.entry("10.0.0.3:8080", 1.0));
  }

  @Test
  void aWeightKeyInNacosMetadataWinsOverNacosWeight() {
    list.set(List.of(nacos("10.0.0.1", 1.0, Map.of("weight", "4")),
        nacos("10.0.0.2", 1.0, Map.of())));
    picks(10);
    assertThat(baseWeights()).containsEntry("10.0.0.1:8080", 4.0);
  }

  @Test
  void nacosLeavesUnhealthyAndDisabledInstancesOutOfTheListItself() {
    Instance sick = new Instance();
    sick.setIp("10.0.0.9");
    sick.setPort(8080);
    sick.setHealthy(false);
    assertThat(NacosServiceDiscovery.hostToServiceInstance(sick, "backend")).isNull();
  }

  @Test
  void consulMetaIsReadAndTagsAreNot() {
    list.set(List.of(consul("10.0.1.1", Map.of("weight", "3"), List.of("secure=false")),
        consul("10.0.1.2", Map.of(), List.of("weight=9")),  // a tag is not metadata
        consul("10.0.1.3", Map.of("weight", "1"), List.of())));
    Map<String, Integer> c = picks(5000);
    assertThat(baseWeights()).containsOnly(Map.entry("10.0.1.1:8080", 3.0),
        Map.entry("10.0.1.2:8080", 1.0), Map.entry("10.0.1.3:8080", 1.0));
    assertThat(c.get("10.0.1.1")).isBetween(2800, 3200);  // 3 of 5
  }
}
