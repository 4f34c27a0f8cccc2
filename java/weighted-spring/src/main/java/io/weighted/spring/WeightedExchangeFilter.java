package io.weighted.spring;

import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.ExchangeFunction;
import reactor.core.publisher.Mono;

/**
 * Reports a load-balanced WebClient exchange that its caller gave up on as a
 * {@link io.weighted.jni.Outcome#TIMEOUT}. Spring Cloud's load-balancer filter tells lifecycles
 * about an exchange's error or response, never about its cancellation: a {@code timeout()} on the
 * result, a disposed subscription, a server whose own client disconnected all cancel the exchange
 * and would leave the pick unfinished (its in-flight count kept until the engine expires it, the
 * slow endpoint never charged for it).
 *
 * <p>This filter runs outside the load-balancer filter: it hands the request an
 * {@link Attempt} attribute, which {@link WeightedLoadBalancerLifecycle#onStartRequest} fills
 * with the instance the request is sent to, and cancelling the exchange finishes that pick as a
 * timeout with the latency so far. An exchange cancelled before its request was sent (or before
 * any instance was chosen) reports no outcome; its pick, if any, is released. An exchange that
 * already completed is not affected (each pick finishes once).
 *
 * <p>Every {@code @LoadBalanced WebClient.Builder} gets it first in its filter list
 * ({@code WeightedLoadBalancerAutoConfiguration}); a WebClient that adds Spring Cloud's
 * {@code ReactorLoadBalancerExchangeFilterFunction} by hand should add this filter before it.
 */
public final class WeightedExchangeFilter implements ExchangeFilterFunction {
  /** The request attribute that carries the {@link Attempt}. */
  public static final String ATTEMPT_ATTRIBUTE = WeightedExchangeFilter.class.getName() + ".attempt";

  @Override
  public Mono<ClientResponse> filter(ClientRequest request, ExchangeFunction next) {
    Attempt attempt = new Attempt();
    ClientRequest tagged = ClientRequest.from(request).attribute(ATTEMPT_ATTRIBUTE, attempt).build();
    return next.exchange(tagged).doOnCancel(attempt::cancelled);
  }

  /**
   * One exchange's current attempt: the instance its request went to, and whether the exchange
   * was cancelled. A retry's later attempt replaces the earlier one (which its own completion
   * finished).
   */
  public static final class Attempt {
    private WeightedLoadBalancerLifecycle lifecycle;
    private WeightedServiceInstance instance;
    private boolean cancelled;

    Attempt() {}

    /** The request is about to go to {@code w} (the lifecycle's onStartRequest). */
    void started(WeightedLoadBalancerLifecycle lc, WeightedServiceInstance w) {
      boolean late;
      synchronized (this) {
        lifecycle = lc;
        instance = w;
        late = cancelled;
      }
      if (late) {
        // Cancelled between the pick and the send: the request never reached the endpoint.
        lc.cancelled(w, false);
      }
    }

    void cancelled() {
      WeightedLoadBalancerLifecycle lc;
      WeightedServiceInstance w;
      synchronized (this) {
        cancelled = true;
        lc = lifecycle;
        w = instance;
      }
      if (w != null) {
        lc.cancelled(w, true);
      }
    }
  }
}
