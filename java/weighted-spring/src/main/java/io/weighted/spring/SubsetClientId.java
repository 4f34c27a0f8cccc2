package io.weighted.spring;

import java.net.InetAddress;
import java.net.UnknownHostException;
import org.springframework.core.env.Environment;

/**
 * This application's identity for subsetting ({@code subset.client_id} of the shared config,
 * which chooses the endpoints this client uses): {@code weighted.loadbalancer.client-id} when
 * set, else the instance id as Eureka forms it, {@code <hostname>:<application name>:<instance
 * id or port>}. The config's own {@code subset.client_id}, when it has one, wins.
 */
public final class SubsetClientId {
  private SubsetClientId() {}

  /** The client id from the environment's properties, as described above. */
  public static String of(Environment env) {
    String set = env.getProperty("weighted.loadbalancer.client-id");
    if (set != null && !set.isEmpty()) {
      return set;
    }
    String host = env.getProperty("spring.cloud.client.hostname");
    if (host == null) {
      try {
        host = InetAddress.getLocalHost().getHostName();
      } catch (UnknownHostException e) {
        host = "localhost";
      }
    }
    String app = env.getProperty("spring.application.name", "application");
    String instance = env.getProperty("spring.application.instance_id",
        env.getProperty("server.port", "8080"));
    return host + ":" + app + ":" + instance;
  }

  /**
   * This instance's place in its fleet for the deterministic aperture ({@code subset.client_index}
   * and {@code subset.client_count}): {@code weighted.loadbalancer.client-index} and
   * {@code weighted.loadbalancer.client-count} (or their environment variables,
   * {@code WEIGHTED_LOADBALANCER_CLIENT_INDEX}, ..., a StatefulSet's ordinal and replicas), or
   * null when neither is set. A value that is not a whole number, or a count without an index
   * (every instance would take place 0, and the same endpoints), is refused naming the property.
   */
  public static int[] placeOf(Environment env) {
    String index = env.getProperty("weighted.loadbalancer.client-index");
    String count = env.getProperty("weighted.loadbalancer.client-count");
    if (isBlank(index) && isBlank(count)) {
      return null;
    }
    if (isBlank(index)) {
      throw new IllegalArgumentException("weighted.loadbalancer.client-count is set but "
          + "weighted.loadbalancer.client-index is not: each instance needs its own place "
          + "(0 to count - 1), or every one would use the same endpoints");
    }
    if (isBlank(count)) {
      throw new IllegalArgumentException("weighted.loadbalancer.client-index is set but "
          + "weighted.loadbalancer.client-count is not: a place means something only with the "
          + "fleet's size");
    }
    return new int[] {whole("client-index", index), whole("client-count", count)};
  }

  private static boolean isBlank(String s) {
    return s == null || s.isBlank();
  }

  private static int whole(String name, String value) {
    String v = value.strip();
    if (!v.isEmpty() && v.chars().allMatch(c -> c >= '0' && c <= '9') && v.length() <= 9) {
      return Integer.parseInt(v);
    }
    throw new IllegalArgumentException("weighted.loadbalancer." + name + " \"" + value
        + "\" is not a whole number >= 0 (at most 999999999)");
  }

  /** {@link #inject(String, String, int[])} with the client id alone. */
  public static String inject(String config, String clientId) {
    return inject(config, clientId, null);
  }

  /**
   * {@code config} with {@code "client_id"} (when {@code clientId} is not null) and
   * {@code "client_index"} and {@code "client_count"} (when {@code place} is not null) added to
   * its top-level {@code "subset"} object where that object has none of its own; any other text
   * comes back unchanged, and the engine judges it (a config that is not JSON is refused there,
   * with its line and column). A scan of the text, not a parse: the module carries no JSON
   * library, and the engine's parser stays the one that decides what the document means.
   */
  public static String inject(String config, String clientId, int[] place) {
    int subset = -1;
    boolean hasId = false;
    boolean hasIndex = false;
    boolean hasCount = false;
    int depth = 0;
    int subsetDepth = -1;
    String lastKey = null;
    for (int i = 0; i < config.length(); i++) {
      char c = config.charAt(i);
      if (c == '"') {
        int end = endOfString(config, i);
        if (end < 0) {
          return config;
        }
        String s = config.substring(i + 1, end);
        int next = skipSpace(config, end + 1);
        if (next < config.length() && config.charAt(next) == ':') {
          lastKey = s;
          if (depth == subsetDepth) {
            hasId |= s.equals("client_id");
            hasIndex |= s.equals("client_index");
            hasCount |= s.equals("client_count");
          }
        }
        i = end;
      } else if (c == '{' || c == '[') {
        depth++;
        if (c == '{' && depth == 2 && "subset".equals(lastKey) && subset < 0) {
          subset = i;
          subsetDepth = depth;
        }
        lastKey = null;
      } else if (c == '}' || c == ']') {
        if (depth == subsetDepth && c == '}') {
          subsetDepth = -2;  // the subset object is closed: later keys are not its
        }
        depth--;
      } else if (c == ',') {
        lastKey = null;
      }
    }
    if (subset < 0) {
      return config;
    }
    StringBuilder entries = new StringBuilder();
    if (clientId != null && !hasId) {
      entries.append("\"client_id\":").append(quote(clientId)).append(',');
    }
    if (place != null && !hasIndex) {
      entries.append("\"client_index\":").append(place[0]).append(',');
    }
    if (place != null && !hasCount) {
      entries.append("\"client_count\":").append(place[1]).append(',');
    }
    if (entries.length() == 0) {
      return config;
    }
    if (config.charAt(skipSpace(config, subset + 1)) == '}') {
      entries.setLength(entries.length() - 1);  // the object was empty: no comma after the last
    }
    return config.substring(0, subset + 1) + entries + config.substring(subset + 1);
  }

  private static int endOfString(String s, int open) {
    for (int i = open + 1; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '\\') {
        i++;
      } else if (c == '"') {
        return i;
      }
    }
    return -1;
  }

  private static int skipSpace(String s, int i) {
    while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
      i++;
    }
    return i;
  }

  private static String quote(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      if (c == '"' || c == '\\') {
        b.append('\\').append(c);
      } else if (c < 0x20) {
        b.append(String.format("\\u%04x", (int) c));
      } else {
        b.append(c);
      }
    }
    return b.append('"').toString();
  }
}
