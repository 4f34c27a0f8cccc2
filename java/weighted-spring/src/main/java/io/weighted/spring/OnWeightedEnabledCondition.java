package io.weighted.spring;

import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.ConfigurationCondition;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * On when {@link EnableWeightedLoadBalancer} is present or {@code weighted.loadbalancer.config}
 * is set, and {@code weighted.loadbalancer.enabled} is not false: one annotation or one property.
 * Evaluated when beans are registered (not while configuration classes are parsed), so the
 * marker bean that the annotation imports is already known.
 */
class OnWeightedEnabledCondition implements ConfigurationCondition {
  @Override
  public ConfigurationPhase getConfigurationPhase() {
    return ConfigurationPhase.REGISTER_BEAN;
  }

  @Override
  public boolean matches(ConditionContext context, AnnotatedTypeMetadata metadata) {
    if ("false".equalsIgnoreCase(
        context.getEnvironment().getProperty("weighted.loadbalancer.enabled", "true").trim())) {
      return false;
    }
    if (context.getEnvironment().containsProperty("weighted.loadbalancer.config")) {
      return true;
    }
    ConfigurableListableBeanFactory bf = context.getBeanFactory();
    return bf != null && bf.getBeanNamesForType(WeightedLoadBalancerMarker.class, true, false).length > 0;
  }
}
