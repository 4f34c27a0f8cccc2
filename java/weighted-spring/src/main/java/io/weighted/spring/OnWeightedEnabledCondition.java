package io.weighted.spring;

import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.context.annotation.Condition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * On when {@link EnableWeightedLoadBalancer} is present or {@code weighted.loadbalancer.config}
 * is set, and {@code weighted.loadbalancer.enabled} is not false: one annotation or one property.
 */
class OnWeightedEnabledCondition implements Condition {
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
