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
 * <p>Sampled, never computed per request: the first response after {@link #interval} has passed
 * takes a new sample (one thread wins the race; the others send the previous text), every other
 * response copies a cached string. The request pool's figure is the larger of what the web
 * server's own pool says at the sample and the most requests this server had in progress at
 * once since the previous one, over the pool's size: a pool that filled between two samples was
 * full. rps and eps are this server's own since the previous sample; an error is a 5xx.
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
  private volatile Pool pool;

  private final AtomicInteger inFlight = new AtomicInteger();
  private final AtomicInteger peak = new AtomicInteger();
  private final AtomicLong requests = new AtomicLong();
  private final AtomicLong errors = new AtomicLong();
  private final AtomicLong due;
  private volatile long since;
  private volatile String header = "TEXT ";

  public LoadSampler(long intervalNanos, LongSupplier nanoClock, Figure cpu, Figure memory,
      Figure connectionPool, String threadPoolName, String connectionPoolName) {
    if (intervalNanos <= 0) {
      throw new IllegalArgumentException("the sampling interval must be positive, got "
          + intervalNanos + " ns");
    }
    for (String n : new String[] {threadPoolName, connectionPoolName}) {
      if (n == null || n.isEmpty() || n.chars().anyMatch(c -> c <= ' ' || c == ',' || c == '='
          || c > 126)) {
        throw new IllegalArgumentException("\"" + n + "\" cannot be a named_metrics name");
      }
    }
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

  /** A request begins: call {@link #end} once when its response is complete. */
  public void begin() {
    int n = inFlight.incrementAndGet();
    peak.accumulateAndGet(n, Math::max);
  }

  public void end(int status) {
    inFlight.decrementAndGet();
    requests.incrementAndGet();
    if (status >= 500) {
      errors.incrementAndGet();
    }
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
