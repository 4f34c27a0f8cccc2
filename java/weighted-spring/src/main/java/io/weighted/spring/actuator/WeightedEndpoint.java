package io.weighted.spring.actuator;

import io.weighted.jni.Engine;
import io.weighted.jni.Monitor;
import io.weighted.jni.NotFoundException;
import io.weighted.jni.WeightedException;
import io.weighted.spring.ConfigFileWatcher;
import io.weighted.spring.WeightedConfigReloader;
import java.util.Locale;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;

/**
 * {@code /actuator/weighted}: the engine's snapshot and its recent events, the content of its
 * state file over HTTP, for {@code python -m weighted.dashboard --attach
 * http://host:port/actuator/weighted} on another machine.
 *
 * <pre>
 * GET /actuator/weighted           {"snapshot": {...}, "events": {"next", "lost", "reset", "events"}}
 * GET /actuator/weighted/{cursor}  the same, with only the events after cursor (pass "next" back)
 * POST /actuator/weighted          reads the config file now: {"config_file", "result"}
 * </pre>
 *
 * <p>The POST does what the file watcher's next poll would (the engine's reload; a refused file
 * keeps the config in force, is logged and published as {@code WeightedConfigEvent.Rejected}):
 * {@code "result"} is {@code "reloaded"}, {@code "unchanged"}, {@code "failed"} or
 * {@code "missing"}, and {@code "not_a_file"} when the config is not a file on disk.
 *
 * <p>The snapshot is the engine's own ({@code wt_engine_snapshot_json}); the events come from the
 * ring of the engine's state file, so {@code export.state_file} must be set for them (without it
 * {@code "events"} is null and {@code "events_error"} says why). Read-only, and like every
 * actuator endpoint but health it is served only when the application exposes it
 * ({@code management.endpoints.web.exposure.include=weighted}) and it is as protected as the
 * application's other actuator endpoints: it shows endpoint addresses and their health.
 */
@Endpoint(id = "weighted")
public class WeightedEndpoint {
  /** Events per answer at most: a console polls every second or so, the ring holds more. */
  static final long MAX_EVENTS = 500;

  private final Engine engine;
  private final WeightedConfigReloader reloader;  // null: the application has none

  public WeightedEndpoint(Engine engine) {
    this(engine, null);
  }

  public WeightedEndpoint(Engine engine, WeightedConfigReloader reloader) {
    this.engine = engine;
    this.reloader = reloader;
  }

  @WriteOperation(produces = "application/json")
  public String reload() {
    ConfigFileWatcher watcher = reloader == null ? null : reloader.watcher().orElse(null);
    if (watcher == null) {
      return "{\"config_file\":null,\"result\":\"not_a_file\"}";
    }
    ConfigFileWatcher.Result result = reloader.checkNow();
    return "{\"config_file\":" + quote(watcher.file().toString()) + ",\"result\":"
        + quote(result.name().toLowerCase(Locale.ROOT)) + "}";
  }

  @ReadOperation(produces = "application/json")
  public String weighted() {
    return answer(0);
  }

  @ReadOperation(produces = "application/json")
  public String eventsSince(@Selector long cursor) {
    if (cursor < 0) {
      throw new IllegalArgumentException("cursor must be >= 0, got " + cursor);
    }
    return answer(cursor);
  }

  // The engine's texts are JSON already: composed, not parsed and written again (a parse into
  // doubles would round the nanosecond times).
  private String answer(long cursor) {
    StringBuilder out = new StringBuilder(64 * 1024);
    out.append("{\"snapshot\":").append(engine.snapshotJson()).append(",\"events\":");
    try (Monitor m = Monitor.of(engine)) {
      out.append(m.eventsJson(cursor, MAX_EVENTS));
    } catch (NotFoundException e) {
      out.append("null,\"events_error\":").append(quote(
          "no export.state_file in the engine's config: events since a cursor need it"));
    } catch (WeightedException e) {
      out.append("null,\"events_error\":").append(quote(e.getMessage()));
    }
    return out.append('}').toString();
  }

  static String quote(String s) {
    return io.weighted.jni.Json.quote(s);
  }
}
