package io.weighted.ribbon;

import com.netflix.client.config.CommonClientConfigKey;
import com.netflix.client.config.IClientConfig;
import com.netflix.client.config.IClientConfigKey;
import com.netflix.loadbalancer.AbstractLoadBalancerRule;
import com.netflix.loadbalancer.ILoadBalancer;
import com.netflix.loadbalancer.Server;
import io.weighted.jni.ClockMode;
import io.weighted.jni.Engine;
import io.weighted.jni.NoEndpointException;
import io.weighted.jni.Outcome;
import io.weighted.jni.Pick;
import io.weighted.jni.Service;
import io.weighted.jni.WeightedException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.ToDoubleFunction;

/**
 * A Netflix Ribbon {@code IRule} backed by the weighted engine. The engine chooses; this rule only
 * forwards the load balancer's reachable servers (id {@code host:port}) when they change and maps
 * the engine's pick back to a {@link Server}. Outcomes reach the engine through
 * {@link WeightedExecutionListener} (or {@link #record} from your own client code).
 *
 * <p>Ribbon configuration ({@code <client>.ribbon.*}):
 * <pre>
 * orders.ribbon.NFLoadBalancerRuleClassName=io.weighted.ribbon.WeightedRule
 * orders.ribbon.WeightedConfig=/etc/weighted.json    # the shared JSON config; absent = defaults
 * </pre>
 * Rules that name the same config file share one engine per JVM (one state store for every
 * client). The service name in the engine is the Ribbon client name.
 *
 * <p>Ribbon's {@code choose} has no completion hook, so a pick's in-flight count cannot be held
 * until the call ends: in the engine's load-aware picker mode, the count is released at once
 * (the default, exact weighted mode takes none).
 */
public class WeightedRule extends AbstractLoadBalancerRule {
  /** {@code <client>.ribbon.WeightedConfig}: path of the shared JSON config. */
  public static final IClientConfigKey<String> CONFIG_KEY =
      new CommonClientConfigKey<String>("WeightedConfig") {};

  private static final Map<String, Engine> SHARED = new ConcurrentHashMap<>();

  private volatile Engine engine;
  private volatile Service service;
  private volatile ServerSet current;
  private ToDoubleFunction<Server> baseWeight = s -> 1.0;

  /** For Ribbon, which instantiates rules by class name and then calls initWithNiwsConfig. */
  public WeightedRule() {}

  /** For programmatic use: an engine you own, and the service name to use in it. */
  public WeightedRule(Engine engine, String serviceName) {
    this.engine = Objects.requireNonNull(engine, "engine");
    this.service = engine.service(serviceName);
  }

  @Override
  public void initWithNiwsConfig(IClientConfig clientConfig) {
    String path = clientConfig.get(CONFIG_KEY);
    Engine e = engine;
    if (e == null) {
      e = sharedEngine(path);
      engine = e;
    }
    service = e.service(clientConfig.getClientName());
  }

  /** One engine per config file per JVM; "" for the built-in defaults. */
  static Engine sharedEngine(String path) {
    String key = path == null ? "" : path.trim();
    return SHARED.computeIfAbsent(key, k -> {
      if (k.isEmpty()) {
        return Engine.create("{}", ClockMode.REAL);
      }
      try {
        return Engine.create(Files.readString(Path.of(k)), ClockMode.REAL);
      } catch (IOException ex) {
        throw new UncheckedIOException("WeightedConfig " + k + ": cannot read", ex);
      }
    });
  }

  /** How a server's base weight is found (default 1); e.g. from Eureka metadata. */
  public void setBaseWeight(ToDoubleFunction<Server> baseWeight) {
    this.baseWeight = Objects.requireNonNull(baseWeight);
  }

  public Engine getEngine() {
    return engine;
  }

  public Service getService() {
    return service;
  }

  @Override
  public Server choose(Object key) {
    ILoadBalancer lb = getLoadBalancer();
    Service svc = service;
    if (lb == null || svc == null) {
      return null;
    }
    List<Server> servers = lb.getReachableServers();
    if (servers == null || servers.isEmpty()) {
      return null;
    }
    ServerSet set = serversFor(svc, servers);
    try {
      long r = svc.pickIn(set.epoch);  // the engine picks from the set we hold: just an index
      if (r != Service.OTHER_EPOCH) {
        int flags = (int) (r >>> 32);
        if ((flags & Pick.TRACKED) != 0) {  // no completion hook in Ribbon: see the class comment
          svc.cancel(new Pick(set.keys[(int) r], set.epoch, (int) r, flags));
        }
        return set.servers[(int) r];
      }
      Pick p = svc.pick();  // the set changed meanwhile: the full pick, resolved by id if need be
      if (p.isTracked()) {
        svc.cancel(p);  // no completion hook in Ribbon: see the class comment
      }
      return resolve(svc, set, p);
    } catch (NoEndpointException e) {
      return null;
    }
  }

