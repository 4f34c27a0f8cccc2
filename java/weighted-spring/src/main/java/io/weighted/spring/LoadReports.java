package io.weighted.spring;

import org.springframework.util.ClassUtils;

/**
 * The {@code endpoint-load-metrics} header (a server's own load report, ORCA's TEXT or JSON
 * form) of the response a load-balanced call got: WebClient's {@code ClientResponse} or
 * {@code ResponseData}, RestTemplate's and RestClient's {@code ClientHttpResponse}, a
 * {@code ResponseEntity}. Null when the response has none, or is not one of these.
 */
public final class LoadReports {
  /** The header servers send their load report in (gRPC, Envoy, vLLM over HTTP). */
  public static final String HEADER = "endpoint-load-metrics";

  private static final boolean SPRING_WEB =
      ClassUtils.isPresent("org.springframework.http.HttpHeaders", null);
  private static final boolean WEBFLUX = ClassUtils.isPresent(
      "org.springframework.web.reactive.function.client.ClientResponse", null);

  private LoadReports() {}

  public static String of(Object clientResponse) {
    if (clientResponse == null || !SPRING_WEB) {
      return null;
    }
    String v = SpringWeb.of(clientResponse);
    if (v == null && WEBFLUX) {
      v = WebFlux.of(clientResponse);
    }
    return v == null || v.isEmpty() ? null : v;
  }

  /** Loaded only when spring-web is present. */
  private static final class SpringWeb {
    static String of(Object r) {
      try {
        if (r instanceof org.springframework.cloud.client.loadbalancer.ResponseData d) {
          return d.getHeaders() == null ? null : d.getHeaders().getFirst(HEADER);
        }
        if (r instanceof org.springframework.http.client.ClientHttpResponse c) {
          return c.getHeaders().getFirst(HEADER);
        }
        if (r instanceof org.springframework.http.ResponseEntity<?> e) {
          return e.getHeaders().getFirst(HEADER);
        }
      } catch (RuntimeException e) {
        return null;  // a response that cannot say has no report; its outcome still counts
      }
      return null;
    }
  }

  /** Loaded only when spring-webflux is present. */
  private static final class WebFlux {
    static String of(Object r) {
      if (r instanceof org.springframework.web.reactive.function.client.ClientResponse c) {
        return c.headers().asHttpHeaders().getFirst(HEADER);
      }
      return null;
    }
  }
}
