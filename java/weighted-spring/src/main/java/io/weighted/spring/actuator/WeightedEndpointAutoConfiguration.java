package io.weighted.spring.actuator;

import io.weighted.jni.Engine;
import io.weighted.spring.WeightedConfigReloader;
import io.weighted.spring.WeightedLoadBalancerAutoConfiguration;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Registers {@link WeightedEndpoint} when Spring Boot Actuator is on the classpath and the
 * application has a weighted {@link Engine}. Registering is not exposing: actuator serves it only
 * once {@code management.endpoints.web.exposure.include} names {@code weighted}.
 */
@AutoConfiguration(after = WeightedLoadBalancerAutoConfiguration.class)
@ConditionalOnClass(name = "org.springframework.boot.actuate.endpoint.annotation.Endpoint")
public class WeightedEndpointAutoConfiguration {
  @Bean
  @ConditionalOnBean(Engine.class)
  @ConditionalOnMissingBean
  public WeightedEndpoint weightedEndpoint(Engine engine,
                                           ObjectProvider<WeightedConfigReloader> reloader) {
    return new WeightedEndpoint(engine, reloader.getIfAvailable());
  }
}
