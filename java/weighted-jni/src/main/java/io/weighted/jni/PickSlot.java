package io.weighted.jni;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The calling thread's reusable pick result ({@link Service#pickToSlot()}): the native pick
 * writes key, epoch and {@code (flags << 32) | index} into this thread's small direct buffer, so
 * a pick neither allocates nor makes a JNI array call (SetLongArrayRegion cost about a third of
 * a pick through JNI). A slot belongs to one thread and is overwritten by that thread's next
 * {@code pickToSlot()}: read what you need at once, or keep {@link #toPick()}.
 *
 * <p>Virtual threads get a fresh slot per pick instead (a buffer per virtual thread would cost
 * far more than it saves).
 */
public final class PickSlot {
  private static final ThreadLocal<PickSlot> LOCAL = ThreadLocal.withInitial(PickSlot::new);
  private static final MethodHandle IS_VIRTUAL = isVirtualHandle();

  private final ByteBuffer buffer;  // null for a one-off slot
  final long address;
  private long key;
  private long epoch;
  private long packed;

  private PickSlot() {
    buffer = ByteBuffer.allocateDirect(3 * Long.BYTES).order(ByteOrder.nativeOrder());
    address = Service.bufferAddress(buffer);
  }

  PickSlot(long[] packedPick) {
    buffer = null;
    address = 0;
    set(packedPick[0], packedPick[1], packedPick[2]);
  }

  /** This thread's slot; null on a virtual thread. */
  static PickSlot local() {
    return IS_VIRTUAL != null && isVirtual(Thread.currentThread()) ? null : LOCAL.get();
  }

  /** Reads back what the native pick wrote into the buffer. */
  void load() {
    set(buffer.getLong(0), buffer.getLong(Long.BYTES), buffer.getLong(2 * Long.BYTES));
  }

  private void set(long key, long epoch, long packed) {
    this.key = key;
    this.epoch = epoch;
    this.packed = packed;
  }

  public long key() {
    return key;
  }

  public long epoch() {
    return epoch;
  }

  public int index() {
    return (int) packed;
  }

  public int flags() {
    return (int) (packed >>> 32);
  }

  /** An immutable copy. */
  public Pick toPick() {
    return new Pick(key, epoch, index(), flags());
  }

  @Override
  public String toString() {
    return "PickSlot[key=" + key + ", epoch=" + epoch + ", index=" + index() + ", flags="
        + flags() + "]";
  }

  private static boolean isVirtual(Thread t) {
    try {
      return (boolean) IS_VIRTUAL.invokeExact(t);
    } catch (Throwable e) {
      return false;
    }
  }

  /** {@code Thread.isVirtual()} on Java 21 and later; null on 17. */
  private static MethodHandle isVirtualHandle() {
    try {
      return MethodHandles.publicLookup().findVirtual(Thread.class, "isVirtual",
          MethodType.methodType(boolean.class));
    } catch (ReflectiveOperationException e) {
      return null;
    }
  }
}
