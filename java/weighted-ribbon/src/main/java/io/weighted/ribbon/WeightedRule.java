package io.weighted.ribbon;

import com.netflix.client.config.CommonClientConfigKey;
import com.netflix.client.config.IClientConfig;
import com.netflix.client.config.IClientConfigKey;
import com.netflix.loadbalancer.AbstractLoadBalancerRule;
import com.netflix.loadbalancer.ILoadBalancer;
import com.netflix.loadbalancer.Server;
import io.weighted.jni.ClockMode;
import io.weighted.jni.ConfigException;
import io.weighted.jni.EndpointTable;
import io.weighted.jni.Engine;
import io.weighted.jni.NoEndpointException;
import io.weighted.jni.Outcome;
import io.weighted.jni.Pick;
import io.weighted.jni.Service;
import io.weighted.jni.WeightedException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.ToDoubleFunction;

/**
 * A Netflix Ribbon {@code IRule} backed by the weighted engine. The engine chooses; this rule only
 * forwards the load balancer's reachable servers (id {@code host:port}) when they change and maps
 * the engine's pick back to a {@link Server}. Outcomes reach the engine through
 * {@link WeightedExecutionListener} (its {@code track(operation)} for a plain
 * {@code LoadBalancerCommand}) or {@link #record} from your own client code; a rule nobody
 * reports to picks by base weight and slow start alone.
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
 * until the call ends: in the engine's load-aware picker mode (the default), the count is
 * released at once, and the picker compares Ribbon's candidates by latency and failures only, not
 * by requests in flight. The exact mode ({@code "picker": {"mode": "weighted"}}) takes no count.
 *
 * <p>The registered set is the engine's {@link EndpointTable}: a pick resolves to the server of
 * the set it was drawn from, even while another thread registers a new list. If the engine
 * service is removed ({@link Service#remove()}), the rule moves to the engine's new service of
 * the same name and registers the servers again on the next choose.
 */
public class WeightedRule extends AbstractLoadBalancerRule {
  /** {@code <client>.ribbon.WeightedConfig}: path of the shared JSON config. */
  public static final IClientConfigKey<String> CONFIG_KEY =
      new CommonClientConfigKey<String>("WeightedConfig") {};

  private static final Map<String, Engine> SHARED = new ConcurrentHashMap<>();

