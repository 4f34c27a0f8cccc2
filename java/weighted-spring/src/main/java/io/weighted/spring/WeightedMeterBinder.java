package io.weighted.spring;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.weighted.jni.EndpointState;
import io.weighted.jni.Engine;
import io.weighted.jni.Json;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Micrometer gauges per endpoint, read from the engine's snapshot JSON (the engine is the one
 * data source: this class computes nothing). Tags: {@code service}, {@code endpoint}.
 * <ul>
 *   <li>{@code weighted.endpoint.share}: the endpoint's share of its service's results in the
 *       last controller cycle, the traffic it actually got;
 *   <li>{@code weighted.endpoint.expected.share}: the share of picks the engine's current model
 *       expects it to get in the next cycle (weights, probes, panic and the load-aware cost
 *       comparison together);
 *   <li>{@code weighted.endpoint.weight}: the effective weight, an input of the pick and not the
 *       split (the split with the weighted picker; with the default load-aware one only how often
 *       it is drawn as a candidate);
 *   <li>{@code weighted.endpoint.base.weight}: the base weight from discovery metadata;
 *   <li>{@code weighted.endpoint.penalty}: the sum of fired rule penalties;
 *   <li>{@code weighted.endpoint.state}: 0 healthy, 1 degraded, 2 isolated, 3 recovering,
 *       4 failing ({@link io.weighted.jni.EndpointState}; -1 for a state this version does not
 *       know);
 *   <li>{@code weighted.service.panic} (tag {@code service}): 1 while in panic round-robin;
 *   <li>with an error budget set (config {@code budget.max_error_rate}), per service:
 *       {@code weighted.service.error.budget} (the budget), {@code
 *       weighted.service.error.budget.observed} (the error rate over the budget's window),
 *       {@code weighted.service.error.budget.met} (1 while within it), {@code
 *       weighted.service.error.budget.limited} (1 while over it and no price meets it: at the
 *       highest price, or while the controller minimises errors) and {@code weighted.service.error.cost} (the price the picker puts on failures);
 *   <li>{@code weighted.endpoints}: endpoints known to the engine.
 * </ul>
 * A daemon thread reads the snapshot once per {@code refreshMillis}; gauges return the values
 * of the last read (a scrape never calls into the engine), and endpoints that appear or leave get
 * their gauges added or removed on that read, so they are there for the next scrape.
 */
public class WeightedMeterBinder implements MeterBinder, AutoCloseable {

  private final Engine engine;
  private final boolean enabled;
  private final long refreshMillis;
  private final Map<String, List<Meter>> metersByEndpoint = new ConcurrentHashMap<>();
  private final Map<String, Meter> panicMeters = new ConcurrentHashMap<>();
  private final Map<String, List<Meter>> budgetMeters = new ConcurrentHashMap<>();
  private volatile MeterRegistry registry;
  private volatile Map<String, Map<String, Object>> endpoints = Collections.emptyMap();
  private volatile Map<String, Boolean> panic = Collections.emptyMap();
  private volatile Map<String, Map<String, Object>> budgets = Collections.emptyMap();
  private volatile long readAtMillis = Long.MIN_VALUE;
  private ScheduledExecutorService refresher;

  public WeightedMeterBinder(Engine engine, boolean enabled) {
    this(engine, enabled, 1000);
  }

  public WeightedMeterBinder(Engine engine, boolean enabled, long refreshMillis) {
    this.engine = engine;
    this.enabled = enabled;
    this.refreshMillis = refreshMillis;
  }

  @Override
  public void bindTo(MeterRegistry registry) {
    if (!enabled) {
      return;
    }
    this.registry = registry;
    Gauge.builder("weighted.endpoints", this, b -> b.endpoints.size())
        .description("Endpoints known to the weighted engine").register(registry);
    refresh(true);
    synchronized (this) {
      if (refresher == null && refreshMillis > 0) {
        refresher = Executors.newSingleThreadScheduledExecutor(r -> {
          Thread t = new Thread(r, "weighted-metrics");
          t.setDaemon(true);
          return t;
        });
        refresher.scheduleWithFixedDelay(() -> {
          try {
            refresh(true);
          } catch (RuntimeException e) {
            // keep the last values; the next round tries again
          }
        }, refreshMillis, refreshMillis, TimeUnit.MILLISECONDS);
      }
    }
  }

  /** Stops the refresh thread (the application context calls it on shutdown). */
  @Override
  public synchronized void close() {
    if (refresher != null) {
      refresher.shutdownNow();
      refresher = null;
    }
  }

  /** Re-reads the snapshot (at most once per refresh period unless forced) and syncs meters. */
  public synchronized void refresh(boolean force) {
    long now = System.currentTimeMillis();
    if (!force && now - readAtMillis < refreshMillis) {
      return;
    }
    readAtMillis = now;
    if (engine.isClosed()) {
      return;
    }
    Map<String, Map<String, Object>> eps = new HashMap<>();
    Map<String, Boolean> panics = new HashMap<>();
    Map<String, Map<String, Object>> budgetsNow = new HashMap<>();
    try {
      Map<String, Object> doc = Json.parseObject(engine.snapshotJson());
      for (Object so : list(doc.get("services"))) {
        Map<String, Object> s = map(so);
        String service = String.valueOf(s.get("name"));
        panics.put(service, Boolean.TRUE.equals(s.get("panic")));
        if (s.get("budget") instanceof Map<?, ?>) {
          budgetsNow.put(service, map(s.get("budget")));
        }
        for (Object eo : list(s.get("endpoints"))) {
          Map<String, Object> e = map(eo);
          eps.put(service + "\u0000" + e.get("id"), e);
        }
      }
    } catch (IllegalStateException closed) {
      return;
    }
    endpoints = eps;
    panic = panics;
    budgets = budgetsNow;
    syncMeters(eps.keySet(), panics.keySet());
    syncBudgetMeters(budgetsNow.keySet());
  }

  private void syncMeters(Set<String> endpointKeys, Set<String> services) {
    MeterRegistry r = registry;
    if (r == null) {
      return;
    }
    for (String k : endpointKeys) {
      metersByEndpoint.computeIfAbsent(k, key -> register(r, key));
    }
    for (String k : new HashSet<>(metersByEndpoint.keySet())) {
      if (!endpointKeys.contains(k)) {
        for (Meter m : metersByEndpoint.remove(k)) {
          r.remove(m);
        }
      }
    }
    for (String s : services) {
      panicMeters.computeIfAbsent(s, svc -> Gauge.builder("weighted.service.panic", this,
          b -> Boolean.TRUE.equals(b.panic.get(svc)) ? 1 : 0)
          .tags("service", svc).description("1 while the service is in panic round-robin")
          .register(r));
    }
  }

  // Registered for a service once it has a budget; removed when a reload turns it off.
  private void syncBudgetMeters(Set<String> services) {
    MeterRegistry r = registry;
    if (r == null) {
      return;
    }
    for (String s : services) {
      budgetMeters.computeIfAbsent(s, svc -> {
        Tags tags = Tags.of("service", svc);
        List<Meter> meters = new ArrayList<>();
        meters.add(Gauge.builder("weighted.service.error.budget", this,
            b -> b.budgetNumber(svc, "max_error_rate")).tags(tags)
            .description("The service's error budget: the share of requests allowed to fail")
            .register(r));
        meters.add(Gauge.builder("weighted.service.error.budget.observed", this,
            b -> b.budgetNumber(svc, "observed_error_rate")).tags(tags)
            .description("Error rate over the budget's window as the last cycle ended")
            .register(r));
        meters.add(Gauge.builder("weighted.service.error.budget.met", this,
            b -> b.budgetFlag(svc, "met")).tags(tags)
            .description("1 while the observed error rate is within the budget").register(r));
        meters.add(Gauge.builder("weighted.service.error.budget.limited", this,
            b -> b.budgetFlag(svc, "limited")).tags(tags)
            .description("1 while over budget and no price meets it (at the highest price, or minimising errors)")
            .register(r));
        meters.add(Gauge.builder("weighted.service.error.cost", this,
            b -> b.budgetNumber(svc, "error_cost")).tags(tags)
            .description("The price the load-aware picker puts on failures").register(r));
        return meters;
      });
    }
    for (String s : new HashSet<>(budgetMeters.keySet())) {
      if (!services.contains(s)) {
        for (Meter m : budgetMeters.remove(s)) {
          r.remove(m);
        }
      }
    }
  }

  private double budgetNumber(String service, String field) {
    Map<String, Object> b = budgets.get(service);
    Object v = b == null ? null : b.get(field);
    return v instanceof Number n ? n.doubleValue() : Double.NaN;
  }

  private double budgetFlag(String service, String field) {
    Map<String, Object> b = budgets.get(service);
    Object v = b == null ? null : b.get(field);
    return v instanceof Boolean f ? (f ? 1 : 0) : Double.NaN;
  }

  private List<Meter> register(MeterRegistry r, String key) {
    int cut = key.indexOf('\u0000');
    Tags tags = Tags.of("service", key.substring(0, cut), "endpoint", key.substring(cut + 1));
    List<Meter> meters = new ArrayList<>();
    meters.add(Gauge.builder("weighted.endpoint.share", this, b -> b.share(key, "last_cycle"))
        .tags(tags).description("Share of the service's results in the last controller cycle")
        .register(r));
    meters.add(Gauge.builder("weighted.endpoint.expected.share", this,
            b -> b.share(key, "expected"))
        .tags(tags).description("Share of picks the current model expects in the next cycle")
        .register(r));
    meters.add(Gauge.builder("weighted.endpoint.weight", this, b -> b.number(key, "effective_weight"))
        .tags(tags).description("Scheduling weight after slow start and isolation: an input of "
            + "the pick; the split is weighted.endpoint.share").register(r));
    meters.add(Gauge.builder("weighted.endpoint.base.weight", this, b -> b.number(key, "base_weight"))
        .tags(tags).description("Base weight from discovery metadata").register(r));
    meters.add(Gauge.builder("weighted.endpoint.penalty", this, b -> b.number(key, "penalty"))
        .tags(tags).description("Sum of fired rule penalties").register(r));
    meters.add(Gauge.builder("weighted.endpoint.state", this, b -> b.state(key))
        .tags(tags).description("0 healthy, 1 degraded, 2 isolated, 3 recovering, 4 failing").register(r));
    return meters;
  }

  private double number(String key, String field) {
    Map<String, Object> e = endpoints.get(key);
    Object v = e == null ? null : e.get(field);
    return v instanceof Number n ? n.doubleValue() : Double.NaN;
  }

  private double share(String key, String field) {
    Map<String, Object> e = endpoints.get(key);
    Object v = e == null ? null : map(e.get("share")).get(field);
    return v instanceof Number n ? n.doubleValue() : Double.NaN;
  }

  private double state(String key) {
    Map<String, Object> e = endpoints.get(key);
    if (e == null) {
      return Double.NaN;
    }
    return EndpointState.fromLabel(String.valueOf(e.get("state"))).code();
  }

  private static List<?> list(Object o) {
    return o instanceof List<?> l ? l : List.of();
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> map(Object o) {
    return o instanceof Map ? (Map<String, Object>) o : Map.of();
  }
}
