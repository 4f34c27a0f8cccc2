package io.weighted.spring;

import io.weighted.jni.EndpointTable;
import io.weighted.jni.Engine;
import io.weighted.jni.NoEndpointException;
import io.weighted.jni.Service;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
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
 *
 * <p>The registered set is the engine's {@link EndpointTable}: a pick resolves to the instance of
 * the set it was drawn from, even while another thread registers a new list. If the engine
 * service is removed ({@link Service#remove()}), the balancer moves to the engine's new service
 * of the same name and registers the list again on the next choose; picks still open on the
 * removed service finish as no-ops.
 */
public class WeightedLoadBalancer implements ReactorServiceInstanceLoadBalancer {
  private static final Log log = LogFactory.getLog(WeightedLoadBalancer.class);
  /** Re-picks when a retry or the gate refused the picked instance, before taking any allowed. */
  private static final int RETRY_PICKS = 4;

  private final String serviceId;
  private final ObjectProvider<ServiceInstanceListSupplier> supplierProvider;
  private final Engine engine;
  private final LongSupplier nanoClock;
  private final EndpointGate gate;
  private volatile Service service;
  private volatile ServiceInstanceListSupplier supplier;
  private volatile Registered current;

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
    this.engine = engine;
    this.service = engine.service(serviceId);
    this.nanoClock = nanoClock;
  }

  public String getServiceId() {
    return serviceId;
  }

  /** The engine service this balancer feeds (a new one after its service was removed). */
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
      Response<ServiceInstance> response;
      try {
        response = respond(instances, request);
      } catch (IllegalStateException e) {
        if (!renewService()) {
          throw e;  // the engine is closed
        }
        response = respond(instances, request);  // the service was removed: its successor
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

  private Response<ServiceInstance> respond(List<ServiceInstance> instances, Request<?> request) {
    Registered reg = current;
    if (reg != null && gate == null && reg.matches(instances)) {
      return response(pickFrom(reg));
    }
    return getInstanceResponse(instances, request);
  }

  /**
   * After {@link Service#remove()} on this balancer's service: the engine's service of the same
   * name from now on (new and empty: the next choose registers the list again). False when the
   * engine itself is closed.
   */
  private synchronized boolean renewService() {
    if (engine.isClosed()) {
      return false;
    }
    Service s = service;
    Service next = s;
    // Until the removal returns, the engine still hands out the removed service: it is short.
    while (next == s && s.isClosed() && !engine.isClosed()) {
      Thread.yield();
      next = engine.service(serviceId);
    }
    if (next != s) {
      service = next;
      current = null;
    }
    return !next.isClosed();
  }

  Response<ServiceInstance> getInstanceResponse(List<ServiceInstance> instances,
      Request<?> request) {
    if (instances.isEmpty()) {
      if (log.isWarnEnabled()) {
        log.warn("No servers available for service: " + serviceId);
      }
      return new EmptyResponse();
    }
    Registered reg = endpointsFor(instances, request);
    if (reg == null) {
      return new EmptyResponse();
    }
    if (reg.source != instances && isRetryExclusion(instances, request, reg)) {
      return pickAllowed(reg, instances);
    }
    if (gate != null) {
      return gated(reg);
    }
    return response(pickFrom(reg));
  }

  private static Response<ServiceInstance> response(WeightedServiceInstance w) {
    return w == null ? new EmptyResponse() : new DefaultResponse(w);
  }

  /**
   * The engine's pick, as the instance of the set it was drawn from; null when there is none
   * (an empty set, or a pick from a set that another writer registered with an endpoint this
   * balancer does not know). {@link Registered#resolve} makes the instance.
   */
  private static WeightedServiceInstance pickFrom(Registered reg) {
    try {
      return reg.table.pickWith(reg);
    } catch (NoEndpointException e) {
      return null;
    }
  }

  /** Re-picks endpoints the gate refuses (an open breaker); none permitted: no instance. */
  private Response<ServiceInstance> gated(Registered reg) {
    for (int attempt = 0; attempt < RETRY_PICKS; attempt++) {
      WeightedServiceInstance w = pickFrom(reg);
      if (w == null) {
        return new EmptyResponse();
      }
      if (gate.tryAcquire(serviceId, w.getEndpointId())) {
        return new DefaultResponse(w);
      }
      w.cancel();
    }
    EndpointTable<ServiceInstance> table = reg.table;
    for (int i = 0; i < table.size(); i++) {  // the picks were unlucky, or all are refused
      if (gate.tryAcquire(serviceId, table.id(i))) {
        return new DefaultResponse(unpicked(reg, i));
      }
    }
    if (log.isWarnEnabled()) {
      log.warn("Every endpoint of " + serviceId + " is refused by " + gate);
    }
    return new EmptyResponse();
  }

  /** A retry excluded some instances: re-pick until an allowed one comes up, else take any. */
  private Response<ServiceInstance> pickAllowed(Registered reg, List<ServiceInstance> allowed) {
    Set<String> ids = new HashSet<>();
    for (ServiceInstance i : allowed) {
      ids.add(Endpoints.id(i));
    }
    for (int attempt = 0; attempt < RETRY_PICKS; attempt++) {
      WeightedServiceInstance w = pickFrom(reg);
      if (w == null) {
        return new EmptyResponse();
      }
      if (ids.contains(w.getEndpointId())) {
        return new DefaultResponse(w);
      }
      w.cancel();
    }
    // Every pick landed on an excluded instance (e.g. one healthy endpoint takes all traffic):
    // take the first allowed one; its outcome is still reported, without an in-flight count.
    for (ServiceInstance i : allowed) {
      int idx = reg.table.indexOf(Endpoints.id(i));
      if (idx >= 0) {
        return new DefaultResponse(unpicked(reg, idx));
      }
    }
    return new EmptyResponse();
  }

  /** Endpoint {@code i} of the registered set, chosen without the engine. */
  private WeightedServiceInstance unpicked(Registered reg, int i) {
    return new WeightedServiceInstance(reg.instances[i], reg.table.service(), reg.table.entry(i),
        nanoClock);
  }

  private static boolean isRetryExclusion(List<ServiceInstance> instances, Request<?> request,
      Registered reg) {
    if (request == null || !(request.getContext() instanceof RetryableRequestContext ctx)
        || ctx.getPreviousServiceInstance() == null || instances.size() >= reg.table.size()) {
      return false;
    }
    for (ServiceInstance i : instances) {
      if (reg.table.indexOf(Endpoints.id(i)) < 0) {
        return false;
      }
    }
    return true;
  }

  /** The registered set for this list, registering it with the engine if discovery changed it. */
  private Registered endpointsFor(List<ServiceInstance> instances, Request<?> request) {
    Registered cur = current;
    if (cur != null && cur.matches(instances)) {
      return cur;
    }
    if (cur != null && isRetryExclusion(instances, request, cur)) {
      return cur;  // a retry's list is never the new set: see the class comment
    }
    Candidate candidate = Candidate.of(instances);
    if (candidate.instances.length == 0) {
      return cur;  // every instance has weight 0: keep the engine's set, send nothing new
    }
    boolean changed = false;
    Registered reg;
    synchronized (this) {
      cur = current;
      if (cur != null && cur.matches(instances)) {
        return cur;  // another thread registered this list meanwhile
      }
      Service svc = service;
      EndpointTable<ServiceInstance> table;
      if (cur != null && cur.table.service() == svc && candidate.sameEndpoints(cur)) {
        // Same ids, weights and (equal) instances, e.g. only the order of metadata text
        // changed: nothing for the engine, but remember this list so the next call is fast.
        table = cur.table;
      } else {
        table = svc.setEndpoints(Arrays.asList(candidate.instances), candidate.ids,
            candidate.weights);
        changed = true;
      }
      reg = new Registered(table, candidate.instances, instances, nanoClock, serviceId);
      current = reg;
      if (log.isDebugEnabled()) {
        log.debug("weighted: " + serviceId + " endpoints " + Arrays.toString(candidate.ids)
            + " weights " + Arrays.toString(candidate.weights) + " (epoch " + table.epoch() + ")");
      }
    }
    if (changed && gate != null) {
      gate.endpointsChanged(serviceId, Set.of(candidate.ids));
    }
    return reg;
  }

  /** The endpoints a discovered list makes: weight 0 and duplicate host:port left out. */
  private record Candidate(ServiceInstance[] instances, String[] ids, double[] weights) {
    static Candidate of(List<ServiceInstance> list) {
      List<ServiceInstance> kept = new ArrayList<>(list.size());
      List<String> ids = new ArrayList<>(list.size());
      List<Double> weights = new ArrayList<>(list.size());
      Set<String> seen = new HashSet<>();
      for (ServiceInstance raw : list) {
        ServiceInstance i = WeightedServiceInstance.unwrap(raw);
        String id = Endpoints.id(i);
        double w = Endpoints.baseWeight(i);
        if (w <= 0 || !seen.add(id)) {
          continue;  // weight 0 means "send nothing"; a duplicate host:port is the same endpoint
        }
        kept.add(i);
        ids.add(id);
        weights.add(w);
      }
      double[] w = new double[weights.size()];
      for (int k = 0; k < w.length; k++) {
        w[k] = weights.get(k);
      }
      return new Candidate(kept.toArray(new ServiceInstance[0]), ids.toArray(new String[0]), w);
    }

    boolean sameEndpoints(Registered reg) {
      EndpointTable<ServiceInstance> t = reg.table;
      if (t.size() != ids.length) {
        return false;
      }
      for (int i = 0; i < ids.length; i++) {
        if (!ids[i].equals(t.id(i)) || weights[i] != t.baseWeight(i)
            || !Objects.equals(instances[i], reg.instances[i])) {
          return false;
        }
      }
      return true;
    }
  }

  /**
   * The set this balancer registered (the engine's table: items, ids, keys, by pick index), the
   * current objects for its endpoints (equal to the table's items; newer when discovery handed
   * out equal new instances), and the list it was registered from, to tell whether the
   * supplier's next list still describes it. It turns the table's picks into instances.
   */
  static final class Registered implements EndpointTable.Resolver<WeightedServiceInstance> {
    /** A power of two: how often matches() re-reads weight metadata of unchanged objects. */
    static final int RECHECK_EVERY = 64;
    private static final Set<Class<?>> IMMUTABLE_LISTS = new HashSet<>(List.of(
        List.of().getClass(), List.of(1).getClass(), List.of(1, 2, 3).getClass(),
        Collections.emptyList().getClass(), Collections.singletonList(1).getClass()));

    final EndpointTable<ServiceInstance> table;
    final ServiceInstance[] instances;
    /** The list this set was built from (identity fast path) and its elements. */
    final List<ServiceInstance> source;
    private final ServiceInstance[] sourceElements;
    /** {@code source} cannot change in place (List.of, List.copyOf, Stream.toList). */
    private final boolean sourceImmutable;
    /**
     * The weight metadata text of each source element when the set was built: a discovery client
     * that changes an instance's metadata map in place hands out the very same object, which the
     * identity checks in {@link #matches} would take as unchanged.
     */
    private final String[] sourceWeights;
    private final LongSupplier nanoClock;
    private final String serviceId;
    /** Counts matches() calls; racy increments only stretch the re-read interval a little. */
    private int matchCalls;
    /** A re-read found changed weight metadata: this set no longer describes any list. */
    private volatile boolean weightsChanged;

    Registered(EndpointTable<ServiceInstance> table, ServiceInstance[] instances,
        List<ServiceInstance> source, LongSupplier nanoClock, String serviceId) {
      this.table = table;
      this.instances = instances;
      this.sourceElements = source.toArray(new ServiceInstance[0]);
      this.sourceImmutable = IMMUTABLE_LISTS.contains(source.getClass());
      this.sourceWeights = new String[sourceElements.length];
      for (int i = 0; i < sourceElements.length; i++) {
        sourceWeights[i] = Endpoints.weightMetadata(sourceElements[i]);
      }
      this.source = source;
      this.nanoClock = nanoClock;
      this.serviceId = serviceId;
    }

    @Override
    public WeightedServiceInstance resolve(EndpointTable.Entry<?> e, long key, long epoch,
        int index, int flags, int ticket) {
      ServiceInstance instance;
      if (epoch == table.epoch()) {
        instance = instances[index];  // the current objects of the registered set
      } else if (e != null && e.item() instanceof ServiceInstance si) {
        instance = si;  // an older set of ours (or another balancer's), installed meanwhile
      } else {
        // Another writer's set of this service (ids only): ours by id, if we have it.
        int i = e == null ? -1 : table.indexOf(e.id());
        if (i < 0) {
          Service svc = table.service();
          svc.cancel(key, epoch, index, flags, ticket);
          if (log.isWarnEnabled()) {
            log.warn("weighted: " + serviceId + " picked " + (e == null ? "key " + key : e)
                + ", which is in no set this balancer registered");
          }
          return null;
        }
        instance = instances[i];
      }
      return new WeightedServiceInstance(instance, e.id(), table.service(), key, epoch, index,
          flags, ticket, nanoClock);
    }

    /**
     * Whether {@code list} still describes this set, without building an id or parsing a weight:
     * the list this set was built from, if it cannot have changed in place (an immutable list);
     * otherwise the same instances in the same order, each the very object seen before (a
     * caching supplier's list, or a filter's new list of the same instances) or an equal
     * instance with the same host, port and weight metadata (suppliers that build new instances
     * per call). A list changed in place, reordered, or with a changed weight does not match.
     * Every {@value #RECHECK_EVERY}th call also re-reads the weight metadata of the instances
     * trusted by identity, so a weight changed inside the same object's metadata map is seen
     * within that many chooses, while the other calls stay one identity comparison per instance.
     */
    boolean matches(List<ServiceInstance> list) {
      if (weightsChanged) {
        return false;
      }
      if ((++matchCalls & (RECHECK_EVERY - 1)) == 0 && !sameWeightsAsBuilt()) {
        weightsChanged = true;  // sticky: the caller's next matches() must not trust it again
        return false;
      }
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

    /** Whether every source element still carries the weight metadata it had when built. */
    private boolean sameWeightsAsBuilt() {
      for (int i = 0; i < sourceElements.length; i++) {
        if (!Objects.equals(sourceWeights[i], Endpoints.weightMetadata(sourceElements[i]))) {
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
  }
}
