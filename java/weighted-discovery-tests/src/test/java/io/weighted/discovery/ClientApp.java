package io.weighted.discovery;

import io.weighted.spring.EnableWeightedLoadBalancer;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.cloud.client.loadbalancer.LoadBalanced;
import org.springframework.cloud.loadbalancer.annotation.LoadBalancerClients;
import org.springframework.context.annotation.Bean;
import org.springframework.web.client.RestTemplate;

/**
 * The client application of the discovery tests: the weighted balancer behind the suppliers a
 * production app stacks (discovery, health checks, caching), and a load-balanced RestTemplate.
 * The suppliers are {@link ProductionSuppliers}.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@EnableWeightedLoadBalancer
@LoadBalancerClients(defaultConfiguration = ProductionSuppliers.class)
public class ClientApp {
  @Bean
  @LoadBalanced
  RestTemplate loadBalanced() {
    return new RestTemplate();
  }
}
