package io.weighted.spring.server;

import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.ApplicationContext;
import org.springframework.context.ApplicationEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Every response of a Servlet or WebFlux application carries {@code endpoint-load-metrics}
 * (see {@link LoadSampler}). On by default once the jar is on the class path;
 * {@code weighted.server.load-report.enabled=false} turns it off.
 */
@AutoConfiguration
@ConditionalOnProperty(prefix = "weighted.server.load-report", name = "enabled",
    matchIfMissing = true)
@EnableConfigurationProperties(LoadReportProperties.class)
public class LoadReportAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean
  LoadSampler weightedLoadSampler(LoadReportProperties props,
      ObjectProvider<DataSource> dataSources, WebServerWatcher watcher) {
    // The data sources are looked up at the first sample, when the application has made them.
    AtomicReference<LoadSampler.Figure> hikari = new AtomicReference<>();
    LoadSampler.Figure connections = () -> {
      LoadSampler.Figure h = hikari.get();
      if (h == null) {
        List<DataSource> all = ServerPools.HIKARI ? dataSources.orderedStream().toList() : List.of();
        h = ServerPools.hikari(all);
        hikari.compareAndSet(null, h);
      }
      double a = h.getAsDouble();
      double b = watcher.connections().getAsDouble();
      return Double.isNaN(a) ? b : Double.isNaN(b) ? a : Math.max(a, b);
    };
    LoadSampler s = new LoadSampler(props.getInterval().toNanos(), System::nanoTime,
        PlatformFigures.processCpu(), PlatformFigures.heap(), connections,
        props.getThreadPoolMetric(), props.getConnectionPoolMetric(),
        props.getLatencyMetric() == null || props.getLatencyMetric().isEmpty()
            ? null : props.getLatencyMetric());
    watcher.attach(s);
    return s;
  }

  @Bean
  WebServerWatcher weightedWebServerWatcher(ApplicationContext context) {
    return new WebServerWatcher(context);
  }

  @Configuration(proxyBeanMethods = false)
  @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
  @ConditionalOnClass(name = "jakarta.servlet.Filter")
  static class Servlet {
    @Bean
    LoadReportServletFilter weightedLoadReportFilter(LoadSampler sampler) {
      return new LoadReportServletFilter(sampler);
    }
  }

  @Configuration(proxyBeanMethods = false)
  @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
  @ConditionalOnClass(name = "org.springframework.web.server.WebFilter")
  static class Reactive {
    @Bean
    LoadReportWebFilter weightedLoadReportWebFilter(LoadSampler sampler) {
      return new LoadReportWebFilter(sampler);
    }
  }

  /**
   * Finds this application's web server when it has started (Boot's
   * {@code ServletWebServerInitializedEvent} / {@code ReactiveWebServerInitializedEvent}, matched
   * by name: their package moved in Boot 4) and hands its pools to the sampler. A management
   * server on its own port has another context and is left alone.
   */
  public static final class WebServerWatcher implements ApplicationListener<ApplicationEvent> {
    private final ApplicationContext context;
    private volatile LoadSampler sampler;
    private volatile ServerPools.Found found;

    WebServerWatcher(ApplicationContext context) {
      this.context = context;
    }

    void attach(LoadSampler s) {
      sampler = s;
      ServerPools.Found f = found;
      if (f != null) {
        s.setPool(f.pool());
      }
    }

    LoadSampler.Figure connections() {
      ServerPools.Found f = found;
      return f == null ? () -> Double.NaN : f.connections();
    }

    /**
     * The server the figures come from ("tomcat", "jetty", "undertow", "netty"), or null before
     * it starts.
     */
    public String server() {
      ServerPools.Found f = found;
      return f == null ? null : f.server();
    }

    @Override
    public void onApplicationEvent(ApplicationEvent event) {
      String name = event.getClass().getSimpleName();
      if (!name.endsWith("WebServerInitializedEvent")) {
        return;
      }
      try {
        Object ctx = event.getClass().getMethod("getApplicationContext").invoke(event);
        if (ctx != context) {
          return;
        }
        Object webServer = event.getClass().getMethod("getWebServer").invoke(event);
        ServerPools.Found f = ServerPools.of(webServer);
        found = f;
        LoadSampler s = sampler;
        if (s != null) {
          s.setPool(f.pool());
        }
      } catch (ReflectiveOperationException | RuntimeException e) {
        // Not Boot's event after all: no pool figure, the other figures still count.
      }
    }
  }
}
