package io.weighted.spring.actuator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.weighted.jni.Engine;
import io.weighted.jni.Json;
import io.weighted.jni.Outcome;
import io.weighted.jni.Service;
import io.weighted.spring.WeightedLoadBalancerAutoConfiguration;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** /actuator/weighted: the engine's snapshot and the events of its state file since a cursor. */
class WeightedEndpointTests {
  @TempDir Path dir;

  final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(WeightedLoadBalancerAutoConfiguration.class,
          WeightedEndpointAutoConfiguration.class));

  private String config(String json) throws Exception {
    Path file = Files.writeString(dir.resolve("weighted.json"), json);
    return "weighted.loadbalancer.config=file:" + file;
  }

  @SuppressWarnings("unchecked")
  private static List<Map<String, Object>> events(Map<String, Object> answer) {
    return (List<Map<String, Object>>) ((Map<String, Object>) answer.get("events")).get("events");
  }

  private static List<String> types(Map<String, Object> answer) {
    return events(answer).stream().map(e -> (String) e.get("type")).collect(Collectors.toList());
  }

  @Test
  void snapshotAndEventsSinceACursor() throws Exception {
    String state = dir.resolve("svc.state").toString();
    runner.withPropertyValues(config("{\"seed\": 1, \"export\": {\"state_file\": \"" + state
        + "\"}}"), "weighted.loadbalancer.clock=manual").run(ctx -> {
          WeightedEndpoint endpoint = ctx.getBean(WeightedEndpoint.class);
          Engine engine = ctx.getBean(Engine.class);
          Service svc = engine.service("orders");
          svc.setEndpoints(new String[] {"a", "b", "c"}, new double[] {100, 100, 100});

          Map<String, Object> first = Json.parseObject(endpoint.weighted());
          assertThat(((Map<?, ?>) first.get("snapshot")).get("services")).asList().hasSize(1);
          assertThat(types(first)).containsExactly("endpoint_added", "endpoint_added",
              "endpoint_added");
          long next = ((Double) ((Map<?, ?>) first.get("events")).get("next")).longValue();
          assertThat(types(Json.parseObject(endpoint.eventsSince(next)))).isEmpty();

          for (int i = 0; i < 50; i++) {  // a: slow and failing; b, c: fine
            svc.report("a", 800.0, Outcome.HTTP_5XX);
            svc.report("b", 10.0, Outcome.SUCCESS);
            svc.report("c", 10.0, Outcome.SUCCESS);
          }
          engine.advance(Duration.ofSeconds(5));
          Map<String, Object> later = Json.parseObject(endpoint.eventsSince(next));
          assertThat(types(later)).isNotEmpty().doesNotContain("endpoint_added");
          assertThat(events(later)).allSatisfy(e -> assertThat(e.get("endpoint")).isEqualTo("a"));
          assertThatThrownBy(() -> endpoint.eventsSince(-1))
              .isInstanceOf(IllegalArgumentException.class);
        });
  }

  private static String profile(Engine engine) {
    return (String) Json.parseObject(engine.snapshotJson()).get("profile");
  }

  @Test
  void postReadsTheConfigFileNowAndSaysWhatItDid() throws Exception {
    runner.withPropertyValues(config("{\"seed\": 1}"), "weighted.loadbalancer.clock=manual",
        "weighted.loadbalancer.reload.interval=1h").run(ctx -> {
          WeightedEndpoint endpoint = ctx.getBean(WeightedEndpoint.class);
          Engine engine = ctx.getBean(Engine.class);
          Path file = dir.resolve("weighted.json");
          Map<String, Object> same = Json.parseObject(endpoint.reload());
          assertThat(same).containsEntry("result", "unchanged")
              .containsEntry("config_file", file.toString());

          Files.writeString(file, "{\"seed\": 1, \"profile\": \"article\"}");
          assertThat(Json.parseObject(endpoint.reload())).containsEntry("result", "reloaded");
          assertThat(profile(engine)).isEqualTo("article");

          Files.writeString(file, "{\"seed\": 1, \"controller\": {\"max_stepp\": 1}}");
          assertThat(Json.parseObject(endpoint.reload())).containsEntry("result", "failed");
          assertThat(profile(engine)).isEqualTo("article");  // the refused file changed nothing
        });
  }

  @Test
  void postWithAConfigThatIsNotAFileSaysSo() {
    try (Engine engine = Engine.create("{\"seed\": 1}")) {
      assertThat(Json.parseObject(new WeightedEndpoint(engine, null).reload()))
          .containsEntry("result", "not_a_file").containsEntry("config_file", null);
    }
  }

  @Test
  void withoutAStateFileTheSnapshotIsServedAndTheEventsSayWhy() throws Exception {
    runner.withPropertyValues(config("{\"seed\": 1}"), "weighted.loadbalancer.clock=manual")
        .run(ctx -> {
          Map<String, Object> answer =
              Json.parseObject(ctx.getBean(WeightedEndpoint.class).weighted());
          assertThat(answer.get("snapshot")).isInstanceOf(Map.class);
          assertThat(answer.get("events")).isNull();
          assertThat((String) answer.get("events_error")).contains("export.state_file");
        });
  }

  @Test
  void noEngineNoEndpoint() {
    runner.run(ctx -> assertThat(ctx).doesNotHaveBean(WeightedEndpoint.class));
  }

  @Test
  void quotingKeepsTheTextJson() {
    String q = WeightedEndpoint.quote("a \"b\" \\ c\n\u0001");
    assertThat(Json.parse(q)).isEqualTo("a \"b\" \\ c\n\u0001");
  }
}
