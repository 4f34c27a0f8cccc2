package io.weighted.spring.server;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.springframework.util.ClassUtils;

/**
 * The web server's request pool and connection count, and the application's JDBC pools, read
 * from the libraries' own objects. Each library's code sits in a nested class that is loaded
 * only when that library is on the class path.
 *
 * <p>The web server object comes from Spring Boot's {@code WebServerInitializedEvent}, whose
 * package differs between Boot 3 and Boot 4; its two accessors ({@code getTomcat()},
 * {@code getServer()}) are called by name for the same reason. Everything past them is the
 * servers' own API.
 */
final class ServerPools {
  private static final ClassLoader LOADER = ServerPools.class.getClassLoader();
  static final boolean TOMCAT = ClassUtils.isPresent("org.apache.catalina.startup.Tomcat", LOADER);
  static final boolean JETTY = ClassUtils.isPresent("org.eclipse.jetty.server.Server", LOADER);
  static final boolean NETTY =
      ClassUtils.isPresent("reactor.netty.http.HttpResources", LOADER);
  static final boolean HIKARI = ClassUtils.isPresent("com.zaxxer.hikari.HikariDataSource", LOADER);

  private ServerPools() {}

  /** What a started web server offers: its request pool, and its connections as a figure. */
  record Found(LoadSampler.Pool pool, LoadSampler.Figure connections, String server) {}

  static Found of(Object webServer) {
    String name = webServer.getClass().getSimpleName();
    try {
      if (TOMCAT && name.equals("TomcatWebServer")) {
        return Tomcat.of(call(webServer, "getTomcat"));
      }
      if (JETTY && name.equals("JettyWebServer")) {
        return Jetty.of(call(webServer, "getServer"));
      }
      if (NETTY && name.equals("NettyWebServer")) {
        return Netty.of();
      }
    } catch (ReflectiveOperationException | RuntimeException e) {
      // A server this module does not know how to read: no pool figure, the rest still counts.
    }
    return new Found(null, () -> Double.NaN, name);
  }

  private static Object call(Object target, String method) throws ReflectiveOperationException {
    Method m = target.getClass().getMethod(method);
    return m.invoke(target);
  }

  /** The largest use over the application's Hikari pools (NaN without any). */
  static LoadSampler.Figure hikari(List<DataSource> sources) {
    if (!HIKARI) {
      return () -> Double.NaN;
    }
    return Hikari.of(sources);
  }

  /** Tomcat: the connector's executor (busy threads, max) and its connection count. */
  static final class Tomcat {
    static Found of(Object tomcat) {
      var connector = ((org.apache.catalina.startup.Tomcat) tomcat).getConnector();
      if (!(connector.getProtocolHandler() instanceof org.apache.coyote.AbstractProtocol<?> p)) {
        return new Found(null, () -> Double.NaN, "tomcat");
      }
      LoadSampler.Pool pool = new LoadSampler.Pool() {
        @Override
        public int busy() {
          return p.getExecutor() instanceof java.util.concurrent.ThreadPoolExecutor e
              ? e.getActiveCount() : 0;
        }

        @Override
        public int max() {
          return p.getExecutor() instanceof java.util.concurrent.ThreadPoolExecutor e
              ? e.getMaximumPoolSize() : p.getMaxThreads();
        }
      };
      LoadSampler.Figure connections = () -> {
        int max = p.getMaxConnections();  // -1: unlimited
        return max > 0 ? Math.min(1, p.getConnectionCount() / (double) max) : Double.NaN;
      };
      return new Found(pool, connections, "tomcat");
    }
  }

  /** Jetty: the server's QueuedThreadPool. */
  static final class Jetty {
    static Found of(Object server) {
      return new Found(pool(((org.eclipse.jetty.server.Server) server).getThreadPool()),
          () -> Double.NaN, "jetty");
    }

    static LoadSampler.Pool pool(Object threadPool) {
      if (!(threadPool instanceof org.eclipse.jetty.util.thread.QueuedThreadPool q)) {
        return null;
      }
      return new LoadSampler.Pool() {
        @Override
        public int busy() {
          return q.getBusyThreads();
        }

        @Override
        public int max() {
          return q.getMaxThreads();
        }
      };
    }
  }

  /**
   * Netty (WebFlux): no thread per request, so the pool's use is the event loops' backlog. An
   * event loop with {@link #FULL_BACKLOG} tasks waiting counts as busy; the figure is the busy
   * loops' share, so one stuck loop out of four reads 0.25.
   */
  static final class Netty {
    static final int FULL_BACKLOG = 64;

    static Found of() {
      var loops = reactor.netty.http.HttpResources.get()
          .onServer(reactor.netty.resources.LoopResources.DEFAULT_NATIVE);
      List<io.netty.util.concurrent.SingleThreadEventExecutor> executors = new ArrayList<>();
      for (io.netty.util.concurrent.EventExecutor e : loops) {
        if (e instanceof io.netty.util.concurrent.SingleThreadEventExecutor s) {
          executors.add(s);
        }
      }
      LoadSampler.Pool pool = new LoadSampler.Pool() {
        @Override
        public int busy() {
          int n = 0;
          for (var e : executors) {
            n += e.pendingTasks() >= FULL_BACKLOG ? 1 : 0;
          }
          return n;
        }

        @Override
        public int max() {
          return executors.size();
        }

        @Override
        public boolean workerPerRequest() {
          return false;  // a request in progress holds no loop
        }
      };
      return new Found(pool, () -> Double.NaN, "netty");
    }
  }

  /** HikariCP: active connections over the pool's maximum, the fullest pool of the application. */
  static final class Hikari {
    static LoadSampler.Figure of(List<DataSource> sources) {
      List<com.zaxxer.hikari.HikariDataSource> pools = new ArrayList<>();
      for (DataSource d : sources) {
        if (d instanceof com.zaxxer.hikari.HikariDataSource h) {
          pools.add(h);
        }
      }
      if (pools.isEmpty()) {
        return () -> Double.NaN;
      }
      return () -> {
        double most = Double.NaN;
        for (var h : pools) {
          var mx = h.getHikariPoolMXBean();  // null until the pool has started
          int max = h.getMaximumPoolSize();
          if (mx != null && max > 0) {
            double u = mx.getActiveConnections() / (double) max;
            most = Double.isNaN(most) ? u : Math.max(most, u);
          }
        }
        return Double.isNaN(most) ? most : Math.min(1, most);
      };
    }
  }
}
