package io.weighted.spring;

import io.weighted.jni.Outcome;
import java.util.List;
import java.util.Map;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.CompletionContext;
import org.springframework.cloud.client.loadbalancer.LoadBalancerLifecycle;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.RequestDataContext;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.util.ClassUtils;

/**
 * Reports each load-balanced call's outcome to the engine. Spring Cloud calls it from the
 * reactive {@code WebClient} filter (plain and retryable) and from {@code BlockingLoadBalancerClient}
 * (RestTemplate, RestClient, their retry interceptor), for the instances
 * {@link WeightedLoadBalancer} chose.
 *
 * <p>Latency runs from {@link #onStartRequest} (the request is about to be sent to the chosen
 * instance) to {@link #onComplete}. Each attempt of a retried call is its own pick and is reported
 * on its own; a pick is finished once, however many times it is seen (S-P3: nothing counted
 * twice).
 */
public class WeightedLoadBalancerLifecycle
    implements LoadBalancerLifecycle<Object, Object, ServiceInstance> {
  private static final boolean WEBFLUX = ClassUtils.isPresent(
      "org.springframework.web.reactive.function.client.ExchangeFilterFunction",
      WeightedLoadBalancerLifecycle.class.getClassLoader());

  private final OutcomeClassifier classifier;
  private final List<OutcomeListener> listeners;

  public WeightedLoadBalancerLifecycle(OutcomeClassifier classifier) {
    this(classifier, List.of());
  }

  /** {@code listeners} hear each outcome once, after the engine (see {@link OutcomeListener}). */
  public WeightedLoadBalancerLifecycle(OutcomeClassifier classifier,
      List<OutcomeListener> listeners) {
    this.classifier = classifier;
    this.listeners = List.copyOf(listeners);
  }

  @Override
  public boolean supports(Class requestContextClass, Class responseClass, Class serverTypeClass) {
    return ServiceInstance.class.isAssignableFrom(serverTypeClass);
  }

  @Override
  public void onStart(Request<Object> request) {
    // The instance is not chosen yet; nothing to measure.
  }

  @Override
  public void onStartRequest(Request<Object> request, Response<ServiceInstance> lbResponse) {
    WeightedServiceInstance w = weighted(lbResponse);
    if (w != null) {
      w.markStarted();
      if (WEBFLUX && request != null
          && request.getContext() instanceof RequestDataContext c && c.getClientRequest() != null
          && c.getClientRequest().getAttributes() != null) {
        WebFlux.register(c.getClientRequest().getAttributes(), this, w);
      }
    }
  }

  /**
   * The exchange that sent {@code w} was cancelled ({@link WeightedExchangeFilter}): after the
   * request went out it is a timeout, with the latency so far; before, the pick is released.
   */
  void cancelled(WeightedServiceInstance w, boolean sent) {
    if (!sent) {
      if (w.cancel()) {
        for (OutcomeListener l : listeners) {
          l.onCancel(w.getServiceId(), w.getEndpointId());
        }
      }
    } else if (w.complete(Outcome.TIMEOUT)) {
      for (OutcomeListener l : listeners) {
        l.onOutcome(w.getServiceId(), w.getEndpointId(), w.getLatencyMs(), Outcome.TIMEOUT);
      }
    }
  }

  /** Loaded only when spring-webflux is present. */
  private static final class WebFlux {
    static void register(Map<String, Object> attributes, WeightedLoadBalancerLifecycle lc,
        WeightedServiceInstance w) {
      if (attributes.get(WeightedExchangeFilter.ATTEMPT_ATTRIBUTE)
          instanceof WeightedExchangeFilter.Attempt a) {
        a.started(lc, w);
      }
    }
  }

  @Override
  public void onComplete(CompletionContext<Object, ServiceInstance, Object> completion) {
    WeightedServiceInstance w = weighted(completion.getLoadBalancerResponse());
    if (w == null) {
      return;
    }
    Outcome outcome = completion.status() == CompletionContext.Status.DISCARD ? null
        : classifier.classify(completion);
    if (outcome == null) {
      if (w.cancel()) {
        for (OutcomeListener l : listeners) {
          l.onCancel(w.getServiceId(), w.getEndpointId());
        }
      }
    } else if (w.complete(outcome, LoadReports.of(completion.getClientResponse()))) {
      for (OutcomeListener l : listeners) {
        l.onOutcome(w.getServiceId(), w.getEndpointId(), w.getLatencyMs(), outcome);
      }
    }
  }

  private static WeightedServiceInstance weighted(Response<ServiceInstance> r) {
    return r != null && r.getServer() instanceof WeightedServiceInstance w ? w : null;
  }
}
