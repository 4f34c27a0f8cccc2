package io.weighted.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.weighted.jni.ClockMode;
import io.weighted.jni.ConfigException;
import io.weighted.jni.Engine;
import io.weighted.jni.Json;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;

/** One annotation or one property turns the balancer on; nothing else does. */
class WeightedLoadBalancerAutoConfigurationTests {
  final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(WeightedLoadBalancerAutoConfiguration.class));

  @Configuration(proxyBeanMethods = false)
  @EnableWeightedLoadBalancer
  static class Annotated {}

  @Test
  void offWithoutAnnotationOrProperty() {
    runner.run(ctx -> assertThat(ctx).doesNotHaveBean(Engine.class));
  }

  @Test
  void theAnnotationAloneUsesDefaultsWhenThereIsNoWeightedJson() {
    runner.withUserConfiguration(Annotated.class).run(ctx -> {
      assertThat(ctx).hasSingleBean(Engine.class).hasSingleBean(WeightedMeterBinder.class);
      assertThat(ctx.getBean(Engine.class).clockMode()).isEqualTo(ClockMode.REAL);
    });
  }

  @Test
  void thePropertyAloneReadsTheFile() {
    runner.withPropertyValues("weighted.loadbalancer.config=classpath:weighted-it.json",
        "weighted.loadbalancer.clock=manual").run(ctx -> {
          Engine engine = ctx.getBean(Engine.class);
          assertThat(engine.clockMode()).isEqualTo(ClockMode.MANUAL);
          assertThat(Json.parseObject(engine.snapshotJson()).get("clock")).isEqualTo("manual");
        });
  }

  @Test
  void aMissingOrInvalidExplicitConfigFailsTheStart() {
    runner.withPropertyValues("weighted.loadbalancer.config=classpath:nope.json")
        .run(ctx -> assertThat(ctx).hasFailed().getFailure().rootCause()
            .hasMessageContaining("nope.json"));
    runner.withPropertyValues("weighted.loadbalancer.config=classpath:bad-weighted.json")
        .run(ctx -> assertThat(ctx).hasFailed().getFailure().rootCause()
            .isInstanceOf(ConfigException.class).hasMessageContaining("controller"));
  }

  @Test
  void startupErrorsNameTheFile(@TempDir Path dir) throws IOException {
    Path bad = dir.resolve("bad.json");
    Files.writeString(bad, "{\"controller\": {\"interval_ms\": 7}}");
    runner.withPropertyValues("weighted.loadbalancer.config=" + bad)
        .run(ctx -> assertThat(ctx).hasFailed().getFailure().rootCause()
            .isInstanceOf(ConfigException.class)
            .hasMessageContaining("weighted.loadbalancer.config \"" + bad + "\"")
            .hasMessageContaining("/controller/interval_ms"));
    Path broken = dir.resolve("broken.json");
    Files.writeString(broken, "{\n\"controller\": {\n");
    runner.withPropertyValues("weighted.loadbalancer.config=file:" + broken)
        .run(ctx -> assertThat(ctx).hasFailed().getFailure().rootCause()
            .isInstanceOf(ConfigException.class)
            .hasMessageContaining(broken.toString()).hasMessageContaining("line 3"));
    Path notUtf8 = dir.resolve("latin1.json");
    Files.write(notUtf8, new byte[] {'{', '"', (byte) 0xe9, '"', ':', '1', '}'});
    runner.withPropertyValues("weighted.loadbalancer.config=" + notUtf8)
        .run(ctx -> assertThat(ctx).hasFailed().getFailure().rootCause()
            .hasMessageContaining(notUtf8.toString()).hasMessageContaining("not valid UTF-8"));
    runner.withPropertyValues("weighted.loadbalancer.config=" + dir)
        .run(ctx -> assertThat(ctx).hasFailed().getFailure().rootCause()
            .hasMessageContaining(dir.toString()).hasMessageContaining("not a regular file"));
  }

  @Test
  void aFileConfigIsWatchedAndAClasspathOneIsNot(@TempDir Path dir) throws IOException {
    Path file = dir.resolve("weighted.json");
    Files.writeString(file, "{}");
    runner.withPropertyValues("weighted.loadbalancer.config=" + file).run(ctx ->
        assertThat(ctx.getBean(WeightedConfigReloader.class).watcher()).get()
            .extracting(ConfigFileWatcher::file).isEqualTo(file));
    runner.withPropertyValues("weighted.loadbalancer.config=classpath:weighted-it.json").run(ctx ->
        assertThat(ctx.getBean(WeightedConfigReloader.class).watcher()).isEmpty());
    runner.withPropertyValues("weighted.loadbalancer.config=" + file,
        "weighted.loadbalancer.reload.enabled=false").run(ctx ->
            assertThat(ctx).hasSingleBean(Engine.class)
                .doesNotHaveBean(WeightedConfigReloader.class));
  }

  @Test
  void enabledFalseWins() {
    runner.withUserConfiguration(Annotated.class)
        .withPropertyValues("weighted.loadbalancer.enabled=false")
        .run(ctx -> assertThat(ctx).doesNotHaveBean(Engine.class));
  }

  @Test
  void theEngineClosesWithTheContext() {
    Engine[] engine = new Engine[1];
    runner.withUserConfiguration(Annotated.class).run(ctx -> engine[0] = ctx.getBean(Engine.class));
    assertThat(engine[0].isClosed()).isTrue();
  }
}
