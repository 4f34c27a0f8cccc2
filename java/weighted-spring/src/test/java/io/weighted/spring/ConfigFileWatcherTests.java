package io.weighted.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.weighted.jni.ClockMode;
import io.weighted.jni.ConfigException;
import io.weighted.jni.Engine;
import io.weighted.jni.EventType;
import io.weighted.jni.Json;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The watcher against real files in a temporary directory, changed the ways config files are
 * changed in practice (rewritten in place, replaced by rename, a Kubernetes ConfigMap's symlink
 * swap, deleted and restored), on a real engine. Polls are called by the test and the watcher's
 * clock is a fixed one the test moves, so each poll's result is known.
 */
class ConfigFileWatcherTests {
  static final String DEFAULT = "{\"profile\": \"default\"}";
  static final String ARTICLE = "{\"profile\": \"article\"}";

  @TempDir
  Path dir;

  Engine engine;
  Path file;
  Instant now = Instant.parse("2030-01-01T00:00:00Z");
  final List<String> heard = new ArrayList<>();
  final List<Exception> errors = new ArrayList<>();
  ConfigFileWatcher watcher;

  @BeforeEach
  void setUp() throws IOException {
    engine = Engine.create(DEFAULT, ClockMode.MANUAL);
    file = dir.resolve("weighted.json");
    write(file, DEFAULT);
    watcher = watcher(file, DEFAULT);
  }

  @AfterEach
  void tearDown() {
    watcher.close();
    engine.close();
  }

  ConfigFileWatcher watcher(Path f, String applied) {
    Clock clock = new Clock() {
      @Override
      public Instant instant() {
        return now;
      }

      @Override
      public java.time.ZoneId getZone() {
        return ZoneOffset.UTC;
      }

      @Override
      public Clock withZone(java.time.ZoneId zone) {
        return this;
      }
    };
    return new ConfigFileWatcher(engine, f, applied.getBytes(StandardCharsets.UTF_8), clock,
        new ConfigFileWatcher.Listener() {
          @Override
          public void reloaded(Path p) {
            heard.add("reloaded");
          }

          @Override
          public void failed(Path p, Exception error) {
            heard.add("failed");
            errors.add(error);
          }
        });
  }

  /** Writes in place (same inode) with a modification time well before the watcher's now. */
  void write(Path f, String text) throws IOException {
    Files.writeString(f, text);
    Files.setLastModifiedTime(f, FileTime.from(now.minusSeconds(60)));
  }

  String profile() {
    return (String) Json.parseObject(engine.snapshotJson()).get("profile");
  }

  @Test
  void aFileWithTheContentTheEngineRunsChangesNothing() throws IOException {
    assertThat(watcher.poll()).isEqualTo(ConfigFileWatcher.Result.UNCHANGED);
    Files.setLastModifiedTime(file, FileTime.from(now.minusSeconds(30)));  // touch
    assertThat(watcher.poll()).isEqualTo(ConfigFileWatcher.Result.UNCHANGED);
    assertThat(heard).isEmpty();
    assertThat(engine.drainEvents()).isEmpty();
  }

  @Test
  void aRewriteInPlaceIsApplied() throws IOException {
    watcher.poll();
    write(file, ARTICLE);
    Files.setLastModifiedTime(file, FileTime.from(now.minusSeconds(50)));
    assertThat(watcher.poll()).isEqualTo(ConfigFileWatcher.Result.RELOADED);
    assertThat(profile()).isEqualTo("article");
    assertThat(heard).containsExactly("reloaded");
    assertThat(engine.drainEvents()).extracting(e -> e.type())
        .containsExactly(EventType.CONFIG_RELOADED);
    assertThat(watcher.poll()).isEqualTo(ConfigFileWatcher.Result.UNCHANGED);
  }

  @Test
  void aChangeBeforeTheFirstPollIsNotLost() throws IOException {
    // The engine was made from DEFAULT; the file changed before the watcher first looked.
    write(file, ARTICLE);
    assertThat(watcher.poll()).isEqualTo(ConfigFileWatcher.Result.RELOADED);
    assertThat(profile()).isEqualTo("article");
  }

