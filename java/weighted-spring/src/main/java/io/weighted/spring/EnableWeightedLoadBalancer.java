package io.weighted.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.context.annotation.Import;

/**
 * Makes the weighted engine the load balancer of every Spring Cloud LoadBalancer client in this
 * application. The config is read from {@code weighted.loadbalancer.config} (default
 * {@code classpath:weighted.json}). Setting that property alone has the same effect.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Import(WeightedLoadBalancerMarker.class)
public @interface EnableWeightedLoadBalancer {}
