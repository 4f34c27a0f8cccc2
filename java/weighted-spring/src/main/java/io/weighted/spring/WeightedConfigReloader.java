package io.weighted.spring;

import io.weighted.jni.Engine;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.SmartLifecycle;

/**
 * Keeps the engine on the config file's current content while the application runs: when
 * {@code weighted.loadbalancer.config} names a file on disk, a {@link ConfigFileWatcher} polls it
 * every {@code weighted.loadbalancer.reload.interval} and publishes a {@link WeightedConfigEvent}
 * for every change it applied or refused. Classpath configs are part of the build and are not
 * watched.
 */
public class WeightedConfigReloader implements SmartLifecycle {
  private static final Log log = LogFactory.getLog(WeightedConfigReloader.class);

  private final ConfigFileWatcher watcher;  // null: nothing to watch
  private final ConfigFileWatcher.Scheduler scheduler;
  private final Duration interval;
  private volatile boolean running;

  public WeightedConfigReloader(WeightedConfigSource source, Engine engine,
      ApplicationEventPublisher events, ConfigFileWatcher.Scheduler scheduler, Duration interval,
      Clock clock) {
    this.scheduler = scheduler;
    this.interval = interval;
    Path file = source.file();
    if (file == null) {
      watcher = null;
      log.debug("weighted: " + source.location() + " is not a file on disk; not watched");
      return;
    }
    watcher = new ConfigFileWatcher(engine, file, source.content(), clock,
        new ConfigFileWatcher.Listener() {
          @Override
          public void reloaded(Path f) {
            events.publishEvent(new WeightedConfigEvent.Reloaded(WeightedConfigReloader.this, f));
          }

          @Override
          public void failed(Path f, Exception error) {
            events.publishEvent(
                new WeightedConfigEvent.Rejected(WeightedConfigReloader.this, f, error));
          }
        }, source::prepare);
  }

  /** The watcher, when the config is a file on disk. */
  public Optional<ConfigFileWatcher> watcher() {
    return Optional.ofNullable(watcher);
  }

  /** Looks at the file now (as the next scheduled poll would); UNCHANGED when none is watched. */
  public ConfigFileWatcher.Result checkNow() {
    return watcher == null ? ConfigFileWatcher.Result.UNCHANGED : watcher.poll();
  }

  @Override
  public synchronized void start() {
    if (running) {
      return;
    }
    running = true;
    if (watcher != null) {
      watcher.start(scheduler, interval);
      log.info("weighted: watching " + ConfigFileWatcher.quote(watcher.file()) + " every "
          + interval.toMillis() + " ms");
    }
  }

  @Override
  public synchronized void stop() {
    running = false;
    if (watcher != null) {
      watcher.close();
    }
  }

  @Override
  public boolean isRunning() {
    return running;
  }
}
