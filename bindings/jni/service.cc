// Natives of io.weighted.jni.Service. pickPinned0/complete0/reportKey0 are the hot path:
// primitives in, primitives out, no allocation, no string.
//
// Endpoint sets carry the Java EndpointTable.Entry of each endpoint as its spec's user pointer, so
// a pick answers with the entry of the very set it was drawn from (wt_service_pick_pinned). Each
// user pointer is a Slot: a JNI global reference to the entry, and the Registration of its set.
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "io_weighted_jni_Service.h"
#include "jni_util.h"

namespace {
wt_service* S(jlong p) { return reinterpret_cast<wt_service*>(p); }

struct Registration;

struct Slot {
  jobject entry = nullptr;  // global reference to the EndpointTable.Entry
  Registration* reg = nullptr;
  Slot* next = nullptr;     // in the released queue
};

// One set_endpoints call's entries. An entry learns its key and epoch only after the engine has
// installed the set, so a pick racing the installing call may meet an entry that does not know
// them yet: `published` tells the pick to hand over its own key and epoch then. `id` names the
// registration for the Java EndpointTable that holds its entries (never reused, unlike an
// address).
std::atomic<uint64_t> g_next_registration{1};

struct Registration {
  explicit Registration(size_t n) : slots(n), unreleased(n + 1) {}  // + the installing call
  const uint64_t id = g_next_registration.fetch_add(1, std::memory_order_relaxed);
  std::vector<Slot> slots;
  std::atomic<bool> published{false};
  std::atomic<size_t> unreleased;
};

void Unref(Registration* reg) {
  if (reg->unreleased.fetch_sub(1, std::memory_order_acq_rel) == 1) delete reg;
}

// A lock-free stack: release_user may run under the engine's locks, on a thread the JVM does not
// know, so it neither calls into the JVM nor allocates.
std::atomic<Slot*> g_released{nullptr};

void QueueReleased(void* user) {
  auto* slot = static_cast<Slot*>(user);
  Slot* head = g_released.load(std::memory_order_relaxed);
  do {
    slot->next = head;
  } while (!g_released.compare_exchange_weak(head, slot, std::memory_order_release,
                                             std::memory_order_relaxed));
}

wt_pick MakePick(jlong key, jlong epoch, jint index, jint flags, jint ticket) {
  wt_pick p = WT_PICK_INIT;
  p.key = static_cast<uint64_t>(key);
  p.epoch = static_cast<uint64_t>(epoch);
  p.index = static_cast<uint32_t>(index);
  p.flags = static_cast<uint32_t>(flags);
  p.ticket = static_cast<uint32_t>(ticket);
  return p;
}

// What a pick from the caller's own table returns, (ticket << 32) | (index << 8) | flags: every
// index fits (limits.max_endpoints_per_service is at most 1 000 000), and so do today's flags.
constexpr uint32_t kMaxPackedIndex = 0xffffff;
constexpr uint32_t kMaxPackedFlags = 0xff;

struct PinContext {
  JNIEnv* env;
  jobject into;
  uint64_t held;       // the registration of the table the caller holds (0: none)
  const wt_pick* pick;  // complete when pin runs: it pins pick->user
  bool held_hit = false;
  bool pinned = false;
  bool published = true;
};

// The set cannot be released while this runs. An entry of the table the caller holds needs no
// reference (the table holds it): the common case costs no call into the JVM. Any other entry is
// stored in the caller's Picked, which holds it from then on.
void PinEntry(void* ctx, void* user) {
  auto* c = static_cast<PinContext*>(ctx);
  auto* slot = static_cast<Slot*>(user);
  if (slot->reg->id == c->held && c->pick->index <= kMaxPackedIndex &&
      c->pick->flags <= kMaxPackedFlags) {
    c->held_hit = true;
    return;
  }
  c->env->SetObjectField(c->into, wtjni::g_picked_entry, slot->entry);
  c->pinned = true;
  c->published = slot->reg->published.load(std::memory_order_acquire);
}
}  // namespace

