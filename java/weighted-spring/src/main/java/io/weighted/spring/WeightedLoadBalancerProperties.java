package io.weighted.spring;

import io.weighted.jni.ClockMode;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/** {@code weighted.loadbalancer.*}. */
@ConfigurationProperties(prefix = "weighted.loadbalancer")
public class WeightedLoadBalancerProperties {
  /**
   * The shared JSON config: a Spring resource location ("classpath:weighted.json",
   * "file:/etc/weighted.json") or a plain file path. Setting it enables the balancer.
   */
  private String config = "classpath:weighted.json";

  /** Set false to turn the balancer off even when the annotation or the config is present. */
  private boolean enabled = true;

  /** REAL in production; MANUAL lets tests drive the engine's clock (Engine.advance). */
  private ClockMode clock = ClockMode.REAL;

  /** Register Micrometer gauges per endpoint (weight, state, penalty) when Micrometer is present. */
  private boolean metrics = true;

  /** How often the gauges re-read the engine's snapshot. */
  private Duration metricsRefresh = Duration.ofSeconds(1);

  /** Reloading the config file while the application runs. */
  private final Reload reload = new Reload();

  public Reload getReload() {
    return reload;
  }

  /** {@code weighted.loadbalancer.reload.*}. */
  public static class Reload {
    /**
     * Watch the config file (a {@code file:} location or a plain path) and apply its changes
     * through the engine's reload; classpath configs are never watched.
     */
    private boolean enabled = true;

    /** How often the file's attributes are read (its content only when they moved). */
    private Duration interval = Duration.ofSeconds(2);

    public boolean isEnabled() {
      return enabled;
    }

    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    public Duration getInterval() {
      return interval;
    }

    public void setInterval(Duration interval) {
      this.interval = interval;
    }
  }

  public Duration getMetricsRefresh() {
    return metricsRefresh;
  }

  public void setMetricsRefresh(Duration metricsRefresh) {
    this.metricsRefresh = metricsRefresh;
  }

  public String getConfig() {
    return config;
  }

  public void setConfig(String config) {
    this.config = config;
  }

  public boolean isEnabled() {
    return enabled;
  }

  public void setEnabled(boolean enabled) {
    this.enabled = enabled;
  }

  public ClockMode getClock() {
    return clock;
  }

  public void setClock(ClockMode clock) {
    this.clock = clock;
  }

  public boolean isMetrics() {
    return metrics;
  }

  public void setMetrics(boolean metrics) {
    this.metrics = metrics;
  }
}
