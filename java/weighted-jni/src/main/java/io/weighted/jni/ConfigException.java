package io.weighted.jni;

/** The config is not JSON (line and column), a key or value is wrong (JSON path), or a config file could not be read. */
public class ConfigException extends WeightedException {
  private static final long serialVersionUID = 1L;

  public ConfigException(int code, String message) {
    super(code, message);
  }
}
