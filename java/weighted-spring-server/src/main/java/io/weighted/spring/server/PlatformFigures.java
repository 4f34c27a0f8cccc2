package io.weighted.spring.server;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryUsage;

/** The JVM's own figures: process CPU over the CPUs it may use, heap used over its maximum. */
final class PlatformFigures {
  private PlatformFigures() {}

  static LoadSampler.Figure processCpu() {
    if (ManagementFactory.getOperatingSystemMXBean()
        instanceof com.sun.management.OperatingSystemMXBean os) {
      return () -> {
        double v = os.getProcessCpuLoad();  // negative until the first measurement
        return v < 0 ? Double.NaN : Math.min(1, v);
      };
    }
    return () -> Double.NaN;
  }

  static LoadSampler.Figure heap() {
    var memory = ManagementFactory.getMemoryMXBean();
    return () -> {
      MemoryUsage u = memory.getHeapMemoryUsage();
      long max = u.getMax() > 0 ? u.getMax() : u.getCommitted();
      return max > 0 ? Math.min(1, u.getUsed() / (double) max) : Double.NaN;
    };
  }
}
