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
