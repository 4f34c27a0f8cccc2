package io.weighted.spring;

import java.nio.file.Path;
import org.springframework.context.ApplicationEvent;

/**
 * What the config file watcher did: {@link Reloaded} (the engine runs the file's new content) or
 * {@link Rejected} (it could not be applied; the engine keeps its previous config). Listen with
 * {@code @EventListener}; published on the watcher's thread.
 */
public abstract sealed class WeightedConfigEvent extends ApplicationEvent {
  private static final long serialVersionUID = 1L;
  private final transient Path file;

  WeightedConfigEvent(Object source, Path file) {
    super(source);
    this.file = file;
  }

  /** The config file, as configured (before symlinks are followed). */
  public Path getFile() {
    return file;
  }

  /** The file's new content is in force (the engine also queued its CONFIG_RELOADED event). */
  public static final class Reloaded extends WeightedConfigEvent {
    private static final long serialVersionUID = 1L;

    public Reloaded(Object source, Path file) {
      super(source, file);
    }

    @Override
    public String toString() {
      return "WeightedConfigEvent.Reloaded[" + ConfigFileWatcher.quote(getFile()) + "]";
    }
  }

  /**
   * The file's content was not applied: {@link #getError()} says what and where (a
   * {@link io.weighted.jni.ConfigException} with the line and column or the JSON path, or an
   * {@link java.io.IOException}; a {@link java.nio.file.NoSuchFileException} when the file is
   * gone). The engine keeps the config it had.
   */
  public static final class Rejected extends WeightedConfigEvent {
    private static final long serialVersionUID = 1L;
    private final Exception error;

    public Rejected(Object source, Path file, Exception error) {
      super(source, file);
      this.error = error;
    }

    public Exception getError() {
      return error;
    }

    @Override
    public String toString() {
      return "WeightedConfigEvent.Rejected[" + ConfigFileWatcher.quote(getFile()) + ": "
          + error.getMessage() + "]";
    }
  }
}
