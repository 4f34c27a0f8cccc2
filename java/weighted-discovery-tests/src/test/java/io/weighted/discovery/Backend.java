package io.weighted.discovery;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A loopback HTTP backend (the JDK's server): {@code /actuator/health} for Spring's health-check
 * supplier, {@code /work} answers at once, {@code /hold} waits until {@link #release()} while
 * {@link #holdRequests} is on, so a test can keep requests in flight on this backend. It records the {@code X-Seq} header of every request it serves, so
 * a test can tell when the client sent each one. {@link #restart()} comes back on the same port.
 */
final class Backend implements AutoCloseable {
  final String name;
  private volatile int port;
  private HttpServer server;
  private ExecutorService threads;
  final AtomicInteger served = new AtomicInteger();
  final AtomicInteger holding = new AtomicInteger();
  final ConcurrentLinkedQueue<Long> seqs = new ConcurrentLinkedQueue<>();
  private volatile boolean holdRequests;
  private final AtomicReference<CountDownLatch> hold =
      new AtomicReference<>(new CountDownLatch(1));

  Backend(String name) throws IOException {
    this.name = name;
    start(0);
  }

  private void start(int onPort) throws IOException {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", onPort), 64);
    threads = Executors.newFixedThreadPool(16, r -> {
      Thread t = new Thread(r, "backend-" + name);
      t.setDaemon(true);
      return t;
    });
    server.setExecutor(threads);
    server.createContext("/actuator/health", ex -> answer(ex, "{\"status\":\"UP\"}"));
    server.createContext("/work", ex -> {
      record(ex);
      answer(ex, name);
    });
    server.createContext("/hold", ex -> {
      record(ex);
      if (!holdRequests) {
        answer(ex, name);
        return;
      }
      holding.incrementAndGet();
      try {
        hold.get().await(60, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } finally {
        holding.decrementAndGet();
      }
      answer(ex, name);
    });
    server.start();
    port = server.getAddress().getPort();
  }

  private void record(HttpExchange ex) {
    String seq = ex.getRequestHeaders().getFirst("X-Seq");
    if (seq != null) {
      seqs.add(Long.parseLong(seq));
    }
    served.incrementAndGet();
  }

  private static void answer(HttpExchange ex, String body) throws IOException {
    byte[] b = body.getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().add("Content-Type", "text/plain");
    ex.sendResponseHeaders(200, b.length);
    try (OutputStream out = ex.getResponseBody()) {
      out.write(b);
    }
  }

  int port() {
    return port;
  }

  String id() {
    return "127.0.0.1:" + port;
  }

  void holdRequests(boolean on) {
    holdRequests = on;
  }

  /** Lets every held request answer; later /hold requests wait again. */
  void release() {
    hold.getAndSet(new CountDownLatch(1)).countDown();
  }

  /** Stops serving (a crash or a deploy), then serves again on the same port, counters kept. */
  void restart() throws IOException {
    int p = port;
    stop();
    start(p);
  }

  private void stop() {
    release();
    server.stop(0);
    threads.shutdownNow();
  }

  @Override
  public void close() {
    stop();
  }
}