  /** Records an outcome for a server this rule chose (what the execution listener calls). */
  public void record(Server server, double latencyMs, Outcome outcome) {
    Service svc = service;
    ServerSet set = current;
    if (svc == null || set == null || server == null) {
      return;
    }
    Integer idx = set.indexById.get(server.getId());
    if (idx == null) {
      return;  // not (or no longer) one of ours
    }
    try {
      svc.report(set.keys[idx], latencyMs, outcome);
    } catch (WeightedException | IllegalStateException ignored) {
      // stale (the server left the list meanwhile) or the engine is closing
    }
  }

  private Server resolve(Service svc, ServerSet set, Pick p) {
    ServerSet s = p.epoch() == set.epoch ? set : current;
    if (s != null && p.epoch() == s.epoch && p.index() < s.servers.length) {
      return s.servers[p.index()];
    }
    String id = svc.endpointId(p.key());
    Integer idx = current.indexById.get(id);
    return idx == null ? null : current.servers[idx];
  }

  private ServerSet serversFor(Service svc, List<Server> servers) {
    ServerSet cur = current;
    // BaseLoadBalancer hands out a new list wrapper per call: compare elements, not the list.
    if (cur != null && cur.sameSource(servers)) {
      return cur;
    }
    ServerSet candidate = ServerSet.of(servers, baseWeight);
    synchronized (this) {
      cur = current;
      if (cur != null && cur.sameSource(servers)) {
        return cur;
      }
      if (cur != null && cur.same(candidate)) {
        // New Server objects (a discovery refresh), same ids and weights: nothing for the
        // engine; keep the new objects so that the next call is an identity check again.
        candidate.epoch = cur.epoch;
        candidate.keys = cur.keys;
      } else {
        candidate.epoch = svc.setEndpoints(candidate.ids, candidate.weights);
        candidate.keys = new long[candidate.ids.length];
        for (int i = 0; i < candidate.ids.length; i++) {
          candidate.keys[i] = svc.endpointKey(candidate.ids[i]);
        }
      }
      candidate.sourceElements = servers.toArray(new Server[0]);
      current = candidate;
      return candidate;
    }
  }

  static final class ServerSet {
    final Server[] servers;
    final String[] ids;
    final double[] weights;
    final Map<String, Integer> indexById;
    volatile long[] keys;
    volatile long epoch;
    Server[] sourceElements = new Server[0];

    private ServerSet(Server[] servers, String[] ids, double[] weights, Map<String, Integer> idx) {
      this.servers = servers;
      this.ids = ids;
      this.weights = weights;
      this.indexById = idx;
    }

    static ServerSet of(List<Server> list, ToDoubleFunction<Server> weightOf) {
      Map<String, Integer> idx = new HashMap<>();
      Server[] servers = new Server[list.size()];
      String[] ids = new String[list.size()];
      double[] weights = new double[list.size()];
      int n = 0;
      for (Server s : list) {
        double w = weightOf.applyAsDouble(s);
        if (idx.containsKey(s.getId()) || !(w > 0) || Double.isInfinite(w)) {
          continue;
        }
        idx.put(s.getId(), n);
        servers[n] = s;
        ids[n] = s.getId();
        weights[n] = w;
        n++;
      }
      return new ServerSet(Arrays.copyOf(servers, n), Arrays.copyOf(ids, n),
          Arrays.copyOf(weights, n), idx);
    }

    /**
     * The same Server objects in the same order. Ids and base weights are read when a set is
     * built, so a Server changed in place (setHostPort, its metadata) is not seen until the load
     * balancer hands out a new object, as a discovery refresh does.
     */
    boolean sameSource(List<Server> list) {
      Server[] known = sourceElements;
      if (list.size() != known.length) {
        return false;
      }
      for (int i = 0; i < known.length; i++) {
        if (list.get(i) != known[i]) {
          return false;
        }
      }
      return true;
    }

    boolean same(ServerSet o) {
      return Arrays.equals(ids, o.ids) && Arrays.equals(weights, o.weights);
    }
  }
}
