package io.weighted.spring;

import io.weighted.jni.Engine;
import java.io.IOException;
import java.time.Clock;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.cloud.loadbalancer.annotation.LoadBalancerClients;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.core.env.Environment;
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
  /** The config as read at start; a location set explicitly must exist. */
  @Bean
  @ConditionalOnMissingBean
  public WeightedConfigSource weightedConfigSource(WeightedLoadBalancerProperties properties,
      ResourceLoader resourceLoader, Environment environment) throws IOException {
    boolean explicit = environment.containsProperty("weighted.loadbalancer.config");
    return WeightedConfigSource.load(properties.getConfig(), resourceLoader, explicit,
        SubsetClientId.of(environment), SubsetClientId.placeOf(environment));
  }

  /** The engine; closed with the application context. */
  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  public Engine weightedEngine(WeightedConfigSource source,
      WeightedLoadBalancerProperties properties) {
    return source.createEngine(properties.getClock());
  }

  /**
   * Applies changes of a config file on disk while the application runs. A bean of type
   * {@link ConfigFileWatcher.Scheduler} replaces the polling thread (tests drive it by hand).
   */
  @Bean
  @ConditionalOnMissingBean
  @ConditionalOnProperty(prefix = "weighted.loadbalancer.reload", name = "enabled",
      matchIfMissing = true)
  public WeightedConfigReloader weightedConfigReloader(WeightedConfigSource source, Engine engine,
      ApplicationEventPublisher events, WeightedLoadBalancerProperties properties,
      ObjectProvider<ConfigFileWatcher.Scheduler> scheduler) {
    return new WeightedConfigReloader(source, engine, events,
        scheduler.getIfAvailable(ConfigFileWatcher::daemonThread),
        properties.getReload().getInterval(), Clock.systemUTC());
  }

  /** Cancelled load-balanced WebClient exchanges are reported (see WeightedExchangeFilter). */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "org.springframework.web.reactive.function.client.WebClient")
  static class WebClientCancellation {
    @Bean
    static BeanPostProcessor weightedWebClientBuilderPostProcessor() {
      return new WeightedWebClientBuilderPostProcessor();
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
