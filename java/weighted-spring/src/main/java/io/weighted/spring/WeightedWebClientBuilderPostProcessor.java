package io.weighted.spring;

import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.cloud.client.loadbalancer.reactive.DeferringLoadBalancerExchangeFilterFunction;
import org.springframework.cloud.client.loadbalancer.reactive.LoadBalancedExchangeFilterFunction;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * Puts {@link WeightedExchangeFilter} first in every WebClient builder that Spring Cloud made
 * load-balanced, so that a cancelled exchange is reported. After initialisation: Spring Cloud
 * adds its filter before it, and first in the list is outermost, where cancellation arrives.
 */
final class WeightedWebClientBuilderPostProcessor implements BeanPostProcessor {
  @Override
  public Object postProcessAfterInitialization(Object bean, String beanName) {
    if (bean instanceof WebClient.Builder builder) {
      builder.filters(filters -> {
        if (filters.stream().anyMatch(WeightedWebClientBuilderPostProcessor::loadBalancing)
            && filters.stream().noneMatch(f -> f instanceof WeightedExchangeFilter)) {
          filters.add(0, new WeightedExchangeFilter());
        }
      });
    }
    return bean;
  }

  private static boolean loadBalancing(ExchangeFilterFunction f) {
    return f instanceof DeferringLoadBalancerExchangeFilterFunction
        || f instanceof LoadBalancedExchangeFilterFunction;
  }
}