void wtjni::DeleteReleased(JNIEnv* env) {
  Slot* slot = g_released.exchange(nullptr, std::memory_order_acquire);
  while (slot != nullptr) {
    Slot* next = slot->next;
    env->DeleteGlobalRef(slot->entry);
    Unref(slot->reg);
    slot = next;
  }
}

JNIEXPORT jint JNICALL Java_io_weighted_jni_Service_setEndpoints0(
    JNIEnv* env, jclass, jlong service, jobjectArray ids, jdoubleArray weights,
    jobjectArray entries, jlongArray out_keys, jlongArray out_epoch_and_id) {
  const jsize n = env->GetArrayLength(ids);
  const size_t count = static_cast<size_t>(n);
  std::vector<std::string> id_storage(count);
  std::vector<double> w(count);
  if (n > 0) env->GetDoubleArrayRegion(weights, 0, n, w.data());
  for (jsize i = 0; i < n; ++i) {
    auto bytes = static_cast<jbyteArray>(env->GetObjectArrayElement(ids, i));
    bool ok = wtjni::CopyBytes(env, bytes, &id_storage[static_cast<size_t>(i)]);
    env->DeleteLocalRef(bytes);
    if (!ok) return wtjni::kJavaException;
  }
  auto* reg = new Registration(count);
  std::vector<wt_endpoint_spec> specs(count);
  for (size_t i = 0; i < count; ++i) {
    jobject entry = env->GetObjectArrayElement(entries, static_cast<jsize>(i));
    reg->slots[i].entry = entry == nullptr ? nullptr : env->NewGlobalRef(entry);
    reg->slots[i].reg = reg;
    env->DeleteLocalRef(entry);
    if (reg->slots[i].entry == nullptr) {  // out of memory (Java never passes a null entry)
      for (size_t k = 0; k < i; ++k) env->DeleteGlobalRef(reg->slots[k].entry);
      delete reg;
      return env->ExceptionCheck() ? wtjni::kJavaException : static_cast<jint>(WT_ERR_NO_MEMORY);
    }
    specs[i] = WT_ENDPOINT_SPEC_INIT;
    specs[i].id = id_storage[i].c_str();
    specs[i].base_weight = w[i];
    specs[i].user = &reg->slots[i];
  }
  wt_endpoints_options options = WT_ENDPOINTS_OPTIONS_INIT;
  options.release_user = QueueReleased;
  std::vector<uint64_t> keys(count);
  uint64_t epoch = 0;
  wt_status s = wt_service_set_endpoints(S(service), specs.data(), count, &options, keys.data(),
                                         &epoch);
  if (s != WT_OK) {  // the engine kept none of the user pointers
    for (Slot& slot : reg->slots) env->DeleteGlobalRef(slot.entry);
    delete reg;
    return s;
  }
  // The set is live and picks may already return its entries; they read key and epoch from the
  // pick itself until `published` says the entries know them.
  // Local references: another thread may replace and release the set meanwhile, deleting the
  // slots' global ones.
  for (size_t i = 0; i < count; ++i) {
    jobject entry = env->GetObjectArrayElement(entries, static_cast<jsize>(i));
    env->SetLongField(entry, wtjni::g_entry_key, static_cast<jlong>(keys[i]));
    env->SetLongField(entry, wtjni::g_entry_epoch, static_cast<jlong>(epoch));
    env->DeleteLocalRef(entry);
  }
  reg->published.store(true, std::memory_order_release);
  const jlong epoch_and_id[2] = {static_cast<jlong>(epoch), static_cast<jlong>(reg->id)};
  Unref(reg);  // the installing call's hold: from here the slots keep it
  wtjni::DeleteReleased(env);
  if (n > 0) {
    env->SetLongArrayRegion(out_keys, 0, n, reinterpret_cast<const jlong*>(keys.data()));
  }
  env->SetLongArrayRegion(out_epoch_and_id, 0, 2, epoch_and_id);
  return env->ExceptionCheck() ? wtjni::kJavaException : static_cast<jint>(WT_OK);
}

