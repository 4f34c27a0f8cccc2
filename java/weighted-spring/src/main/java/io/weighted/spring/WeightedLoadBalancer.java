package io.weighted.spring;

import io.weighted.jni.Engine;
import io.weighted.jni.NoEndpointException;
import io.weighted.jni.Pick;
import io.weighted.jni.Service;
import io.weighted.jni.StaleEndpointException;
import io.weighted.jni.WeightedException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.DefaultResponse;
import org.springframework.cloud.client.loadbalancer.EmptyResponse;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.client.loadbalancer.RetryableRequestContext;
import org.springframework.cloud.loadbalancer.core.NoopServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.core.ReactorServiceInstanceLoadBalancer;
import org.springframework.cloud.loadbalancer.core.SelectedInstanceCallback;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;
import reactor.core.Fuseable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A Spring Cloud LoadBalancer that lets the weighted engine choose. It keeps no weights of its
 * own: it forwards the instance list to the engine when discovery changes it, asks the engine for
 * a pick, and returns the instance the pick names. Outcomes come back through
 * {@link WeightedLoadBalancerLifecycle}.
 *
 * <p>Instances come from the {@link ServiceInstanceListSupplier} ({@code get(request)}, so
 * retry-aware, health-check, zone and hint suppliers work unchanged, as do Nacos, Consul,
 * Kubernetes and simple discovery). The endpoint id is {@code host:port}; the base weight comes
 * from metadata ({@link Endpoints#baseWeight}). A retry's list, which lacks the instance just
 * tried, is not sent to the engine as a new endpoint set (that would drop the endpoint's
 * state); the balancer picks from the full set and skips instances the retry excluded.
 */
public class WeightedLoadBalancer implements ReactorServiceInstanceLoadBalancer {
  private static final Log log = LogFactory.getLog(WeightedLoadBalancer.class);
  /** Re-picks when a retry excluded the picked instance, before falling back to any allowed. */
  private static final int RETRY_PICKS = 4;

  private final String serviceId;
  private final ObjectProvider<ServiceInstanceListSupplier> supplierProvider;
  private final Service service;
  private final LongSupplier nanoClock;
  private final EndpointGate gate;
  private volatile ServiceInstanceListSupplier supplier;
  private volatile EndpointSet current;

  public WeightedLoadBalancer(ObjectProvider<ServiceInstanceListSupplier> supplierProvider,
      String serviceId, Engine engine) {
    this(supplierProvider, serviceId, engine, System::nanoTime);
  }

  /** {@code nanoClock} measures request latency (tests may pass a fake one). */
  public WeightedLoadBalancer(ObjectProvider<ServiceInstanceListSupplier> supplierProvider,
      String serviceId, Engine engine, LongSupplier nanoClock) {
    this(supplierProvider, serviceId, engine, nanoClock, null);
  }

  /** {@code gate} (may be null) can veto picked endpoints, e.g. by an open circuit breaker. */
  public WeightedLoadBalancer(ObjectProvider<ServiceInstanceListSupplier> supplierProvider,
      String serviceId, Engine engine, LongSupplier nanoClock, EndpointGate gate) {
    this.gate = gate;
    this.serviceId = serviceId;
    this.supplierProvider = supplierProvider;
    this.service = engine.service(serviceId);
    this.nanoClock = nanoClock;
  }

  public String getServiceId() {
    return serviceId;
  }

  /** The engine service this balancer feeds. */
  public Service getService() {
    return service;
  }

  @SuppressWarnings("rawtypes")
  @Override
  public Mono<Response<ServiceInstance>> choose(Request request) {
    ServiceInstanceListSupplier s = supplier();
    Flux<List<ServiceInstance>> lists = s.get(request);
    if (lists instanceof Fuseable.ScalarCallable<?> scalar) {
      // A synchronous source (Flux.just of a fixed or cached list, Flux.empty, Flux.error):
      // Flux.next() would read it at once into a Mono.just and then map it, two operators. One
      // callable does the same lazily, once per subscription: the list read and the pick happen
      // when subscribed, an empty source gives an empty Mono, an error an error.
      return Mono.fromCallable(new Choice(s, request, scalar));
    }
    return lists.next().map(new Choice(s, request, null));
  }

  /**
   * One choose(): the function its Mono maps the instance list with (or, for a synchronous
   * supplier, the callable that reads the list too). The registered set, when the list still
   * matches it, is picked from directly ({@link #pickFrom}); anything else goes the full way.
   */
  private final class Choice implements Function<List<ServiceInstance>, Response<ServiceInstance>>,
      Callable<Response<ServiceInstance>> {
    private final ServiceInstanceListSupplier supplier;
    private final Request<?> request;
    private final Fuseable.ScalarCallable<?> scalar;  // null: mapped over lists.next()

    Choice(ServiceInstanceListSupplier supplier, Request<?> request,
        Fuseable.ScalarCallable<?> scalar) {
      this.supplier = supplier;
      this.request = request;
      this.scalar = scalar;
    }

    @SuppressWarnings("unchecked")
    @Override
    public Response<ServiceInstance> call() throws Exception {
      Object instances = scalar.call();
      return instances == null ? null : apply((List<ServiceInstance>) instances);
    }

    @Override
    public Response<ServiceInstance> apply(List<ServiceInstance> instances) {
      EndpointSet set = current;
      Response<ServiceInstance> response;
      if (set != null && set.keys != null && gate == null && set.matches(instances)) {
        try {
          response = new DefaultResponse(pickFrom(set));
        } catch (NoEndpointException e) {
          response = new EmptyResponse();
        }
      } else {
        response = getInstanceResponse(instances, request);
      }
      if (supplier instanceof SelectedInstanceCallback callback && response.hasServer()) {
        callback.selectedServiceInstance(response.getServer());
      }
      return response;
    }
  }

  private ServiceInstanceListSupplier supplier() {
    ServiceInstanceListSupplier s = supplier;
    if (s == null) {
      s = supplierProvider.getIfAvailable(NoopServiceInstanceListSupplier::new);
      supplier = s;
    }
    return s;
  }

  Response<ServiceInstance> getInstanceResponse(List<ServiceInstance> instances,
      Request<?> request) {
    if (instances.isEmpty()) {
      if (log.isWarnEnabled()) {
        log.warn("No servers available for service: " + serviceId);
      }
      return new EmptyResponse();
    }
    EndpointSet set = endpointsFor(instances, request);
    if (set == null) {
      return new EmptyResponse();
    }
    try {
      if (set.source != instances && isRetryExclusion(instances, request, set)) {
        return pickAllowed(set, instances);
      }
      if (gate != null) {
        return gated(set);
      }
      return new DefaultResponse(pickFrom(set));
    } catch (NoEndpointException e) {
      return new EmptyResponse();
    }
  }

  private WeightedServiceInstance pickFrom(EndpointSet set) {
    long[] keys = set.keys;
    if (keys != null) {
      // The common case: the engine picks from the set we hold, and says only which index.
      long epoch = set.epoch;
      long r = service.pickIn(epoch);
      if (r != Service.OTHER_EPOCH) {
        int index = (int) r;
        return new WeightedServiceInstance(set.instances[index], set.ids[index], service,
            keys[index], epoch, index, (int) (r >>> 32), true, nanoClock);
      }
    }
    return pickAny(set);
  }

  /**
   * The full pick: the set changed between our lookup and the pick, or its keys are unknown.
   * Under discovery churn the engine's set can change twice between a pick and its lookup here
   * (A, then B, then A again: the pick is from B, and neither the caller's set nor the current
   * one has it); the pick is then cancelled and made again from the newer set.
   */
  private WeightedServiceInstance pickAny(EndpointSet set) {
    long[] p = new long[3];
    for (int attempt = 1; ; attempt++) {
      service.pickInto(p);
      Pick pick = Pick.fromPacked(p);
      long epoch = pick.epoch();
      int index = pick.index();
      EndpointSet s = epoch == set.epoch ? set : current;
      if (s != null && epoch == s.epoch && index >= 0 && index < s.instances.length) {
        return new WeightedServiceInstance(s.instances[index], s.ids[index], service, pick.key(),
            epoch, index, pick.flags(), true, nanoClock);
      }
      ResolvedPick r;
      try {
        r = resolveById(set, pick.key());
      } catch (RuntimeException e) {
        cancelQuietly(pick);
        throw e;
      }
      if (r != null) {
        return wrap(r, pick);
      }
      cancelQuietly(pick);  // never leave a tracked pick behind
      if (attempt == RETRY_PICKS) {
        throw new WeightedException(4, "WT_ERR_NOT_FOUND: " + RETRY_PICKS + " picks in a row "
            + "landed on endpoints in no endpoint set this balancer registered for " + serviceId);
      }
    }
  }

  private void cancelQuietly(Pick pick) {
    try {
      service.cancel(pick);
    } catch (RuntimeException ignored) {
      // stale or closing: nothing is held then
    }
  }

  /** Re-picks endpoints the gate refuses (an open breaker); none permitted: no instance. */
  private Response<ServiceInstance> gated(EndpointSet set) {
    for (int attempt = 0; attempt < RETRY_PICKS; attempt++) {
      WeightedServiceInstance w = pickFrom(set);
      if (gate.tryAcquire(serviceId, w.getEndpointId())) {
        return new DefaultResponse(w);
      }
      w.cancel();
    }
    for (int i = 0; i < set.ids.length; i++) {  // the picks were unlucky, or all are refused
      if (gate.tryAcquire(serviceId, set.ids[i])) {
        long key = service.endpointKey(set.ids[i]);
        return new DefaultResponse(new WeightedServiceInstance(set.instances[i], set.ids[i],
            service, key, 0, i, 0, false, nanoClock));
      }
    }
    if (log.isWarnEnabled()) {
      log.warn("Every endpoint of " + serviceId + " is refused by " + gate);
    }
    return new EmptyResponse();
  }

  /** A retry excluded some instances: re-pick until an allowed one comes up, else take any. */
  private Response<ServiceInstance> pickAllowed(EndpointSet set, List<ServiceInstance> allowed) {
    Set<String> ids = new HashSet<>();
    for (ServiceInstance i : allowed) {
      ids.add(Endpoints.id(i));
    }
    for (int attempt = 0; attempt < RETRY_PICKS; attempt++) {
      WeightedServiceInstance w = pickFrom(set);
      if (ids.contains(w.getEndpointId())) {
        return new DefaultResponse(w);
      }
      w.cancel();
    }
    // Every pick landed on an excluded instance (e.g. one healthy endpoint takes all traffic):
    // take the first allowed one; its outcome is still reported, without an in-flight count.
    for (ServiceInstance i : allowed) {
      String id = Endpoints.id(i);
      Integer idx = set.indexById.get(id);
      if (idx != null) {
        long key = service.endpointKey(id);
        return new DefaultResponse(new WeightedServiceInstance(set.instances[idx], id, service, key,
            0, idx, 0, false, nanoClock));
      }
    }
    return new EmptyResponse();
  }

  private WeightedServiceInstance wrap(ResolvedPick r, Pick p) {
    return new WeightedServiceInstance(r.instance, r.id, service, p.key(), p.epoch(), p.index(),
        p.flags(), true, nanoClock);
  }

  private record ResolvedPick(ServiceInstance instance, String id) {}

  /**
   * The set changed between our registration and the pick (another thread's discovery update):
   * find the endpoint by id, in the caller's set or the current one; null if in neither. Rare,
   * so a String crossing JNI is fine here.
   */
  private ResolvedPick resolveById(EndpointSet set, long key) {
    String id;
    try {
      id = service.endpointId(key);
    } catch (StaleEndpointException e) {
      return null;  // removed since the pick by a newer set: pick again
    }
    ResolvedPick r = find(id, current, set);
    if (r == null) {
      // The pick may come from a set another thread registered but has not published yet:
      // registration holds this lock until `current` is set.
      synchronized (this) {
        r = find(id, current, set);
      }
    }
    return r;
  }

  private static ResolvedPick find(String id, EndpointSet a, EndpointSet b) {
    for (EndpointSet candidate : new EndpointSet[] {a, b}) {
      Integer idx = candidate == null ? null : candidate.indexById.get(id);
      if (idx != null) {
        return new ResolvedPick(candidate.instances[idx], id);
      }
    }
    return null;
  }


  private static boolean isRetryExclusion(List<ServiceInstance> instances, Request<?> request,
      EndpointSet set) {
    if (request == null || !(request.getContext() instanceof RetryableRequestContext ctx)
        || ctx.getPreviousServiceInstance() == null || instances.size() >= set.instances.length) {
      return false;
    }
    for (ServiceInstance i : instances) {
      if (!set.indexById.containsKey(Endpoints.id(i))) {
        return false;
      }
    }
    return true;
  }

  /** The registered set for this list, registering it with the engine if discovery changed it. */
  private EndpointSet endpointsFor(List<ServiceInstance> instances, Request<?> request) {
    EndpointSet cur = current;
    if (cur != null && cur.matches(instances)) {
      return cur;
    }
    if (cur != null && isRetryExclusion(instances, request, cur)) {
      return cur;  // a retry's list is never the new set: see the class comment
    }
    EndpointSet candidate = EndpointSet.of(instances);
    if (candidate.instances.length == 0) {
      return cur;  // every instance has weight 0: keep the engine's set, send nothing new
    }
    synchronized (this) {
      cur = current;
      if (cur != null && cur.matches(instances)) {
        return cur;  // another thread registered this list meanwhile
      }
      if (cur != null && cur.sameEndpoints(candidate)) {
        // Same ids, weights and (equal) instances, e.g. only the order of metadata text
        // changed: nothing for the engine, but remember this list so the next call is fast.
        candidate.epoch = cur.epoch;
        candidate.keys = cur.keys;
      } else {
        candidate.epoch = service.setEndpoints(candidate.ids, candidate.weights);
        candidate.keys = keysOf(candidate.ids);
      }
      candidate.remember(instances);
      current = candidate;
      if (log.isDebugEnabled()) {
        log.debug("weighted: " + serviceId + " endpoints " + Arrays.toString(candidate.ids)
            + " weights " + Arrays.toString(candidate.weights) + " (epoch " + candidate.epoch + ")");
      }
      return candidate;
    }
  }

  /** The engine's keys of a set just registered; null (full picks only) if one is missing. */
  private long[] keysOf(String[] ids) {
    long[] keys = new long[ids.length];
    try {
      for (int i = 0; i < ids.length; i++) {
        keys[i] = service.endpointKey(ids[i]);
      }
      return keys;
    } catch (WeightedException e) {
      return null;  // another writer changed the service's set meanwhile
    }
  }

  /** One endpoint set as registered with the engine. Index i is the engine's pick index i. */
  static final class EndpointSet {
    private static final Set<Class<?>> IMMUTABLE_LISTS = new HashSet<>(List.of(
        List.of().getClass(), List.of(1).getClass(), List.of(1, 2, 3).getClass(),
        Collections.emptyList().getClass(), Collections.singletonList(1).getClass()));

    final ServiceInstance[] instances;
    final String[] ids;
    final double[] weights;
    final Map<String, Integer> indexById;
    volatile long epoch;
    /** The engine's key of each endpoint (for complete); null: unknown, picks take the full path. */
    long[] keys;
    /** The list this set was built from (identity fast path) and its elements. */
    volatile List<ServiceInstance> source;
    private ServiceInstance[] sourceElements = new ServiceInstance[0];
    /** {@code source} cannot change in place (List.of, List.copyOf, Stream.toList). */
    private boolean sourceImmutable;

    private EndpointSet(ServiceInstance[] instances, String[] ids, double[] weights,
        Map<String, Integer> indexById) {
      this.instances = instances;
      this.ids = ids;
      this.weights = weights;
      this.indexById = indexById;
    }

    static EndpointSet of(List<ServiceInstance> list) {
      List<ServiceInstance> kept = new ArrayList<>(list.size());
      List<String> ids = new ArrayList<>(list.size());
      List<Double> weights = new ArrayList<>(list.size());
      Map<String, Integer> index = new HashMap<>();
      for (ServiceInstance raw : list) {
        ServiceInstance i = WeightedServiceInstance.unwrap(raw);
        String id = Endpoints.id(i);
        double w = Endpoints.baseWeight(i);
        if (w <= 0 || index.containsKey(id)) {
          continue;  // weight 0 means "send nothing"; a duplicate host:port is the same endpoint
        }
        index.put(id, kept.size());
        kept.add(i);
        ids.add(id);
        weights.add(w);
      }
      double[] w = new double[weights.size()];
      for (int k = 0; k < w.length; k++) {
        w[k] = weights.get(k);
      }
      return new EndpointSet(kept.toArray(new ServiceInstance[0]), ids.toArray(new String[0]), w,
          index);
    }

    void remember(List<ServiceInstance> list) {
      sourceElements = list.toArray(new ServiceInstance[0]);
      sourceImmutable = IMMUTABLE_LISTS.contains(list.getClass());
      source = list;
    }

    /**
     * Whether {@code list} still describes this set, without building an id or parsing a weight:
     * the list this set was built from, if it cannot have changed in place (an immutable list);
     * otherwise the same instances in the same order, each the very object seen before (a
     * caching supplier's list, or a filter's new list of the same instances) or an equal
     * instance with the same host, port and weight metadata (suppliers that build new instances
     * per call). A list changed in place, reordered, or with a changed weight does not match.
     */
    boolean matches(List<ServiceInstance> list) {
      if (list == source && sourceImmutable) {
        return true;
      }
      ServiceInstance[] known = sourceElements;
      if (list.size() != known.length) {
        return false;
      }
      for (int i = 0; i < known.length; i++) {
        ServiceInstance x = list.get(i);
        if (x != known[i] && !sameEndpoint(known[i], x)) {
          return false;
        }
      }
      return true;
    }

    private static boolean sameEndpoint(ServiceInstance a, ServiceInstance b) {
      a = WeightedServiceInstance.unwrap(a);
      b = WeightedServiceInstance.unwrap(b);
      return a == b || (a.equals(b) && a.getPort() == b.getPort()
          && Objects.equals(a.getHost(), b.getHost()) && Endpoints.sameWeightMetadata(a, b));
    }

    boolean sameEndpoints(EndpointSet o) {
      return Arrays.equals(ids, o.ids) && Arrays.equals(weights, o.weights)
          && Arrays.equals(instances, o.instances);
    }
  }
}
