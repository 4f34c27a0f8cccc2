package io.weighted.spring;

/**
 * Registered by {@link EnableWeightedLoadBalancer}; its presence turns on
 * {@link WeightedLoadBalancerAutoConfiguration}.
 */
public class WeightedLoadBalancerMarker {}
