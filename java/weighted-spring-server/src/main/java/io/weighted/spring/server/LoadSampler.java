package io.weighted.spring.server;

import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.DoubleSupplier;
import java.util.function.LongSupplier;

/**
 * The figures one server reports on its responses, as the value of the
 * {@code endpoint-load-metrics} header (ORCA's TEXT form:
 * {@code TEXT cpu_utilization=0.31, mem_utilization=0.52, named_metrics.thread_pool=0.25, ...}).
 *
 * <p>Sampled, never computed per request: the first response after {@code interval} has passed
 * takes a new sample (one thread wins the race; the others send the previous text), every other
 * response copies a cached string. The request pool's figure is the larger of what the web
 * server's own pool says at the sample and the most requests this server had in progress at
 * once since the previous one, over the pool's size: a pool that filled between two samples was
 * full. rps and eps are this server's own since the previous sample; an error is a 5xx.
 *
 * <p>{@code named_metrics.<latency name>} (default {@code latency_ms}) is the mean time in ms
 * from {@link #begin} to {@link #end(int, long)} of the requests that ended since the previous
 * sample, or the previous figure when none did: the server's own service time over every
 * client's requests, which the engine's {@code server_latency} rule judges against the fleet's
 * (a client of thousands hears from one server too rarely to measure it).
 */
public final class LoadSampler {
  /** The response header, as gRPC, Envoy and vLLM name it over HTTP. */
  public static final String HEADER = "endpoint-load-metrics";

  /** A figure in [0, 1], or NaN when it is not known (yet). */
  public interface Figure extends DoubleSupplier {}

  /** The web server's request pool: busy workers and their maximum (0 when unknown). */
  public interface Pool {
    int busy();

    int max();

    /** True when each request in progress holds a worker (Tomcat, Jetty), false for Netty. */
    default boolean workerPerRequest() {
      return true;
    }
  }

  private final long intervalNanos;
  private final LongSupplier nanoClock;
  private final Figure cpu;
  private final Figure memory;
  private final Figure connectionPool;
  private final String threadPoolName;
  private final String connectionPoolName;
  private final String latencyName;
  private volatile Pool pool;

  private final AtomicInteger inFlight = new AtomicInteger();
  private final AtomicInteger peak = new AtomicInteger();
  private final AtomicLong requests = new AtomicLong();
  private final AtomicLong errors = new AtomicLong();
  private final AtomicLong servedNanos = new AtomicLong();
  private final AtomicLong timed = new AtomicLong();
  private volatile double latencyMs = Double.NaN;  // the last sample's mean that had requests
  private final AtomicLong due;
  private volatile long since;
  private volatile String header = "TEXT ";

  /** The latency under its default name, {@code latency_ms}. */
  public LoadSampler(long intervalNanos, LongSupplier nanoClock, Figure cpu, Figure memory,
      Figure connectionPool, String threadPoolName, String connectionPoolName) {
    this(intervalNanos, nanoClock, cpu, memory, connectionPool, threadPoolName,
        connectionPoolName, "latency_ms");
  }

  /** {@code latencyName} null: the latency is not sent. */
  public LoadSampler(long intervalNanos, LongSupplier nanoClock, Figure cpu, Figure memory,
      Figure connectionPool, String threadPoolName, String connectionPoolName,
      String latencyName) {
    if (intervalNanos <= 0) {
      throw new IllegalArgumentException("the sampling interval must be positive, got "
          + intervalNanos + " ns");
    }
    String[] names = latencyName == null
        ? new String[] {threadPoolName, connectionPoolName}
        : new String[] {threadPoolName, connectionPoolName, latencyName};
    for (String n : names) {
      if (n == null || n.isEmpty() || n.chars().anyMatch(c -> c <= ' ' || c == ',' || c == '='
          || c > 126)) {
        throw new IllegalArgumentException("\"" + n + "\" cannot be a named_metrics name");
      }
    }
    if (java.util.Arrays.stream(names).distinct().count() != names.length) {
      throw new IllegalArgumentException("the named metrics " + java.util.Arrays.toString(names)
          + " must differ: one entry cannot carry two figures");
    }
    this.latencyName = latencyName;
    this.intervalNanos = intervalNanos;
    this.nanoClock = nanoClock;
    this.cpu = cpu;
    this.memory = memory;
    this.connectionPool = connectionPool;
    this.threadPoolName = threadPoolName;
    this.connectionPoolName = connectionPoolName;
    long now = nanoClock.getAsLong();
    this.since = now;
    this.due = new AtomicLong(now);  // the first response samples
  }

