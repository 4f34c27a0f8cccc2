package io.weighted.spring;

import io.weighted.jni.Engine;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.loadbalancer.core.ReactorLoadBalancer;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * The per-client configuration (each load-balanced service gets its own child context), applied
 * to every client through {@code @LoadBalancerClients(defaultConfiguration = ...)}. Use it also for
 * one client only: {@code @LoadBalancerClient(name = "orders", configuration =
 * WeightedLoadBalancerClientConfiguration.class)}.
 */
@Configuration(proxyBeanMethods = false)
public class WeightedLoadBalancerClientConfiguration {

  @Bean
  public ReactorLoadBalancer<ServiceInstance> weightedLoadBalancer(Environment environment,
      LoadBalancerClientFactory factory, Engine weightedEngine, ObjectProvider<EndpointGate> gate) {
    String name = environment.getProperty(LoadBalancerClientFactory.PROPERTY_NAME);
    return new WeightedLoadBalancer(
        factory.getLazyProvider(name, ServiceInstanceListSupplier.class), name, weightedEngine,
        System::nanoTime, gate.getIfUnique());
  }

  @Bean
  public WeightedLoadBalancerLifecycle weightedLoadBalancerLifecycle(
      ObjectProvider<OutcomeClassifier> classifier, ObjectProvider<OutcomeListener> listeners) {
    return new WeightedLoadBalancerLifecycle(
        classifier.getIfAvailable(DefaultOutcomeClassifier::new),
        listeners.orderedStream().toList());
  }
}
