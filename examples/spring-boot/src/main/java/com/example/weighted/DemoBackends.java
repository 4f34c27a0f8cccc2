package com.example.weighted;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * Three toy backends on 127.0.0.1 so the demo runs alone. Make one sick and watch the weights:
 * {@code curl -XPOST 'localhost:8080/demo/backends/0?mode=slow'} (or fail, or ok).
 * Not part of the integration: delete this class in a real application.
 */
@Component
@RestController
public class DemoBackends implements DisposableBean {
  private final List<HttpServer> servers = new ArrayList<>();
  private final String[] modes = {"ok", "ok", "ok"};

  public DemoBackends(@Value("${demo.backends.port0}") int p0, @Value("${demo.backends.port1}") int p1,
      @Value("${demo.backends.port2}") int p2) throws IOException {
    int[] ports = {p0, p1, p2};
    for (int i = 0; i < ports.length; i++) {
      int n = i;
      HttpServer s = HttpServer.create(new InetSocketAddress("127.0.0.1", ports[i]), 0);
      s.setExecutor(Executors.newFixedThreadPool(8));
      s.createContext("/work", ex -> {
        String mode = modes[n];
        if (mode.equals("slow")) {
          sleep(300);
        }
        byte[] body = ("backend " + n + " (" + mode + ")").getBytes(StandardCharsets.UTF_8);
        ex.sendResponseHeaders(mode.equals("fail") ? 503 : 200, body.length);
        try (OutputStream out = ex.getResponseBody()) {
          out.write(body);
        }
      });
      s.start();
      servers.add(s);
    }
  }

  @PostMapping("/demo/backends/{n}")
  String setMode(@PathVariable("n") int n, @RequestParam("mode") String mode) {
    if (!List.of("ok", "slow", "fail").contains(mode)) {
      throw new IllegalArgumentException("mode is ok, slow or fail");
    }
    modes[n] = mode;
    return "backend " + n + " is now " + mode;
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public void destroy() {
    servers.forEach(s -> s.stop(0));
  }
}