  @Test
  void anInvalidFileKeepsTheOldConfigAndIsReportedOnceWithItsNameAndPath() throws IOException {
    watcher.poll();
    write(file, "{\"profile\": \"article\", \"controller\": {\"interval_ms\": 7}}");
    Files.setLastModifiedTime(file, FileTime.from(now.minusSeconds(50)));
    assertThat(watcher.poll()).isEqualTo(ConfigFileWatcher.Result.FAILED);
    assertThat(profile()).isEqualTo("default");
    assertThat(errors).singleElement().isInstanceOf(ConfigException.class)
        .satisfies(e -> assertThat(e.getMessage()).contains(file.toString())
            .contains("/controller/interval_ms").contains("WT_ERR_CONFIG_INVALID"));
    // Polled again, unchanged: still failing, not reported again; nor the same bytes touched.
    assertThat(watcher.poll()).isEqualTo(ConfigFileWatcher.Result.FAILED);
    Files.setLastModifiedTime(file, FileTime.from(now.minusSeconds(40)));
    assertThat(watcher.poll()).isEqualTo(ConfigFileWatcher.Result.FAILED);
    assertThat(heard).containsExactly("failed");
    // Fixed: applied.
    write(file, ARTICLE);
    Files.setLastModifiedTime(file, FileTime.from(now.minusSeconds(30)));
    assertThat(watcher.poll()).isEqualTo(ConfigFileWatcher.Result.RELOADED);
    assertThat(profile()).isEqualTo("article");
  }

  @Test
  void notJsonGivesTheLineAndColumn() throws IOException {
    watcher.poll();
    write(file, "{\n  \"profile\": \"article\",\n}");
    Files.setLastModifiedTime(file, FileTime.from(now.minusSeconds(50)));
    assertThat(watcher.poll()).isEqualTo(ConfigFileWatcher.Result.FAILED);
    assertThat(errors.get(0)).isInstanceOf(ConfigException.class)
        .hasMessageContaining(file.toString()).hasMessageContaining("line 3");
    assertThat(profile()).isEqualTo("default");
  }

  @Test
  void anEditorsRenameOverTheFileIsApplied() throws IOException {
    watcher.poll();
    Path tmp = dir.resolve(".weighted.json.swp");
    Files.writeString(tmp, ARTICLE.replace("\"article\"", "\"article\" "));
    // Same modification time as the old file: the new inode alone tells them apart.
    Files.setLastModifiedTime(tmp, Files.getLastModifiedTime(file));
    Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    assertThat(watcher.poll()).isEqualTo(ConfigFileWatcher.Result.RELOADED);
    assertThat(profile()).isEqualTo("article");
  }

