package io.weighted.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.weighted.jni.Engine;
import io.weighted.jni.Json;
import io.weighted.jni.Service;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.mock.env.MockEnvironment;

/** The application passes its instance id as the subset's client id. */
class SubsetClientIdTests {
  final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(WeightedLoadBalancerAutoConfiguration.class));

  @Test
  void theIdGoesIntoASubsetWithoutOne() {
    assertThat(SubsetClientId.inject("{\"subset\": {\"mode\": \"fixed\"}}", "a\"b"))
        .isEqualTo("{\"subset\": {\"client_id\":\"a\\\"b\",\"mode\": \"fixed\"}}");
    assertThat(SubsetClientId.inject("{\"subset\":{ }}", "x"))
        .isEqualTo("{\"subset\":{\"client_id\":\"x\" }}");
  }

  @Test
  void everythingElseIsLeftAsItIs() {
    for (String text : new String[] {
        "{}", "{\"seed\": 1}", "not json",
        "{\"subset\": {\"client_id\": \"mine\", \"mode\": \"fixed\"}}",
        // a "subset" that is not the top-level key, and braces inside strings
        "{\"export\": {\"subset\": {\"mode\": \"fixed\"}}}",
        "{\"sources\": {\"prometheus\": {\"queries\": {\"cpu\": \"x{subset}\"}}}}",
        "{\"subset\": \"fixed\"}"}) {
      assertThat(SubsetClientId.inject(text, "id")).isEqualTo(text);
    }
    // A client_id key deeper inside the subset is not the subset's.
    assertThat(SubsetClientId.inject("{\"subset\": {\"x\": {\"client_id\": 1}}}", "id"))
        .startsWith("{\"subset\": {\"client_id\":\"id\",");
  }

  @Test
  void theDefaultIsTheInstanceIdAsEurekaFormsIt() {
    MockEnvironment env = new MockEnvironment().withProperty("spring.cloud.client.hostname", "h1")
        .withProperty("spring.application.name", "orders").withProperty("server.port", "9000");
    assertThat(SubsetClientId.of(env)).isEqualTo("h1:orders:9000");
    env.setProperty("spring.application.instance_id", "i-7");
    assertThat(SubsetClientId.of(env)).isEqualTo("h1:orders:i-7");
    env.setProperty("weighted.loadbalancer.client-id", "set-by-hand");
    assertThat(SubsetClientId.of(env)).isEqualTo("set-by-hand");
  }

  private static Set<String> members(Engine engine) {
    Set<String> in = new HashSet<>();
    Map<String, Object> snap = Json.parseObject(engine.snapshotJson());
    for (Object s : (List<?>) snap.get("services")) {
      for (Object e : (List<?>) ((Map<?, ?>) s).get("endpoints")) {
        Map<?, ?> ep = (Map<?, ?>) e;
        if (Boolean.TRUE.equals(ep.get("in_subset"))) {
          in.add((String) ep.get("id"));
        }
      }
    }
    return in;
  }

  private static Set<String> subsetOf(ApplicationContextRunner r, Path cfg, String... props) {
    Set<String> out = new HashSet<>();
    r.withPropertyValues("weighted.loadbalancer.config=file:" + cfg,
        "weighted.loadbalancer.clock=manual").withPropertyValues(props).run(ctx -> {
          assertThat(ctx).hasNotFailed();
          Engine engine = ctx.getBean(Engine.class);
          String[] ids = new String[30];
          double[] w = new double[30];
          for (int i = 0; i < 30; i++) {
            ids[i] = "10.0.0." + i + ":8080";
            w[i] = 1;
          }
          Service svc = engine.service("orders");
          svc.setEndpoints(ids, w);
          out.addAll(members(engine));
        });
    return out;
  }

  @Test
  void theEngineUsesTheApplicationsSubset(@TempDir Path dir) throws Exception {
    Path cfg = dir.resolve("weighted.json");
    Files.writeString(cfg, "{\"subset\": {\"mode\": \"fixed\", \"size\": 3}}");
    Set<String> a = subsetOf(runner, cfg, "weighted.loadbalancer.client-id=client-a");
    Set<String> again = subsetOf(runner, cfg, "weighted.loadbalancer.client-id=client-a");
    Set<String> b = subsetOf(runner, cfg, "spring.cloud.client.hostname=h2",
        "spring.application.name=orders-client", "server.port=8081");
    assertThat(a).hasSize(3).isEqualTo(again).isNotEqualTo(b);
    assertThat(b).hasSize(3);
  }

  @Test
  void aPlaceInTheFleetGoesInBesideTheId() {
    assertThat(SubsetClientId.inject("{\"subset\": {\"mode\": \"fixed\"}}", "x", new int[] {2, 5}))
        .isEqualTo("{\"subset\": {\"client_id\":\"x\",\"client_index\":2,\"client_count\":5,"
            + "\"mode\": \"fixed\"}}");
    // The document's own keys win, each on its own.
    assertThat(SubsetClientId.inject("{\"subset\": {\"client_index\": 0}}", "x", new int[] {2, 5}))
        .isEqualTo("{\"subset\": {\"client_id\":\"x\",\"client_count\":5,\"client_index\": 0}}");
    assertThat(SubsetClientId.inject("{\"subset\":{}}", null, new int[] {1, 3}))
        .isEqualTo("{\"subset\":{\"client_index\":1,\"client_count\":3}}");
  }

  @Test
  void thePlaceComesFromTwoPropertiesAndABadOneIsRefusedByName() {
    MockEnvironment env = new MockEnvironment();
    assertThat(SubsetClientId.placeOf(env)).isNull();
    env.setProperty("weighted.loadbalancer.client-index", "3");
    env.setProperty("weighted.loadbalancer.client-count", "8");
    assertThat(SubsetClientId.placeOf(env)).containsExactly(3, 8);
    env.setProperty("weighted.loadbalancer.client-index", "-1");
    assertThatThrownBy(() -> SubsetClientId.placeOf(env))
        .hasMessageContaining("weighted.loadbalancer.client-index \"-1\" is not a whole number");
    MockEnvironment countOnly = new MockEnvironment()
        .withProperty("weighted.loadbalancer.client-count", "8");
    assertThatThrownBy(() -> SubsetClientId.placeOf(countOnly))
        .hasMessageContaining("client-index is not");
  }

  @Test
  void instancesWithTheirPlacesShareTheEndpointsEvenly(@TempDir Path dir) throws Exception {
    // Three instances of 30 endpoints with 10 each: between them every endpoint, once.
    Path cfg = dir.resolve("weighted.json");
    Files.writeString(cfg, "{\"subset\": {\"mode\": \"fixed\", \"size\": 10}}");
    Set<String> all = new HashSet<>();
    int total = 0;
    for (int i = 0; i < 3; i++) {
      Set<String> mine = subsetOf(runner, cfg, "weighted.loadbalancer.client-index=" + i,
          "weighted.loadbalancer.client-count=3");
      assertThat(mine).hasSize(10);
      total += mine.size();
      all.addAll(mine);
    }
    assertThat(total).isEqualTo(30);
    assertThat(all).hasSize(30);
  }
}
