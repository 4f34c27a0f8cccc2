package io.weighted.discovery;

import io.weighted.spring.LastKnownInstancesSupplier;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplierBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Primary;
import org.springframework.web.client.RestClient;

/**
 * The supplier chain of each load-balancer client (its child context; a top-level class so the
 * application context does not take it as its own configuration): discovery, health checks,
 * caching, what a production app stacks. {@code test.discovery.base=last-known} puts
 * {@link LastKnownInstancesSupplier} at the base instead of Spring's blocking discovery supplier.
 */
public class ProductionSuppliers {
  /**
   * Primary: a registry's own default client configuration (Spring Cloud Zookeeper's) may
   * declare a supplier too.
   */
  @Bean
  @Primary
  ServiceInstanceListSupplier discoveryListSupplier(ConfigurableApplicationContext context) {
    ServiceInstanceListSupplierBuilder b = ServiceInstanceListSupplier.builder();
    if ("last-known".equals(context.getEnvironment().getProperty("test.discovery.base"))) {
      b = b.withBase(LastKnownInstancesSupplier.of(context));
    } else {
      b = b.withBlockingDiscoveryClient();
    }
    // A plain client for the checks: a load-balanced one would resolve the host as a service.
    return b.withBlockingHealthChecks(RestClient.create()).withCaching().build(context);
  }
}
