package io.weighted.jni;

/**
 * A resource sample for one endpoint ({@code wt_resources}): fractions in [0, 1]; NaN means
 * "not sampled" and is not sent.
 */
public record Resources(double cpu, double memory, double threadPool, double connectionPool) {
  static final int CPU = 1;
  static final int MEMORY = 1 << 1;
  static final int THREAD_POOL = 1 << 2;
  static final int CONNECTION_POOL = 1 << 3;

  public static Resources cpu(double cpu) {
    return new Resources(cpu, Double.NaN, Double.NaN, Double.NaN);
  }

  int presentBits() {
    return (Double.isNaN(cpu) ? 0 : CPU) | (Double.isNaN(memory) ? 0 : MEMORY)
        | (Double.isNaN(threadPool) ? 0 : THREAD_POOL)
        | (Double.isNaN(connectionPool) ? 0 : CONNECTION_POOL);
  }
}
