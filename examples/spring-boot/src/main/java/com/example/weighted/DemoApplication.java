package com.example.weighted;

import io.weighted.spring.EnableWeightedLoadBalancer;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.cloud.client.loadbalancer.LoadBalanced;
import org.springframework.context.annotation.Bean;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestClientException;

/** The whole integration: the annotation below, weighted.json, and a @LoadBalanced client. */
@SpringBootApplication
@EnableWeightedLoadBalancer
public class DemoApplication {

  public static void main(String[] args) {
    SpringApplication.run(DemoApplication.class, args);
  }

  @Bean
  @LoadBalanced
  RestClient.Builder loadBalancedRestClient() {
    return RestClient.builder();
  }

  @RestController
  static class CallController {
    private final RestClient backend;

    CallController(RestClient.Builder builder) {
      this.backend = builder.baseUrl("http://backend").build();
    }

    /** One call through the load balancer: which backend answered, or the error. */
    @GetMapping("/call")
    String call() {
      try {
        return backend.get().uri("/work").retrieve().body(String.class);
      } catch (RestClientException e) {
        return "error: " + e.getMessage();
      }
    }
  }
}
