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
   * {@code config} with {@code "client_id"} added to its top-level {@code "subset"} object when
   * that object has none; any other text comes back unchanged, and the engine judges it (a
   * config that is not JSON is refused there, with its line and column). A scan of the text,
   * not a parse: the module carries no JSON library, and the engine's parser stays the one that
   * decides what the document means.
   */
  public static String inject(String config, String clientId) {
    int subset = -1;
    boolean hasId = false;
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
          if (depth == subsetDepth && s.equals("client_id")) {
            hasId = true;
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
    if (subset < 0 || hasId) {
      return config;
    }
    boolean empty = config.charAt(skipSpace(config, subset + 1)) == '}';
    String entry = "\"client_id\":" + quote(clientId) + (empty ? "" : ",");
    return config.substring(0, subset + 1) + entry + config.substring(subset + 1);
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
