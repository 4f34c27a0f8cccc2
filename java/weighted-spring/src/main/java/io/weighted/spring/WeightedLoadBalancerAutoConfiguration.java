package io.weighted.spring;

import io.weighted.jni.Engine;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.cloud.loadbalancer.annotation.LoadBalancerClients;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.core.env.Environment;
import org.springframework.core.io.DefaultResourceLoader;
import org.springframework.core.io.Resource;
import org.springframework.core.io.ResourceLoader;

/**
 * Creates the one {@link Engine} of the application from the shared JSON config and makes
 * {@link WeightedLoadBalancerClientConfiguration} the default of every load-balancer client.
 * On with {@link EnableWeightedLoadBalancer} or {@code weighted.loadbalancer.config}.
 */
@AutoConfiguration
@Conditional(OnWeightedEnabledCondition.class)
@EnableConfigurationProperties(WeightedLoadBalancerProperties.class)
@LoadBalancerClients(defaultConfiguration = WeightedLoadBalancerClientConfiguration.class)
public class WeightedLoadBalancerAutoConfiguration {
  private static final Log log = LogFactory.getLog(WeightedLoadBalancerAutoConfiguration.class);

  /** The engine; closed with the application context. */
  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  public Engine weightedEngine(WeightedLoadBalancerProperties properties,
      ResourceLoader resourceLoader, Environment environment) throws IOException {
    boolean explicit = environment.containsProperty("weighted.loadbalancer.config");
    String json = readConfig(properties.getConfig(), resourceLoader, explicit);
    return Engine.create(json, properties.getClock());
  }

  /**
   * The config text. A location set explicitly must exist; the default location
   * (classpath:weighted.json) may be absent, and the engine's defaults ("{}") are used then.
   */
  static String readConfig(String location, ResourceLoader loader, boolean explicit)
      throws IOException {
    ResourceLoader rl = loader != null ? loader : new DefaultResourceLoader();
    String loc = location.startsWith("/") ? "file:" + location
        : location.contains(":") ? location : "file:" + location;
    Resource r = rl.getResource(loc);
    if (!r.exists()) {
      if (!explicit) {
        log.info("weighted: no " + location + ", using the engine's defaults");
        return "{}";
      }
      throw new IOException("weighted.loadbalancer.config: " + location + " does not exist");
    }
    try (InputStream in = r.getInputStream()) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "io.micrometer.core.instrument.binder.MeterBinder")
  static class Metrics {
    @Bean
    @ConditionalOnMissingBean
    WeightedMeterBinder weightedMeterBinder(Engine engine, WeightedLoadBalancerProperties p) {
      return new WeightedMeterBinder(engine, p.isMetrics(), p.getMetricsRefresh().toMillis());
    }
  }
}
