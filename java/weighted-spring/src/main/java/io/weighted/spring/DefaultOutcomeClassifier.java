package io.weighted.spring;

import io.weighted.jni.Outcome;
import java.io.IOException;
import org.springframework.cloud.client.loadbalancer.CompletionContext;
import org.springframework.util.ClassUtils;

/**
 * The default classification:
 * <ul>
 *   <li>SUCCESS with an HTTP status (WebClient's {@code ResponseData}, RestTemplate/RestClient's
 *       {@code ClientHttpResponse}): 5xx is {@link Outcome#HTTP_5XX}, anything else success. A
 *       5xx usually arrives as SUCCESS: the HTTP exchange itself worked.
 *   <li>FAILED, by the exception or its causes: a timeout type ({@code TimeoutException},
 *       {@code SocketTimeoutException}, Netty's {@code ReadTimeoutException}, ...) is
 *       {@link Outcome#TIMEOUT}; refused, reset, unreachable, closed or any other I/O error is
 *       {@link Outcome#CONNECT_ERROR}; an HTTP error exception carrying a status is classified by
 *       that status; anything else (a bug in the caller, a serialization error) is not the
 *       endpoint's fault: null, the pick is cancelled.
 *   <li>DISCARD (no instance was chosen): null.
 * </ul>
 */
public class DefaultOutcomeClassifier implements OutcomeClassifier {
  private static final boolean SPRING_WEB =
      ClassUtils.isPresent("org.springframework.http.client.ClientHttpResponse", null);
  private static final boolean WEBFLUX = ClassUtils.isPresent(
      "org.springframework.web.reactive.function.client.ClientResponse", null);

  @Override
  public Outcome classify(CompletionContext<?, ?, ?> completion) {
    switch (completion.status()) {
      case SUCCESS: {
        Integer http = httpStatus(completion.getClientResponse());
        return http == null ? Outcome.SUCCESS : Outcome.fromHttpStatus(http);
      }
      case FAILED:
        return classify(completion.getThrowable());
      default:
        return null;
    }
  }

  /**
   * Classifies an exception by its type and its causes ({@link Outcome#of(Throwable,
   * java.util.function.ToIntFunction)}, the bindings' one classifier), asking
   * {@link #httpStatusOfException} first at each level; null when not the endpoint's fault.
   */
  public Outcome classify(Throwable t) {
    return Outcome.of(t, DefaultOutcomeClassifier::httpStatusOfException);
  }

  /**
   * The HTTP status a Spring client exception carries ({@code RestClientResponseException},
   * {@code WebClientResponseException}), or 0: the Spring side of {@link #classify(Throwable)}.
   */
  public static int httpStatusOfException(Throwable t) {
    Integer http = SPRING_WEB ? SpringWeb.statusOfException(t) : null;
    if (http == null && WEBFLUX) {
      http = WebFlux.statusOfException(t);
    }
    return http == null ? 0 : http;
  }

  /** The HTTP status a client response carries, or null. */
  public static Integer httpStatus(Object clientResponse) {
    if (clientResponse == null) {
      return null;
    }
    if (SPRING_WEB) {
      Integer s = SpringWeb.statusOfResponse(clientResponse);
      if (s != null) {
        return s;
      }
    }
    if (WEBFLUX) {
      return WebFlux.statusOfResponse(clientResponse);
    }
    return null;
  }

  /** Loaded only when spring-web is present. */
  private static final class SpringWeb {
    static Integer statusOfResponse(Object r) {
      try {
        if (r instanceof org.springframework.cloud.client.loadbalancer.ResponseData d) {
          return d.getHttpStatus() == null ? null : d.getHttpStatus().value();
        }
        if (r instanceof org.springframework.http.client.ClientHttpResponse c) {
          return c.getStatusCode().value();
        }
        if (r instanceof org.springframework.http.ResponseEntity<?> e) {
          return e.getStatusCode().value();
        }
      } catch (IOException | RuntimeException e) {
        return null;
      }
      return null;
    }

    static Integer statusOfException(Throwable t) {
      if (t instanceof org.springframework.web.client.RestClientResponseException e) {
        return e.getStatusCode().value();
      }
      return null;
    }
  }

  /** Loaded only when spring-webflux is present. */
  private static final class WebFlux {
    static Integer statusOfResponse(Object r) {
      if (r instanceof org.springframework.web.reactive.function.client.ClientResponse c) {
        return c.statusCode().value();
      }
      return null;
    }

    static Integer statusOfException(Throwable t) {
      if (t instanceof org.springframework.web.reactive.function.client.WebClientResponseException e) {
        return e.getStatusCode().value();
      }
      return null;
    }
  }
}
