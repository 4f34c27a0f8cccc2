package io.weighted.jni;

/**
 * A pick resolved to its endpoint's {@link EndpointTable.Entry}: filled by
 * {@link Service#pick(Picked)} or {@link EndpointTable#pick(Picked)}, finished by
 * {@link Service#complete(Picked, double, Outcome)} or {@link Service#cancel(Picked)}. One object
 * per pick; subclass it to carry state of your own with the pick, without a second allocation.
 * A caller that makes an object of its own per pick anyway (the Spring balancer, the Ribbon rule)
 * picks with {@link EndpointTable#pickWith(EndpointTable.Resolver)} instead and needs no Picked.
 *
 * <p>{@link #flags()} holds the {@link Pick} bits; {@link #ticket()} is the engine's (which
 * controller cycle counted a tracked pick): both go back to the engine as they came.
 */
public class Picked {
  EndpointTable.Entry<?> entry;
  long key;
  long epoch;
  int index;
  int flags;
  int ticket;

  public Picked() {}

  final void set(EndpointTable.Entry<?> entry, long key, long epoch, int index, int flags,
      int ticket) {
    this.entry = entry;
    this.key = key;
    this.epoch = epoch;
    this.index = index;
    this.flags = flags;
    this.ticket = ticket;
  }

  /**
   * Not a pick: an endpoint the caller chose itself (a fallback), with the entry's key, epoch and
   * index and no flags, so that its outcome can still be reported by key
   * ({@link Service#report(long, double, Outcome)}). Never complete or cancel it.
   */
  protected Picked(EndpointTable.Entry<?> entry) {
    this.entry = entry;
    this.key = entry.key();
    this.epoch = entry.epoch();
    this.index = entry.index();
  }

  /** The entry of the set the pick came from; null for a set registered without entries. */
  public final EndpointTable.Entry<?> entry() {
    return entry;
  }

  /** The caller's item for the endpoint, or null (see {@link #entry()}). */
  public final Object item() {
    EndpointTable.Entry<?> e = entry;
    return e == null ? null : e.item();
  }

  /** The endpoint's id, or null (see {@link #entry()}). */
  public final String id() {
    EndpointTable.Entry<?> e = entry;
    return e == null ? null : e.id();
  }

  public final long key() {
    return key;
  }

  public final long epoch() {
    return epoch;
  }

  public final int index() {
    return index;
  }

  public final int flags() {
    return flags;
  }

  public final int ticket() {
    return ticket;
  }

  public final boolean isProbe() {
    return (flags & Pick.PROBE) != 0;
  }

  public final boolean isPanic() {
    return (flags & Pick.PANIC) != 0;
  }

  public final boolean isTracked() {
    return (flags & Pick.TRACKED) != 0;
  }

  /** The same pick as a {@link Pick} value. */
  public final Pick toPick() {
    return new Pick(key, epoch, index, flags, ticket);
  }

  @Override
  public String toString() {
    return "Picked[" + (entry == null ? Long.toHexString(key) : entry.id()) + ", epoch " + epoch
        + (isProbe() ? ", probe" : "") + (isTracked() ? ", tracked" : "") + "]";
  }
}