JNIEXPORT jint JNICALL Java_io_weighted_jni_Service_remove0(JNIEnv* env, jclass, jlong service) {
  wt_status s = wt_service_remove(S(service));
  wtjni::DeleteReleased(env);
  return s;
}

JNIEXPORT jint JNICALL Java_io_weighted_jni_Service_endpointKey0(JNIEnv* env, jclass,
                                                                 jlong service, jbyteArray id,
                                                                 jlongArray out) {
  std::string i;
  if (!wtjni::CopyBytes(env, id, &i)) return wtjni::kJavaException;
  uint64_t key = 0;
  wt_status s = wt_service_endpoint_key(S(service), i.c_str(), &key);
  if (s != WT_OK) return s;
  return wtjni::StoreLong(env, out, static_cast<jlong>(key));
}

JNIEXPORT jint JNICALL Java_io_weighted_jni_Service_endpointId0(JNIEnv* env, jclass,
                                                                jlong service, jlong key,
                                                                jobjectArray out) {
  char buf[wtjni::kMaxIdBytes + 1];
  size_t len = 0;
  wt_status s = wt_service_endpoint_id(S(service), static_cast<uint64_t>(key), buf, sizeof buf,
                                       &len);
  if (s != WT_OK) return s;
  jbyteArray bytes = wtjni::NewBytes(env, buf, len);
  if (env->ExceptionCheck()) return wtjni::kJavaException;
  return wtjni::StoreFirst(env, out, bytes);
}

// The plain pick, for callers that map picks themselves: key, epoch, (flags << 32) | index and
// the ticket into out[0..3].
JNIEXPORT jint JNICALL Java_io_weighted_jni_Service_pick0(JNIEnv* env, jclass, jlong service,
                                                          jlongArray out) {
  wt_pick p = WT_PICK_INIT;
  wt_status s = wt_service_pick(S(service), &p);
  if (s != WT_OK) return s;
  const jlong packed[4] = {static_cast<jlong>(p.key), static_cast<jlong>(p.epoch),
                           static_cast<jlong>((static_cast<uint64_t>(p.flags) << 32) | p.index),
                           static_cast<jlong>(p.ticket)};
  env->SetLongArrayRegion(out, 0, 4, packed);
  return WT_OK;
}

// The pick resolved to its EndpointTable.Entry (Service.pick spells out the cases):
//  - an entry of the table the caller holds (registration `held`): nothing is written back, the
//    return is (ticket << 32) | (index << 8) | flags;
//  - any other entry: stored in `into` while the set cannot be released; returns
//    (ticket << 32) | flags, and `into` gets the pick's key, epoch and index too if the entry is
//    not published yet (or when the set has no entries, which no Java caller makes);
//  - a failure: `into`'s status is set and 0 returned.
JNIEXPORT jlong JNICALL Java_io_weighted_jni_Service_pickPinned0(JNIEnv* env, jclass,
                                                                 jlong service, jlong held,
                                                                 jobject into) {
  wt_pick p = WT_PICK_INIT;
  PinContext ctx{env, into, static_cast<uint64_t>(held), &p};
  wt_status s = wt_service_pick_pinned(S(service), &p, PinEntry, &ctx);
  if (s != WT_OK) {
    env->SetIntField(into, wtjni::g_picked_status, s);
    return 0;
  }
  if (ctx.held_hit) [[likely]] {
    return static_cast<jlong>((static_cast<uint64_t>(p.ticket) << 32) |
                              (static_cast<uint64_t>(p.index) << 8) | p.flags);
  }
  if (!ctx.pinned || !ctx.published) [[unlikely]] {
    env->SetLongField(into, wtjni::g_picked_key, static_cast<jlong>(p.key));
    env->SetLongField(into, wtjni::g_picked_epoch, static_cast<jlong>(p.epoch));
    env->SetIntField(into, wtjni::g_picked_index, static_cast<jint>(p.index));
  }
  return static_cast<jlong>((static_cast<uint64_t>(p.ticket) << 32) | p.flags);
}

