package io.weighted.spring;

import java.util.Map;
import java.util.Objects;
import org.springframework.cloud.client.ServiceInstance;

/** How a discovered instance becomes an engine endpoint: its id and its base weight. */
public final class Endpoints {
  /** Metadata key for the base weight (any positive decimal). */
  public static final String WEIGHT = "weight";
  /** Nacos publishes its instance weight here, as a decimal (e.g. "1.0"). */
  public static final String NACOS_WEIGHT = "nacos.weight";

  private Endpoints() {}

  /** "host:port": unique within a service, readable in metrics, the same in every binding. */
  public static String id(ServiceInstance instance) {
    return instance.getHost() + ":" + instance.getPort();
  }

  /**
   * The base weight from metadata {@code weight}, else {@code nacos.weight}, else 1. A value that
   * is not a finite number is ignored (1 is used); 0 or less means "send nothing" and the instance
   * is left out of the endpoint set, as Nacos does with weight 0.
   */
  public static double baseWeight(ServiceInstance instance) {
    Map<String, String> md = instance.getMetadata();
    if (md == null || md.isEmpty()) {
      return 1.0;
    }
    Double w = parse(md.get(WEIGHT));
    if (w == null) {
      w = parse(md.get(NACOS_WEIGHT));
    }
    return w == null ? 1.0 : w;
  }

  /** Whether two instances carry the same weight metadata (compared as text, not parsed). */
  static boolean sameWeightMetadata(ServiceInstance a, ServiceInstance b) {
    Map<String, String> x = a.getMetadata();
    Map<String, String> y = b.getMetadata();
    if (x == y) {
      return true;
    }
    return Objects.equals(get(x, WEIGHT), get(y, WEIGHT))
        && Objects.equals(get(x, NACOS_WEIGHT), get(y, NACOS_WEIGHT));
  }

  /**
   * The weight metadata as text ({@code weight}, a separator, {@code nacos.weight}), to tell
   * later whether an instance's own metadata map changed; null when it has neither.
   */
  static String weightMetadata(ServiceInstance instance) {
    ServiceInstance i = WeightedServiceInstance.unwrap(instance);
    Map<String, String> md = i.getMetadata();
    if (md == null || md.isEmpty()) {
      return null;
    }
    String w = md.get(WEIGHT);
    String n = md.get(NACOS_WEIGHT);
    return w == null && n == null ? null : w + "\u0000" + n;
  }

  private static String get(Map<String, String> md, String key) {
    return md == null ? null : md.get(key);
  }

  private static Double parse(String s) {
    if (s == null || s.isBlank()) {
      return null;
    }
    try {
      double d = Double.parseDouble(s.trim());
      return Double.isFinite(d) ? d : null;
    } catch (NumberFormatException e) {
      return null;
    }
  }
}
