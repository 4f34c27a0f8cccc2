package io.weighted.spring;

import io.weighted.jni.ConfigException;
import io.weighted.jni.Engine;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.core.io.DefaultResourceLoader;
import org.springframework.core.io.Resource;
import org.springframework.core.io.ResourceLoader;

/**
 * The shared config as the application started with it: where it was read from, the file on disk
 * when it is one ({@code file:} locations and plain paths; those are watched for changes), and its
 * bytes. Every failure names the location.
 */
public final class WeightedConfigSource {
  private static final Log log = LogFactory.getLog(WeightedConfigSource.class);

  private final String location;
  private final Path file;
  private final byte[] content;
  private final String text;
  private String clientId;
  private int[] place;

  private WeightedConfigSource(String location, Path file, byte[] content, String text) {
    this.location = location;
    this.file = file;
    this.content = content;
    this.text = text;
  }

  /**
   * {@link #load(String, ResourceLoader, boolean)} with this application's subset client id,
   * which the engine's config gets as {@code subset.client_id} where it has a subset without one
   * (see {@link SubsetClientId}).
   */
  public static WeightedConfigSource load(String location, ResourceLoader loader, boolean explicit,
      String clientId) throws IOException {
    return load(location, loader, explicit, clientId, null);
  }

  /**
   * The same with this instance's place in its fleet ({@code {index, count}}, or null), which the
   * config gets as {@code subset.client_index} and {@code subset.client_count} where its subset
   * has neither (see {@link SubsetClientId#placeOf}).
   */
  public static WeightedConfigSource load(String location, ResourceLoader loader, boolean explicit,
      String clientId, int[] place) throws IOException {
    WeightedConfigSource s = load(location, loader, explicit);
    s.clientId = clientId;
    s.place = place == null ? null : place.clone();
    return s;
  }

  /** A config text as the engine gets it: with the client id and place filled in (see load). */
  public String prepare(String configText) {
    return clientId == null && place == null ? configText
        : SubsetClientId.inject(configText, clientId, place);
  }

  /** The subset client id, or null. */
  public String clientId() {
    return clientId;
  }

  /**
   * Reads {@code location}: a Spring resource location ({@code classpath:}, {@code file:}) or a
   * plain path. A location set explicitly must exist; the default one may be absent, and the
   * engine's defaults ("{}") are used then.
   */
  public static WeightedConfigSource load(String location, ResourceLoader loader, boolean explicit)
      throws IOException {
    ResourceLoader rl = loader != null ? loader : new DefaultResourceLoader();
    String loc = location.startsWith("/") || !location.contains(":") ? "file:" + location
        : location;
    Resource r = rl.getResource(loc);
    if (!r.exists()) {
      if (!explicit) {
        log.info("weighted: no " + location + ", using the engine's defaults");
        return new WeightedConfigSource(location, null, "{}".getBytes(StandardCharsets.UTF_8),
            "{}");
      }
      throw new IOException("weighted.loadbalancer.config " + quote(location)
          + " does not exist");
    }
    Path file = loc.startsWith("file:") && r.isFile() ? r.getFile().toPath() : null;
    // The same bound the engine's own file reader applies before any config is known.
    long max = ConfigFileWatcher.maxConfigBytes("{}");
    if (file != null && !Files.isRegularFile(file)) {
      throw new IOException("weighted.loadbalancer.config " + quote(location)
          + " is not a regular file");
    }
    byte[] content;
    try (InputStream in = r.getInputStream()) {
      content = in.readNBytes((int) Math.min(Integer.MAX_VALUE - 8, max + 1));
    }
    if (content.length > max) {
      throw new IOException("weighted.loadbalancer.config " + quote(location)
          + " is larger than limits.max_config_bytes (" + max + " bytes)");
    }
    String text = ConfigFileWatcher.decodeUtf8(content,
        "weighted.loadbalancer.config " + quote(location));
    return new WeightedConfigSource(location, file, content, text);
  }

  /** An engine from this config; a config the engine refuses fails naming the location. */
  public Engine createEngine(io.weighted.jni.ClockMode clock) {
    try {
      return Engine.create(prepare(text), clock);
    } catch (ConfigException e) {
      throw new ConfigException(e.code(),
          "weighted.loadbalancer.config " + quote(location) + ": " + e.getMessage());
    }
  }

  /** The location as configured. */
  public String location() {
    return location;
  }

  /** The file on disk, or null (a classpath resource, or the engine's defaults). */
  public Path file() {
    return file;
  }

  /** The bytes the engine was created from. */
  public byte[] content() {
    return content.clone();
  }

  public String text() {
    return text;
  }

  private static String quote(String s) {
    return ConfigFileWatcher.quote(s);
  }
}