  /** The web server's pool, once it is known (the server starts after the beans). */
  public void setPool(Pool pool) {
    this.pool = pool;
  }

  public Pool pool() {
    return pool;
  }

  /**
   * A request begins: call {@link #end(int, long)} once with the time returned when its response
   * is complete.
   */
  public long begin() {
    long started = nanoClock.getAsLong();
    int n = inFlight.incrementAndGet();
    peak.accumulateAndGet(n, Math::max);
    return started;
  }

  /** A request ended, untimed (its status only). */
  public void end(int status) {
    inFlight.decrementAndGet();
    requests.incrementAndGet();
    if (status >= 500) {
      errors.incrementAndGet();
    }
  }

  /** A request that {@link #begin} returned {@code startedNanos} for ended. */
  public void end(int status, long startedNanos) {
    servedNanos.addAndGet(Math.max(0, nanoClock.getAsLong() - startedNanos));
    timed.incrementAndGet();
    end(status);
  }

  /** The header's value for the response being sent now. */
  public String header() {
    long now = nanoClock.getAsLong();
    long d = due.get();
    if (now - d >= 0 && due.compareAndSet(d, now + intervalNanos)) {
      header = sample(now);
    }
    return header;
  }

  private String sample(long now) {
    StringBuilder b = new StringBuilder(160).append("TEXT ");
    append(b, "cpu_utilization", cpu.getAsDouble());
    append(b, "mem_utilization", memory.getAsDouble());
    int busy = inFlight.get();
    int peakSince = peak.getAndSet(busy);
    Pool p = pool;
    if (p != null && p.max() > 0) {
      int held = p.workerPerRequest() ? Math.max(peakSince, busy) : 0;
      double used = Math.max(p.busy(), held) / (double) p.max();
      append(b, "named_metrics." + threadPoolName, Math.min(1, used));
    }
    append(b, "named_metrics." + connectionPoolName, connectionPool.getAsDouble());
    double seconds = (now - since) / 1e9;
    long n = requests.getAndSet(0);
    long e = errors.getAndSet(0);
    since = now;
    if (seconds > 0 && n > 0) {
      append(b, "rps_fractional", n / seconds);
      append(b, "eps", e / seconds);
    }
    // A request ending between the two reads counts in the next sample's mean, or in this one
    // with the next one's time: either way a mean of real service times.
    long t = timed.getAndSet(0);
    long ns = servedNanos.getAndSet(0);
    if (t > 0) {
      latencyMs = ns / 1e6 / t;
    }
    // An idle interval repeats the last figure: a server every client has drained is still as
    // slow as it last was, and its silence must not bring the fleet back at once.
    if (latencyName != null) {
      append(b, "named_metrics." + latencyName, latencyMs);
    }
    if (b.charAt(b.length() - 2) == ',') {
      b.setLength(b.length() - 2);
    }
    return b.toString();
  }

  private static void append(StringBuilder b, String name, double v) {
    if (Double.isNaN(v) || v < 0 || Double.isInfinite(v)) {
      return;  // not known: left out, so the engine does not take it for 0
    }
    b.append(name).append('=').append(String.format(Locale.ROOT, "%.4g", v)).append(", ");
  }
}