  @Test
  void aConfigMapSymlinkSwapIsApplied() throws IOException {
    // The layout the kubelet writes: name -> ..data/name, ..data -> ..<timestamp>/
    Path v1 = Files.createDirectory(dir.resolve("..2030_01_01_00_00_00.1"));
    write(v1.resolve("weighted.json"), DEFAULT);
    Files.createSymbolicLink(dir.resolve("..data"), v1.getFileName());
    Path mounted = dir.resolve("mounted.json");
    Files.createSymbolicLink(mounted, Path.of("..data", "weighted.json"));
    watcher.close();
    watcher = watcher(mounted, DEFAULT);
    assertThat(watcher.poll()).isEqualTo(ConfigFileWatcher.Result.UNCHANGED);

    Path v2 = Files.createDirectory(dir.resolve("..2030_01_01_00_01_00.2"));
    write(v2.resolve("weighted.json"), ARTICLE);
    Files.createSymbolicLink(dir.resolve("..data_tmp"), v2.getFileName());
    Files.move(dir.resolve("..data_tmp"), dir.resolve("..data"),
        StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    assertThat(watcher.poll()).isEqualTo(ConfigFileWatcher.Result.RELOADED);
    assertThat(profile()).isEqualTo("article");
  }

  @Test
  void aDeletedFileKeepsTheConfigAndIsReportedOnceAndItsReturnIsApplied() throws IOException {
    watcher.poll();
    Files.delete(file);
    assertThat(watcher.poll()).isEqualTo(ConfigFileWatcher.Result.MISSING);
    assertThat(watcher.poll()).isEqualTo(ConfigFileWatcher.Result.MISSING);
    assertThat(errors).singleElement().isInstanceOf(NoSuchFileException.class);
    assertThat(profile()).isEqualTo("default");
    write(file, DEFAULT);  // restored as it was: nothing to do
    assertThat(watcher.poll()).isEqualTo(ConfigFileWatcher.Result.UNCHANGED);
    Files.delete(file);
    assertThat(watcher.poll()).isEqualTo(ConfigFileWatcher.Result.MISSING);
    write(file, ARTICLE);  // restored with a change
    assertThat(watcher.poll()).isEqualTo(ConfigFileWatcher.Result.RELOADED);
    assertThat(profile()).isEqualTo("article");
    assertThat(heard).containsExactly("failed", "failed", "reloaded");
  }

  @Test
  void aSameSizeRewriteWithinTheTimestampsTickIsSeenWhileItIsRecent() throws IOException {
    // A file system with 1 s timestamps: two writes in one second keep the mtime; same size.
    FileTime tick = FileTime.from(now.minusMillis(500));
    Files.writeString(file, DEFAULT);
    Files.setLastModifiedTime(file, tick);
    assertThat(watcher.poll()).isEqualTo(ConfigFileWatcher.Result.UNCHANGED);
    assertThat(ARTICLE).hasSameSizeAs(DEFAULT);
    Files.writeString(file, ARTICLE);
    Files.setLastModifiedTime(file, tick);
    now = now.plusSeconds(1);  // still within the racy window of that mtime
    assertThat(watcher.poll()).isEqualTo(ConfigFileWatcher.Result.RELOADED);
    assertThat(profile()).isEqualTo("article");
  }

  @Test
  void aSameSizeRewriteUnderAnOldTimestampNeedsANewInodeOrMtime() throws IOException {
    // The documented price of not hashing on every poll: the racy window is what catches the
    // case above; outside it, a rewrite that keeps inode, mtime and size is not seen.
    watcher.poll();
    FileTime old = Files.getLastModifiedTime(file);
    Files.writeString(file, ARTICLE);
    Files.setLastModifiedTime(file, old);
    assertThat(watcher.poll()).isEqualTo(ConfigFileWatcher.Result.UNCHANGED);
    assertThat(profile()).isEqualTo("default");
  }

  @Test
  void bytesThatAreNotUtf8AreRefused() throws IOException {
    watcher.poll();
    Files.write(file, new byte[] {'{', '"', (byte) 0xff, '"', ':', '1', '}'});
    Files.setLastModifiedTime(file, FileTime.from(now.minusSeconds(50)));
    assertThat(watcher.poll()).isEqualTo(ConfigFileWatcher.Result.FAILED);
    assertThat(errors.get(0)).isInstanceOf(IOException.class)
        .hasMessageContaining(file.toString()).hasMessageContaining("not valid UTF-8");
  }

  @Test
  void aFileOverTheConfigSizeLimitIsNotReadWhole() throws IOException {
    String limited = "{\"limits\": {\"max_config_bytes\": 16384}}";
    engine.reload(limited);
    watcher.close();
    watcher = watcher(file, limited);
    write(file, "{\"profile\": \"article\"" + " ".repeat(20000) + "}");
    assertThat(watcher.poll()).isEqualTo(ConfigFileWatcher.Result.FAILED);
    assertThat(errors.get(0)).hasMessageContaining("larger than limits.max_config_bytes (16384");
  }

  @Test
  void aDirectoryIsNotAConfig() throws IOException {
    Path d = Files.createDirectory(dir.resolve("conf.d"));
    watcher.close();
    watcher = watcher(d, DEFAULT);
    assertThat(watcher.poll()).isEqualTo(ConfigFileWatcher.Result.FAILED);
    assertThat(watcher.poll()).isEqualTo(ConfigFileWatcher.Result.FAILED);
    assertThat(errors).singleElement().satisfies(
        e -> assertThat(e.getMessage()).contains("is not a regular file"));
  }

  @Test
  void aNameWithControlCharactersCannotForgeALogLine() {
    assertThat(ConfigFileWatcher.quote("a\nb\"c")).isEqualTo("\"a\\u000ab\\\"c\"");
  }

  @Test
  void theSchedulerDrivesThePolls() throws Exception {
    Duration[] asked = new Duration[1];
    Runnable[] poll = new Runnable[1];
    boolean[] closed = new boolean[1];
    watcher.start((interval, p) -> {
      asked[0] = interval;
      poll[0] = p;
      return () -> closed[0] = true;
    }, Duration.ofMillis(1500));
    assertThat(asked[0]).isEqualTo(Duration.ofMillis(1500));
    write(file, ARTICLE);
    poll[0].run();
    assertThat(profile()).isEqualTo("article");
    watcher.close();
    assertThat(closed[0]).isTrue();
  }

  @Test
  void theDaemonThreadSchedulerPollsUntilClosed() throws Exception {
    write(file, ARTICLE);
    watcher.start(ConfigFileWatcher.daemonThread(), Duration.ofMillis(10));
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (!"article".equals(profile()) && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    assertThat(profile()).isEqualTo("article");
    watcher.close();
  }
}
