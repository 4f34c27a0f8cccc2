package io.weighted.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.weighted.jni.ConfigException;
import io.weighted.jni.Engine;
import io.weighted.jni.EventType;
import io.weighted.jni.Json;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.event.EventListener;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * A running Spring Boot application whose {@code weighted.loadbalancer.config} is a file on disk:
 * rewritten valid, the engine runs the new config; rewritten invalid, the old one stays, the error
 * is logged with the file's name and a {@link WeightedConfigEvent.Rejected} is published; deleted
 * and restored, the same. The watcher's polls run when the test says (a manual scheduler bean).
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.NONE,
    classes = ConfigReloadTests.App.class,
    properties = {"weighted.loadbalancer.clock=manual",
        "weighted.loadbalancer.reload.interval=750ms"})
@ExtendWith(OutputCaptureExtension.class)
class ConfigReloadTests {
  static final Path DIR;
  static final Path FILE;

  static {
    try {
      DIR = Files.createTempDirectory("weighted-reload");
      FILE = DIR.resolve("weighted.json");
      Files.writeString(FILE, "{\"profile\": \"default\"}");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class App {
    @Bean
    ManualScheduler manualScheduler() {
      return new ManualScheduler();
    }

    @Bean
    Events events() {
      return new Events();
    }
  }

  /** Polls when the test calls {@link #tick()}. */
  static final class ManualScheduler implements ConfigFileWatcher.Scheduler {
    volatile Runnable poll;
    volatile Duration interval;

    @Override
    public AutoCloseable scheduleEvery(Duration interval, Runnable poll) {
      this.interval = interval;
      this.poll = poll;
      return () -> this.poll = null;
    }

    void tick() {
      poll.run();
    }
  }

  static final class Events {
    final List<WeightedConfigEvent> seen = new CopyOnWriteArrayList<>();

    @EventListener
    void on(WeightedConfigEvent e) {
      seen.add(e);
    }
  }

  @DynamicPropertySource
  static void config(DynamicPropertyRegistry registry) {
    registry.add("weighted.loadbalancer.config", FILE::toString);  // a plain path
  }

  @AfterAll
  static void cleanUp() throws IOException {
    Files.deleteIfExists(FILE);
    Files.deleteIfExists(DIR);
  }

  @Autowired
  Engine engine;

  @Autowired
  ManualScheduler scheduler;

  @Autowired
  Events events;

  String profile() {
    return (String) Json.parseObject(engine.snapshotJson()).get("profile");
  }

  /** Replaces the file as an editor does (write beside, rename over), so the inode changes. */
  static void save(String text) throws IOException {
    Path tmp = DIR.resolve("weighted.json.tmp");
    Files.writeString(tmp, text);
    Files.move(tmp, FILE, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }

  @Test
  void theFileIsWatchedAndEveryChangeAppliedOrRefusedVisibly(CapturedOutput output)
      throws IOException {
    assertThat(scheduler.interval).isEqualTo(Duration.ofMillis(750));
    assertThat(profile()).isEqualTo("default");
    scheduler.tick();
    assertThat(events.seen).isEmpty();  // the content it started with

    // Valid: the engine's config changes.
    save("{\"profile\": \"article\"}");
    scheduler.tick();
    assertThat(profile()).isEqualTo("article");
    assertThat(events.seen).singleElement().isInstanceOf(WeightedConfigEvent.Reloaded.class);
    assertThat(engine.drainEvents()).extracting(e -> e.type())
        .contains(EventType.CONFIG_RELOADED);
    events.seen.clear();

    // Invalid: the old config stays, the error is logged with the file and raised as an event.
    save("{\"profile\": \"default\", \"window\": {\"length_ms\": -1}}");
    scheduler.tick();
    assertThat(profile()).isEqualTo("article");
    assertThat(events.seen).singleElement().isInstanceOfSatisfying(
        WeightedConfigEvent.Rejected.class, r -> {
          assertThat(r.getFile()).isEqualTo(FILE);
          assertThat(r.getError()).isInstanceOf(ConfigException.class)
              .hasMessageContaining(FILE.toString()).hasMessageContaining("/window/length_ms");
        });
    assertThat(output.getAll()).contains("config not applied, the engine keeps its current "
        + "config: \"" + FILE + "\": WT_ERR_CONFIG_INVALID: /window/length_ms");
    scheduler.tick();
    assertThat(events.seen).hasSize(1);  // not raised again for the same file
    events.seen.clear();

    // Deleted: the config stays, one event; restored with a change: applied.
    Files.delete(FILE);
    scheduler.tick();
    scheduler.tick();
    assertThat(profile()).isEqualTo("article");
    assertThat(events.seen).singleElement().isInstanceOfSatisfying(
        WeightedConfigEvent.Rejected.class,
        r -> assertThat(r.getError()).isInstanceOf(NoSuchFileException.class));
    assertThat(output.getAll()).contains("the config file \"" + FILE + "\" is gone");
    save("{\"profile\": \"default\"}");
    scheduler.tick();
    assertThat(profile()).isEqualTo("default");
    assertThat(events.seen).hasSize(2).last().isInstanceOf(WeightedConfigEvent.Reloaded.class);
  }
}