  private volatile Engine engine;
  private volatile Service service;
  private volatile Registered current;
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
      // The engine reads the file itself: bounded by limits.max_config_bytes, and a path that is
      // no config (a device, a FIFO) is refused with WT_ERR_IO or WT_ERR_LIMIT.
      try {
        return Engine.fromFile(Path.of(k), ClockMode.REAL);
      } catch (ConfigException ex) {
        throw new ConfigException(ex.code(), "WeightedConfig " + quote(k) + ": " + ex.getMessage());
      }
    });
  }

  /** In quotes, control characters escaped: a path in a message cannot forge a log line. */
  private static String quote(String s) {
    StringBuilder b = new StringBuilder(s.length() + 2).append('"');
    for (char c : s.toCharArray()) {
      if (c == '"' || c == '\\') {
        b.append('\\').append(c);
      } else if (c < 0x20 || c == 0x7f) {
        b.append(String.format("\\u%04x", (int) c));
      } else {
        b.append(c);
      }
    }
    return b.append('"').toString();
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
    try {
      return chooseOnce();
    } catch (IllegalStateException e) {
      if (!renewService()) {
        throw e;  // the engine is closed
      }
      return chooseOnce();  // the service was removed: its successor
    }
  }

  // Apart from choose() so that the handler there holds no server list: one it held would have to
  // exist as an object, and the load balancer's list wrapper is otherwise never allocated.
  private Server chooseOnce() {
    ILoadBalancer lb = getLoadBalancer();
    if (lb == null || service == null) {
      return null;
    }
    List<Server> servers = lb.getReachableServers();
    if (servers == null || servers.isEmpty()) {
      return null;
    }
    return pick(servers);
  }

  /**
   * The engine's pick, as the server of the set it was drawn from: one JNI call, whatever other
   * threads register meanwhile ({@link Registered#resolve}).
   */
  private Server pick(List<Server> servers) {
    Registered reg = serversFor(servers);
    try {
      return reg.table.pickWith(reg);
    } catch (NoEndpointException e) {
      return null;
    }
  }

  /** Records an outcome for a server this rule chose (what the execution listener calls). */
  public void record(Server server, double latencyMs, Outcome outcome) {
    record(server, latencyMs, outcome, null);
  }

  /**
   * The same with the response's load report (its {@code endpoint-load-metrics} header, null
   * for none): the server's own figures feed the resource rules. A malformed report is counted
   * by the engine (the snapshot's bad_load_reports) and not the caller's error.
   */
  public void record(Server server, double latencyMs, Outcome outcome, String loadReport) {
    Registered reg = current;
    if (reg == null || server == null) {
      return;
    }
    int i = reg.table.indexOf(server.getId());
    if (i < 0) {
      return;  // not (or no longer) one of ours
    }
    long key = reg.table.key(i);
    try {
      reg.table.service().report(key, latencyMs, outcome);
      if (loadReport != null && !loadReport.isEmpty()) {
        reg.table.service().reportLoad(key, loadReport);
      }
    } catch (WeightedException | IllegalStateException ignored) {
      // stale (the server left the list meanwhile), the service is gone (removed, engine
      // closed), or a malformed report the engine counted
    }
  }

  /**
   * After {@link Service#remove()} on this rule's service: the engine's new service of the same
   * name (empty: the next choose registers the servers again). False when the engine is closed.
   */
  private synchronized boolean renewService() {
    Engine e = engine;
    if (e == null || e.isClosed()) {
      return false;
    }
    Service s = service;
    Service next = s;
    // Until the removal returns, the engine still hands out the removed service: it is short.
    while (next == s && s.isClosed() && !e.isClosed()) {
      Thread.yield();
      next = e.service(s.name());
    }
    if (next != s) {
      service = next;
      current = null;
    }
    return !next.isClosed();
  }

  private Registered serversFor(List<Server> servers) {
    Registered cur = current;
    // BaseLoadBalancer hands out a new list wrapper per call: compare elements, not the list.
    if (cur != null && cur.sameSource(servers)) {
      return cur;
    }
    Candidate candidate = Candidate.of(servers, baseWeight);
    synchronized (this) {
      cur = current;
      if (cur != null && cur.sameSource(servers)) {
        return cur;
      }
      Service svc = service;
      EndpointTable<Server> table;
      if (cur != null && cur.table.service() == svc && candidate.same(cur.table)) {
        // New Server objects (a discovery refresh), same ids and weights: nothing for the
        // engine; keep the new objects so that the next call is an identity check again.
        table = cur.table;
      } else {
        table = svc.setEndpoints(Arrays.asList(candidate.servers), candidate.ids,
            candidate.weights);
      }
      Registered reg = new Registered(table, candidate.servers, servers.toArray(new Server[0]));
      current = reg;
      return reg;
    }
  }

  /** The endpoints a server list makes: duplicates and weights that are not positive left out. */
  private record Candidate(Server[] servers, String[] ids, double[] weights) {
    static Candidate of(List<Server> list, ToDoubleFunction<Server> weightOf) {
      Set<String> seen = new HashSet<>();
      Server[] servers = new Server[list.size()];
      String[] ids = new String[list.size()];
      double[] weights = new double[list.size()];
      int n = 0;
      for (Server s : list) {
        double w = weightOf.applyAsDouble(s);
        if (!(w > 0) || Double.isInfinite(w) || !seen.add(s.getId())) {
          continue;
        }
        servers[n] = s;
        ids[n] = s.getId();
        weights[n] = w;
        n++;
      }
      return new Candidate(Arrays.copyOf(servers, n), Arrays.copyOf(ids, n),
          Arrays.copyOf(weights, n));
    }

    boolean same(EndpointTable<Server> t) {
      if (t.size() != ids.length) {
        return false;
      }
      for (int i = 0; i < ids.length; i++) {
        if (!ids[i].equals(t.id(i)) || weights[i] != t.baseWeight(i)) {
          return false;
        }
      }
      return true;
    }
  }

  /**
   * The set this rule registered (the engine's table), the current Server objects for its
   * endpoints (newer ones after a refresh that changed no id or weight), and the list it came
   * from.
   */
  private static final class Registered implements EndpointTable.Resolver<Server> {
    final EndpointTable<Server> table;
    final Server[] servers;
    private final Server[] sourceElements;

    Registered(EndpointTable<Server> table, Server[] servers, Server[] sourceElements) {
      this.table = table;
      this.servers = servers;
      this.sourceElements = sourceElements;
    }

    @Override
    public Server resolve(EndpointTable.Entry<?> e, long key, long epoch, int index, int flags,
        int ticket) {
      if ((flags & Pick.TRACKED) != 0) {
        // No completion hook in Ribbon: see the class comment.
        table.service().cancel(key, epoch, index, flags, ticket);
      }
      if (epoch == table.epoch()) {
        return servers[index];  // the current objects of the registered set
      }
      if (e != null && e.item() instanceof Server s) {
        return s;  // an older set of ours, installed meanwhile
      }
      int i = e == null ? -1 : table.indexOf(e.id());  // another writer's set: ours by id
      return i < 0 ? null : servers[i];
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
  }
}
