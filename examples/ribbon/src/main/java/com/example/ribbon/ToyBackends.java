package com.example.ribbon;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.StringJoiner;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;

/** Toy HTTP backends on 127.0.0.1, one of which can be told to fail. Not part of the integration. */
public final class ToyBackends implements AutoCloseable {
  private final List<HttpServer> servers = new ArrayList<>();
  private final List<ExecutorService> pools = new ArrayList<>();
  private final AtomicBoolean[] failing;

  private ToyBackends(int n) {
    failing = new AtomicBoolean[n];
    for (int i = 0; i < n; i++) {
      failing[i] = new AtomicBoolean();
    }
  }

  /** {@code n} backends on free ports: GET /work answers "backend i (ok)", or 503 when failing. */
  public static ToyBackends start(int n) throws IOException {
    // The JDK server writes a response's headers and body apart; without TCP_NODELAY each small
    // response then waits for the client's delayed ACK (about 40 ms a call on Linux loopback).
    // Read once, when the first server is made.
    System.setProperty("sun.net.httpserver.nodelay", "true");
    ToyBackends b = new ToyBackends(n);
    for (int i = 0; i < n; i++) {
      int id = i;
      HttpServer s = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
      ExecutorService pool = Executors.newFixedThreadPool(4);
      s.setExecutor(pool);
      s.createContext("/work", ex -> {
        boolean fail = b.failing[id].get();
        byte[] body = ("backend " + id + (fail ? " (fail)" : " (ok)")).getBytes(StandardCharsets.UTF_8);
        ex.sendResponseHeaders(fail ? 503 : 200, body.length);
        try (OutputStream out = ex.getResponseBody()) {
          out.write(body);
        }
      });
      s.start();
      b.servers.add(s);
      b.pools.add(pool);
    }
    return b;
  }

  public void setFailing(int i, boolean fail) {
    failing[i].set(fail);
  }

  /** Ribbon's listOfServers for them. */
  public String listOfServers() {
    StringJoiner j = new StringJoiner(",");
    for (HttpServer s : servers) {
      j.add("127.0.0.1:" + s.getAddress().getPort());
    }
    return j.toString();
  }

  @Override
  public void close() {
    servers.forEach(s -> s.stop(0));
    pools.forEach(ExecutorService::shutdownNow);
  }
}
