package io.weighted.spring;

import io.weighted.jni.Engine;
import io.weighted.jni.Json;
import io.weighted.jni.WeightedException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Applies changes of the shared JSON config file to a running engine ({@link Engine#reload}).
 *
 * <p>It polls: each poll reads the file's attributes through any symlinks (file key, i.e. inode,
 * modification time, size) and reads and hashes the content only when one of them moved. Polling
 * rather than a {@code java.nio} WatchService, because the ways a config file really changes are
 * not all events on that file: an editor that saves by writing a temporary file and renaming it
 * over the old one replaces the inode; a Kubernetes ConfigMap volume swaps a {@code ..data}
 * symlink one directory up, so the mounted name never sees an event of its own; inotify does not
 * fire on network file systems, and the JDK's WatchService on macOS polls anyway (every 2 to 10
 * s). A stat every interval sees all of these the same way, and a poll driven by a
 * {@link Scheduler} and a {@link Clock} makes the tests deterministic.
 *
 * <p>File systems with coarse timestamps (1 or 2 s) can hide a rewrite of the same size within
 * the same tick. Like Git's "racily clean" index entries: while the file's modification time is
 * less than {@value #RACY_MILLIS} ms older than the moment it was last read, every poll reads and
 * hashes it again.
 *
 * <p>A change whose content hashes to what the engine already runs does nothing (a {@code touch},
 * a rename of identical bytes). A valid new content is applied; a bad one (not JSON, an invalid
 * key, not UTF-8, over {@code limits.max_config_bytes}, not a regular file) is refused by the
 * engine or here, the old config stays in force, and the failure is logged with the file name and
 * reported once to the {@link Listener} (the same bad content is not reported again on every
 * poll). A file that disappears is reported once; the old config stays. When it comes back, its
 * content is compared like any change.
 */
public final class ConfigFileWatcher implements AutoCloseable {
  private static final Log log = LogFactory.getLog(ConfigFileWatcher.class);
  static final long RACY_MILLIS = 2000;

  /** Hears what a poll did. Called on the polling thread; exceptions are logged and ignored. */
  public interface Listener {
    /** The engine now runs the file's new content. */
    void reloaded(Path file);

    /**
     * The file's content could not be applied ({@code error} is the engine's
     * {@link io.weighted.jni.ConfigException} or an {@link IOException} naming the file; a
     * {@link NoSuchFileException} when it is gone); the engine still runs its previous config.
     */
    void failed(Path file, Exception error);
  }

  /** Runs the watcher's polls. The default is one daemon thread; tests pass one they drive. */
  @FunctionalInterface
  public interface Scheduler {
    /** Calls {@code poll} every {@code interval} until the returned handle is closed. */
    AutoCloseable scheduleEvery(Duration interval, Runnable poll);
  }

  /** What one poll found. */
  public enum Result {
    UNCHANGED, RELOADED, FAILED, MISSING
  }

  private final Engine engine;
  private final Path file;
  private final Clock clock;
  private final Listener listener;
  private AutoCloseable schedule;
  // What the last look at the file saw; null before the first and after a failed one.
  private Stat lastStat;
  private Instant lastReadAt = Instant.EPOCH;
  private byte[] appliedHash;
  private byte[] refusedHash;  // the last content refused, so that it is reported once
  private String reportedError;  // the last failure reported, so that it is not repeated
  private boolean missingReported;
  private boolean failing;  // the last look ended in a failure (reported then)
  private long maxBytes;

  private final UnaryOperator<String> prepare;

  /**
   * @param appliedContent the bytes the engine was created from (or last reloaded with): the
   *     first poll compares the file with them, so a change made between reading the file and
   *     starting the watcher is not lost
   */
  public ConfigFileWatcher(Engine engine, Path file, byte[] appliedContent, Clock clock,
      Listener listener) {
    this(engine, file, appliedContent, clock, listener, UnaryOperator.identity());
  }

  /** The same, with {@code prepare} applied to each new text before the engine reloads it. */
  public ConfigFileWatcher(Engine engine, Path file, byte[] appliedContent, Clock clock,
      Listener listener, UnaryOperator<String> prepare) {
    this.prepare = Objects.requireNonNull(prepare, "prepare");
    this.engine = Objects.requireNonNull(engine, "engine");
    this.file = Objects.requireNonNull(file, "file");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.listener = Objects.requireNonNull(listener, "listener");
    this.appliedHash = sha256(appliedContent);
    this.maxBytes = maxConfigBytes(decodeOrNull(appliedContent));
  }

  public Path file() {
    return file;
  }

  /** Starts polling every {@code interval} on {@code scheduler}; once. */
  public synchronized ConfigFileWatcher start(Scheduler scheduler, Duration interval) {
    if (schedule != null) {
      throw new IllegalStateException("already started");
    }
    if (interval.isZero() || interval.isNegative()) {
      throw new IllegalArgumentException("the poll interval must be positive, got " + interval);
    }
    schedule = scheduler.scheduleEvery(interval, this::pollQuietly);
    return this;
  }

  /** Stops polling (a poll under way finishes first). */
  @Override
  public void close() {
    AutoCloseable s;
    synchronized (this) {  // not held while waiting: the poll being waited for takes this lock
      s = schedule;
      schedule = null;
    }
    if (s != null) {
      try {
        s.close();
      } catch (Exception e) {
        log.warn("weighted: stopping the config watcher of " + quote(file) + " failed", e);
      }
    }
  }

  private void pollQuietly() {
    try {
      poll();
    } catch (RuntimeException e) {
      log.error("weighted: polling the config file " + quote(file) + " failed", e);
    }
  }

  /** One look at the file: applies a change if there is one. */
  public synchronized Result poll() {
    if (engine.isClosed()) {
      return Result.UNCHANGED;
    }
    Stat stat;
    try {
      stat = Stat.of(file);
    } catch (NoSuchFileException e) {
      lastStat = null;
      reportedError = null;
      if (!missingReported) {
        missingReported = true;
        log.warn("weighted: the config file " + quote(file)
            + " is gone; the engine keeps its current config");
        notifyFailed(new NoSuchFileException(file.toString(), null,
            "the config file is gone; the engine keeps its current config"));
      }
      return Result.MISSING;
    } catch (IOException e) {
      return refuse(null, null, new IOException(quote(file) + ": cannot read its attributes: "
          + e.getMessage(), e));
    }
    boolean wasMissing = missingReported;
    missingReported = false;
    if (stat.equals(lastStat) && !racy(stat)) {
      return failing ? Result.FAILED : Result.UNCHANGED;
    }
    byte[] content;
    try {
      content = read(stat);
    } catch (IOException e) {
      return refuse(stat, null, e);
    }
    lastStat = stat;
    lastReadAt = clock.instant();
    byte[] hash = sha256(content);
    if (Arrays.equals(hash, appliedHash)) {
      failing = false;
      refusedHash = null;
      reportedError = null;
      if (wasMissing) {
        log.info("weighted: the config file " + quote(file) + " is back, unchanged");
      }
      return Result.UNCHANGED;
    }
    if (Arrays.equals(hash, refusedHash)) {
      failing = true;
      return Result.FAILED;  // reported when it was first seen
    }
    String text;
    try {
      text = decode(content);
      engine.reload(prepare.apply(text));
    } catch (IOException | WeightedException e) {
      return refuse(stat, hash, e);
    }
    appliedHash = hash;
    failing = false;
    refusedHash = null;
    reportedError = null;
    maxBytes = maxConfigBytes(text);
    log.info("weighted: reloaded the config file " + quote(file));
    try {
      listener.reloaded(file);
    } catch (RuntimeException e) {
      log.error("weighted: a config reload listener failed", e);
    }
    return Result.RELOADED;
  }

  private Result refuse(Stat stat, byte[] hash, Exception cause) {
    failing = true;
    lastStat = stat;
    lastReadAt = clock.instant();
    refusedHash = hash;
    Exception error = cause instanceof WeightedException w
        ? new io.weighted.jni.ConfigException(w.code(), quote(file) + ": " + w.getMessage())
        : cause;
    if (hash == null && error.getMessage().equals(reportedError)) {
      return Result.FAILED;  // the same I/O failure again (a file it may not read, polled again)
    }
    reportedError = error.getMessage();
    log.error("weighted: config not applied, the engine keeps its current config: "
        + error.getMessage());
    notifyFailed(error);
    return Result.FAILED;
  }

  private void notifyFailed(Exception error) {
    try {
      listener.failed(file, error);
    } catch (RuntimeException e) {
      log.error("weighted: a config reload listener failed", e);
    }
  }

  private boolean racy(Stat stat) {
    return stat.modifiedMillis + RACY_MILLIS > lastReadAt.toEpochMilli();
  }

  /** At most limits.max_config_bytes of a regular file (a FIFO or a device could block or never end). */
  private byte[] read(Stat stat) throws IOException {
    if (!stat.regular) {
      throw new IOException(quote(file) + " is not a regular file");
    }
    try (InputStream in = Files.newInputStream(file)) {
      byte[] b = in.readNBytes((int) Math.min(Integer.MAX_VALUE - 8, maxBytes + 1));
      if (b.length > maxBytes) {
        throw new IOException(quote(file) + " is larger than limits.max_config_bytes ("
            + maxBytes + " bytes)");
      }
      return b;
    } catch (NoSuchFileException e) {
      throw new IOException(quote(file) + " vanished while being read", e);
    }
  }

  private String decode(byte[] content) throws IOException {
    return decodeUtf8(content, quote(file));
  }

  /** Strict UTF-8: a config with bytes that are not would be altered silently by a lenient decode. */
  static String decodeUtf8(byte[] content, String what) throws IOException {
    CharsetDecoder d = StandardCharsets.UTF_8.newDecoder()
        .onMalformedInput(CodingErrorAction.REPORT)
        .onUnmappableCharacter(CodingErrorAction.REPORT);
    ByteBuffer in = ByteBuffer.wrap(content);
    CharBuffer out = CharBuffer.allocate(content.length);
    CoderResult r = d.decode(in, out, true);
    if (r.isUnderflow()) {
      r = d.flush(out);
    }
    if (r.isError()) {
      throw new IOException(what + " is not valid UTF-8 (at byte " + in.position() + ")");
    }
    return out.flip().toString();
  }

  private static String decodeOrNull(byte[] content) {
    try {
      return decodeUtf8(content, "");
    } catch (IOException e) {
      return null;
    }
  }

  /** The limit the engine's current config sets on a config's size (its default if unreadable). */
  static long maxConfigBytes(String configJson) {
    String resolved;
    try {
      resolved = Engine.resolveConfig(configJson == null ? "{}" : configJson);
    } catch (WeightedException e) {
      resolved = Engine.resolveConfig("{}");
    }
    Object limits = Json.parseObject(resolved).get("limits");
    Object max = limits instanceof Map<?, ?> m ? m.get("max_config_bytes") : null;
    return max instanceof Number n ? n.longValue() : 1 << 20;
  }

  static byte[] sha256(byte[] content) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(content);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required of every JVM", e);
    }
  }

  /** The path in quotes with control characters escaped, so that a name cannot forge a log line. */
  static String quote(Path p) {
    return quote(p.toString());
  }

  static String quote(String s) {
    return io.weighted.jni.Json.quote(s);
  }

  /** What identifies one version of the file: its inode (through symlinks), mtime and size. */
  private record Stat(Object fileKey, long modifiedMillis, long modifiedNanos, long size,
      boolean regular) {
    static Stat of(Path file) throws IOException {
      BasicFileAttributes a = Files.readAttributes(file, BasicFileAttributes.class);
      Instant m = a.lastModifiedTime().toInstant();
      return new Stat(a.fileKey(), m.toEpochMilli(), m.getNano(), a.size(), a.isRegularFile());
    }
  }

  /** One daemon thread per watcher. */
  public static Scheduler daemonThread() {
    return (interval, poll) -> {
      ScheduledExecutorService ex = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "weighted-config-watch");
        t.setDaemon(true);
        return t;
      });
      long ms = Math.max(1, interval.toMillis());
      ex.scheduleWithFixedDelay(poll, ms, ms, TimeUnit.MILLISECONDS);
      return () -> {
        ex.shutdown();
        if (!ex.awaitTermination(10, TimeUnit.SECONDS)) {
          ex.shutdownNow();
        }
      };
    };
  }
}
