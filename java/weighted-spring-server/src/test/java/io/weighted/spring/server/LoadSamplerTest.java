package io.weighted.spring.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.junit.jupiter.api.Test;

/** The sampler on a test clock: when it samples, what it says, and a real Jetty pool's figure. */
class LoadSamplerTest {
  final AtomicLong nanos = new AtomicLong(1_000_000_000L);
  double cpu = 0.25;
  double heap = 0.5;
  double connections = Double.NaN;

  LoadSampler sampler() {
    return new LoadSampler(1_000_000_000L, nanos::get, () -> cpu, () -> heap, () -> connections,
        "thread_pool", "connection_pool");
  }

  static LoadSampler.Pool pool(AtomicInteger busy, int max) {
    return new LoadSampler.Pool() {
      @Override
      public int busy() {
        return busy.get();
      }

      @Override
      public int max() {
        return max;
      }
    };
  }

  @Test
  void samplesOncePerIntervalAndLeavesUnknownFiguresOut() {
    LoadSampler s = sampler();
    String first = s.header();
    assertThat(first).isEqualTo("TEXT cpu_utilization=0.2500, mem_utilization=0.5000");
    cpu = 0.9;
    nanos.addAndGet(999_999_999L);
    assertThat(s.header()).isSameAs(first);  // not due: the cached text
    nanos.addAndGet(1);
    assertThat(s.header()).startsWith("TEXT cpu_utilization=0.9000,");
  }

  @Test
  void thePoolsPeakAndTheServersOwnRates() {
    LoadSampler s = sampler();
    AtomicInteger busy = new AtomicInteger(1);
    s.setPool(pool(busy, 8));
    s.header();
    for (int i = 0; i < 4; i++) {
      s.begin();
    }
    for (int i = 0; i < 4; i++) {
      s.end(i == 0 ? 503 : 200);  // a burst of 4 that left before the next sample
    }
    connections = 0.75;
    nanos.addAndGet(2_000_000_000L);
    assertThat(s.header()).isEqualTo("TEXT cpu_utilization=0.2500, mem_utilization=0.5000, "
        + "named_metrics.thread_pool=0.5000, named_metrics.connection_pool=0.7500, "
        + "rps_fractional=2.000, eps=0.5000");
    busy.set(8);  // the server's own pool says full
    nanos.addAndGet(1_000_000_000L);
    assertThat(s.header()).contains("named_metrics.thread_pool=1.000");
  }

  @Test
  void timedRequestsGiveTheServersMeanLatencyAndAnIdleIntervalKeepsIt() {
    LoadSampler s = sampler();
    assertThat(s.header()).doesNotContain("latency_ms");  // nothing served yet
    for (long ms : new long[] {20, 40}) {
      long started = s.begin();
      nanos.addAndGet(ms * 1_000_000L);
      s.end(200, started);
    }
    nanos.addAndGet(1_000_000_000L);
    assertThat(s.header()).endsWith("named_metrics.latency_ms=30.00");
    nanos.addAndGet(1_000_000_000L);  // idle: the last figure stands, the rates go
    assertThat(s.header()).isEqualTo(
        "TEXT cpu_utilization=0.2500, mem_utilization=0.5000, named_metrics.latency_ms=30.00");
    long started = s.begin();
    nanos.addAndGet(500_000_000L);
    s.end(503, started);
    nanos.addAndGet(1_000_000_000L);
    assertThat(s.header()).contains("eps=").endsWith("named_metrics.latency_ms=500.0");
  }

  @Test
  void theLatencyCanBeRenamedOrLeftOut() {
    LoadSampler renamed = new LoadSampler(1, nanos::get, () -> cpu, () -> heap, () -> connections,
        "thread_pool", "connection_pool", "service_ms");
    renamed.end(200, renamed.begin() - 10_000_000L);
    nanos.addAndGet(1);
    assertThat(renamed.header()).endsWith("named_metrics.service_ms=10.00");
    LoadSampler none = new LoadSampler(1, nanos::get, () -> cpu, () -> heap, () -> connections,
        "thread_pool", "connection_pool", null);
    none.end(200, none.begin() - 10_000_000L);
    nanos.addAndGet(1);
    assertThat(none.header()).doesNotContain("named_metrics");
    assertThatThrownBy(() -> new LoadSampler(1, nanos::get, () -> 0, () -> 0, () -> 0, "a", "b",
        "a")).hasMessageContaining("must differ");
  }

  @Test
  void refusesWhatWouldMakeABadHeader() {
    assertThatThrownBy(() -> new LoadSampler(0, nanos::get, () -> 0, () -> 0, () -> 0, "a", "b"))
        .hasMessageContaining("interval must be positive, got 0 ns");
    assertThatThrownBy(() -> new LoadSampler(1, nanos::get, () -> 0, () -> 0, () -> 0, "a,b", "b"))
        .hasMessageContaining("\"a,b\" cannot be a named_metrics name");
  }

  @Test
  void aJettyPoolReportsItsBusyThreads() throws Exception {
    QueuedThreadPool q = new QueuedThreadPool(8, 2);
    q.setReservedThreads(0);
    q.start();
    java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.CountDownLatch started = new java.util.concurrent.CountDownLatch(3);
    try {
      for (int i = 0; i < 3; i++) {
        q.execute(() -> {
          started.countDown();
          try {
            release.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });
      }
      started.await();
      LoadSampler.Pool p = ServerPools.Jetty.pool(q);
      assertThat(p.max()).isEqualTo(8);
      assertThat(p.busy()).isEqualTo(3);
    } finally {
      release.countDown();
      q.stop();
    }
  }
}
