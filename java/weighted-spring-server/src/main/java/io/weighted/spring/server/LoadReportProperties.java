package io.weighted.spring.server;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * {@code weighted.server.load-report.*}: the header every response carries. The metric names
 * must match the clients' config (load_report.thread_pool_metric, connection_pool_metric and
 * latency_metric in the shared JSON; all default to these).
 */
@ConfigurationProperties(prefix = "weighted.server.load-report")
public class LoadReportProperties {
  /** Adds the header to every response. */
  private boolean enabled = true;
  /** How often the figures are sampled; responses in between send the last sample. */
  private Duration interval = Duration.ofSeconds(1);
  private String threadPoolMetric = "thread_pool";
  private String connectionPoolMetric = "connection_pool";
  /** The server's mean service time in ms since the last sample; empty: not sent. */
  private String latencyMetric = "latency_ms";

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

  public String getThreadPoolMetric() {
    return threadPoolMetric;
  }

  public void setThreadPoolMetric(String threadPoolMetric) {
    this.threadPoolMetric = threadPoolMetric;
  }

  public String getConnectionPoolMetric() {
    return connectionPoolMetric;
  }

  public void setConnectionPoolMetric(String connectionPoolMetric) {
    this.connectionPoolMetric = connectionPoolMetric;
  }

  public String getLatencyMetric() {
    return latencyMetric;
  }

  public void setLatencyMetric(String latencyMetric) {
    this.latencyMetric = latencyMetric;
  }
}
