package io.weighted.jni;

import java.util.AbstractList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * An endpoint set as the engine installed it: by pick index, the caller's item for each endpoint,
 * its id, base weight and the key the engine assigned, and the set's epoch. Immutable; returned by
 * {@link Service#setEndpoints(List, String[], double[])}.
 *
 * <p>The engine holds each {@link Entry} as its endpoint's user pointer (a JNI global reference)
 * for as long as a pick can still return it, and a pick ({@link #pickWith(Resolver)},
 * {@link #pick(Picked)}) answers with the entry of the set it was drawn from, even when another
 * thread has installed a newer set meanwhile. A table is therefore all a client keeps: no mirror
 * of the engine's set, no epoch bookkeeping, no lookup by id after a pick.
 *
 * @param <T> the caller's item type (a ServiceInstance, a Server, ...)
 */
public final class EndpointTable<T> {
  private final Service service;
  private final long epoch;
  private final Entry<T>[] entries;
  private final long[] keys;
  private volatile Map<String, Integer> byId;  // built on the first indexOf

  EndpointTable(Service service, long epoch, Entry<T>[] entries, long[] keys) {
    this.service = service;
    this.epoch = epoch;
    this.entries = entries;
    this.keys = keys;
  }

  /** One endpoint of a table: what a pick resolves to. */
  public static final class Entry<T> {
    private final T item;
    private final String id;
    private final double baseWeight;
    private final int index;
    // Written once by the JNI glue right after the engine installed the set; a pick that meets
    // the entry sooner carries its own key and epoch, so nothing waits for these.
    long key;
    long epoch;

    Entry(T item, String id, double baseWeight, int index) {
      this.item = item;
      this.id = id;
      this.baseWeight = baseWeight;
      this.index = index;
    }

    public T item() {
      return item;
    }

    public String id() {
      return id;
    }

    public double baseWeight() {
      return baseWeight;
    }

    /** The position in its set: {@link Pick#index()}. */
    public int index() {
      return index;
    }

    /**
     * The engine's key (for {@link Service#report(long, double, Outcome)}), once the
     * setEndpoints call that made this entry has returned (0 before: a pick that meets the entry
     * sooner carries its own key, {@link Picked#key()}).
     */
    public long key() {
      return key;
    }

    /** The epoch of the set this entry belongs to; like {@link #key()}, 0 until then. */
    public long epoch() {
      return epoch;
    }

    @Override
    public String toString() {
      return "Entry[" + id + " #" + index + " of epoch " + epoch + "]";
    }
  }

  public Service service() {
    return service;
  }

  /**
   * What a pick resolves to, given to {@link #pickWith(Resolver)}: the entry of the set the pick
   * was drawn from and the pick itself, to finish it with ({@link Service#complete(long, long,
   * int, int, int, double, int)}, {@link Service#cancel(long, long, int, int, int)}).
   *
   * @param <R> what the caller makes of it (its instance, its server)
   */
  @FunctionalInterface
  public interface Resolver<R> {
    /**
     * {@code epoch == table.epoch()} says the entry is this table's, {@code entry(index)}: the
     * common case. Otherwise it is of a set installed after (or before) this one, by this caller
     * or another; {@code key} and {@code epoch} are the pick's own even if the entry does not
     * know them yet. {@code entry} is null only for a set registered without entries, which no
     * Java caller makes.
     */
    R resolve(Entry<?> entry, long key, long epoch, int index, int flags, int ticket);
  }

  /**
   * Picks from whatever set of this table's service is installed and hands the entry of that set
   * and the pick to {@code resolver}, with nothing allocated on the way: one JNI call with
   * primitives only when the set is this table's, as it is until the caller registers another.
   * Throws {@link NoEndpointException} when the set is empty.
   */
  public <R> R pickWith(Resolver<R> resolver) {
    long r = service.pickPinned(epoch);
    if ((r & Service.OTHER) == 0) {
      int i = Service.packedIndex(r);
      return resolver.resolve(entries[i], keys[i], epoch, i, Service.packedFlags(r),
          Service.packedTicket(r));
    }
    long[] p = new long[4];
    Entry<?> e = Service.takeOther(p);
    return resolver.resolve(e, p[0], p[1], (int) p[2], (int) (p[2] >>> 32), (int) p[3]);
  }

  /** {@link #pickWith(Resolver)} into a {@link Picked}. */
  public <P extends Picked> P pick(P into) {
    return service.pick(into, this);
  }

  /** The epoch of this set ({@link Pick#epoch()} of the picks drawn from it). */
  public long epoch() {
    return epoch;
  }

  public int size() {
    return entries.length;
  }

  public Entry<T> entry(int index) {
    return entries[index];
  }

  public T item(int index) {
    return entries[index].item;
  }

  public String id(int index) {
    return entries[index].id;
  }

  public double baseWeight(int index) {
    return entries[index].baseWeight;
  }

  public long key(int index) {
    return keys[index];
  }

  /** Whether {@code entry} is one of this table's (a pick from this very set). */
  public boolean contains(Entry<?> entry) {
    int i = entry.index;
    return i < entries.length && entries[i] == entry;
  }

  /** The index of the endpoint with this id, or -1. */
  public int indexOf(String id) {
    Map<String, Integer> m = byId;
    if (m == null) {
      m = new HashMap<>(entries.length * 2);
      for (Entry<T> e : entries) {
        m.put(e.id, e.index);
      }
      byId = m;
    }
    Integer i = m.get(id);
    return i == null ? -1 : i;
  }

  /** The items by index, as a read-only view. */
  public List<T> items() {
    return new AbstractList<>() {
      @Override
      public T get(int index) {
        return entries[index].item;
      }

      @Override
      public int size() {
        return entries.length;
      }
    };
  }

  @Override
  public String toString() {
    StringBuilder b = new StringBuilder("EndpointTable[").append(service.name()).append(", epoch ")
        .append(epoch);
    for (Entry<T> e : entries) {
      b.append(", ").append(e.id);
    }
    return b.append(']').toString();
  }
}