JNIEXPORT jint JNICALL Java_io_weighted_jni_Service_complete0(JNIEnv*, jclass, jlong service,
                                                              jlong key, jlong epoch, jint index,
                                                              jint flags, jint ticket,
                                                              jdouble latency_ms, jint outcome) {
  const wt_pick p = MakePick(key, epoch, index, flags, ticket);
  return wt_service_complete(S(service), &p, latency_ms, outcome);
}

JNIEXPORT jint JNICALL Java_io_weighted_jni_Service_cancel0(JNIEnv*, jclass, jlong service,
                                                            jlong key, jlong epoch, jint index,
                                                            jint flags, jint ticket) {
  const wt_pick p = MakePick(key, epoch, index, flags, ticket);
  return wt_service_cancel(S(service), &p);
}

JNIEXPORT jint JNICALL Java_io_weighted_jni_Service_reportKey0(JNIEnv*, jclass, jlong service,
                                                               jlong key, jdouble latency_ms,
                                                               jint outcome) {
  return wt_service_report_key(S(service), static_cast<uint64_t>(key), latency_ms, outcome);
}

JNIEXPORT jint JNICALL Java_io_weighted_jni_Service_report0(JNIEnv* env, jclass, jlong service,
                                                            jbyteArray id, jdouble latency_ms,
                                                            jint outcome) {
  std::string i;
  if (!wtjni::CopyBytes(env, id, &i)) return wtjni::kJavaException;
  return wt_service_report(S(service), i.c_str(), latency_ms, outcome);
}

JNIEXPORT jint JNICALL Java_io_weighted_jni_Service_reportBatch0(JNIEnv* env, jclass,
                                                                 jlong service, jlongArray keys,
                                                                 jdoubleArray latencies,
                                                                 jintArray outcomes,
                                                                 jintArray statuses,
                                                                 jlongArray recorded) {
  const jsize n = env->GetArrayLength(keys);
  std::vector<jlong> k(static_cast<size_t>(n));
  std::vector<jdouble> l(static_cast<size_t>(n));
  std::vector<jint> o(static_cast<size_t>(n));
  if (n > 0) {
    env->GetLongArrayRegion(keys, 0, n, k.data());
    env->GetDoubleArrayRegion(latencies, 0, n, l.data());
    env->GetIntArrayRegion(outcomes, 0, n, o.data());
  }
  std::vector<wt_report> reports(static_cast<size_t>(n), wt_report WT_REPORT_INIT);
  for (size_t i = 0; i < reports.size(); ++i) {
    reports[i].key = static_cast<uint64_t>(k[i]);
    reports[i].latency_ms = l[i];
    reports[i].outcome = o[i];
  }
  size_t done = 0;
  wt_status s = wt_service_report_batch(S(service), reports.data(), static_cast<size_t>(n), &done);
  std::vector<jint> st(static_cast<size_t>(n));
  for (size_t i = 0; i < reports.size(); ++i) st[i] = reports[i].status;
  if (n > 0) env->SetIntArrayRegion(statuses, 0, n, st.data());
  jint r = wtjni::StoreLong(env, recorded, static_cast<jlong>(done));
  return r != WT_OK ? r : s;
}

JNIEXPORT jint JNICALL Java_io_weighted_jni_Service_reportResources0(
    JNIEnv* env, jclass, jlong service, jbyteArray id, jint present, jdouble cpu, jdouble memory,
    jdouble thread_pool, jdouble connection_pool) {
  std::string i;
  if (!wtjni::CopyBytes(env, id, &i)) return wtjni::kJavaException;
  wt_resources r = WT_RESOURCES_INIT;
  r.present = static_cast<uint32_t>(present);
  r.cpu = cpu;
  r.memory = memory;
  r.thread_pool = thread_pool;
  r.connection_pool = connection_pool;
  return wt_service_report_resources(S(service), i.c_str(), &r);
}
