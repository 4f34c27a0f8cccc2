package io.weighted.spring;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.context.ConfigurableApplicationContext;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * A base {@link ServiceInstanceListSupplier} that keeps serving the last list the registry gave
 * while the registry cannot be reached. Spring's {@code DiscoveryClientServiceInstanceListSupplier}
 * turns a failed or timed-out discovery call into an empty list, so with a discovery client that
 * asks the registry on every call (Spring Cloud Zookeeper, Consul without its catalog watch) an
 * outage empties the balancer's list once the caching supplier's entry expires, and every request
 * then fails with "no instances". This supplier replays the last successful answer instead (gRPC's
 * resolvers do the same: an error keeps the previous addresses, an empty answer removes them); a
 * list the registry really returns, empty or not, passes through unchanged.
 *
 * <pre>{@code
 * ServiceInstanceListSupplier.builder()
 *     .withBase(LastKnownInstancesSupplier.of(context))
 *     .withBlockingHealthChecks(restClient)
 *     .withCaching()
 *     .build(context);
 * }</pre>
 *
 * <p>Discovery clients that keep a local copy themselves (Eureka's) answer from it during an
 * outage and need none of this. The outage is logged once when it starts and once when it ends,
 * never per request.
 */
public final class LastKnownInstancesSupplier implements ServiceInstanceListSupplier {
  private static final Log log = LogFactory.getLog(LastKnownInstancesSupplier.class);
  /** The property Spring's discovery supplier reads for the same bound. */
  static final String TIMEOUT_PROPERTY = "spring.cloud.loadbalancer.service-discovery.timeout";

  private final DiscoveryClient discovery;
  private final String serviceId;
  private final Duration timeout;
  private final Flux<List<ServiceInstance>> lists;
  private final AtomicLong failures = new AtomicLong();
  private volatile List<ServiceInstance> last;
  private volatile boolean failing;

  /** {@code timeout} bounds one discovery call; past it the call counts as failed. */
  public LastKnownInstancesSupplier(DiscoveryClient discovery, String serviceId,
      Duration timeout) {
    if (discovery == null || serviceId == null || timeout == null || timeout.isNegative()
        || timeout.isZero()) {
      throw new IllegalArgumentException("LastKnownInstancesSupplier needs a discovery client, "
          + "a service id and a positive timeout (got " + discovery + ", " + serviceId + ", "
          + timeout + ")");
    }
    this.discovery = discovery;
    this.serviceId = serviceId;
    this.timeout = timeout;
    this.lists = Flux.defer(() -> Mono.fromCallable(this::query)
        .subscribeOn(Schedulers.boundedElastic())
        .timeout(this.timeout)
        .map(this::succeeded)
        .onErrorResume(e -> Mono.just(failed(e))));
  }

  /**
   * For a load-balancer client's context: its {@link DiscoveryClient}, its client name as the
   * service id, and the timeout of {@value #TIMEOUT_PROPERTY} (30 s when unset, as Spring's).
   */
  public static LastKnownInstancesSupplier of(ConfigurableApplicationContext context) {
    String name = context.getEnvironment().getProperty(LoadBalancerClientFactory.PROPERTY_NAME);
    String t = context.getEnvironment().getProperty(TIMEOUT_PROPERTY);
    Duration timeout = t == null ? Duration.ofSeconds(30) : DurationStyle.detectAndParse(t);
    return new LastKnownInstancesSupplier(context.getBean(DiscoveryClient.class), name, timeout);
  }

  @Override
  public String getServiceId() {
    return serviceId;
  }

  @Override
  public Flux<List<ServiceInstance>> get() {
    return lists;
  }

  /** Discovery calls that failed or timed out since this supplier was made. */
  public long failures() {
    return failures.get();
  }

  /** Whether the last discovery call failed (the list served is then the last known one). */
  public boolean isFailing() {
    return failing;
  }

  private List<ServiceInstance> query() {
    try {
      return discovery.getInstances(serviceId);
    } catch (RuntimeException e) {
      if (Thread.currentThread().isInterrupted() || interrupted(e)) {
        // The timeout cancelled this call and answered already: nobody reads this result, and
        // an error here would only reach Reactor's dropped-error log.
        return List.of();
      }
      throw e;
    }
  }

  private static boolean interrupted(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof InterruptedException) {
        return true;
      }
    }
    return false;
  }

  private List<ServiceInstance> succeeded(List<ServiceInstance> instances) {
    last = instances;
    if (failing) {
      failing = false;
      if (log.isInfoEnabled()) {
        log.info("Discovery of " + serviceId + " answers again (" + instances.size()
            + " instances) after " + failures.get() + " failed calls in all");
      }
    }
    return instances;
  }

  private List<ServiceInstance> failed(Throwable e) {
    failures.incrementAndGet();
    List<ServiceInstance> known = last;
    if (!failing) {
      failing = true;
      if (log.isWarnEnabled()) {
        log.warn("Discovery of " + serviceId + " failed (" + e + "): "
            + (known == null ? "no list known yet, serving none"
                : "serving the last list of " + known.size() + " instances")
            + " until it answers again");
      }
    }
    return known == null ? List.of() : known;
  }

  @Override
  public String toString() {
    return "LastKnownInstancesSupplier[" + serviceId + " via " + discovery.description() + "]";
  }
}
