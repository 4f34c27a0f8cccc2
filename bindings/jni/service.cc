// Natives of io.weighted.jni.Service. pickPinned0/complete0/reportKey0 are the hot path:
// primitives in, primitives out, no allocation, no string.
//
// Endpoint sets carry the Java EndpointTable.Entry of each endpoint as its spec's user pointer, so
// a pick answers with the entry of the very set it was drawn from (wt_service_pick_pinned). Each
// user pointer is a Slot holding a JNI global reference to the entry.
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "io_weighted_jni_Service.h"
#include "jni_util.h"

namespace {
wt_service* S(jlong p) { return reinterpret_cast<wt_service*>(p); }

struct Slot {
  jobject entry = nullptr;  // global reference to the EndpointTable.Entry
  Slot* next = nullptr;     // in the released queue
};

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

void DeleteSlots(JNIEnv* env, std::vector<Slot*>& slots) {
  for (Slot* slot : slots) {
    env->DeleteGlobalRef(slot->entry);
    delete slot;
  }
  slots.clear();
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

// pickPinned0's answer, never negative (Service.java reads the same layout):
//   bits  0..31  ticket     bits 32..55  index     bits 56..61  flags
//   bit  62      kOther: not a pick from the caller's table, the other bits are 0, and
//                takeOther0 hands over the entry and the whole pick.
// Every index fits (limits.max_endpoints_per_service is at most 1 000 000), and so do today's
// flags; a pick that does not fit takes the other way rather than lose bits.
constexpr uint64_t kOther = uint64_t{1} << 62;
constexpr uint32_t kMaxPackedIndex = 0xffffff;
constexpr uint32_t kMaxPackedFlags = 0x3f;

bool FromHeld(const wt_pick& p, uint64_t held) {
  return p.epoch == held && p.index <= kMaxPackedIndex && p.flags <= kMaxPackedFlags;
}

// A pick that is not from the caller's table, waiting for this thread's takeOther0 (the Java
// side calls it right after pickPinned0 says kOther). The global reference keeps the entry
// alive across the gap, when another thread may release its set.
thread_local jobject t_other_entry = nullptr;
thread_local wt_pick t_other_pick;

struct PinContext {
  JNIEnv* env;
  uint64_t held;        // the epoch of the table the caller holds (0: none; epochs start at 1)
  const wt_pick* pick;  // complete when pin runs (weighted.h)
  jobject other = nullptr;
  bool pinned = false;
};

// The set cannot be released while this runs. An entry of the table the caller holds needs no
// reference (the table holds it) and is known by the pick's epoch alone, so the common case
// reads nothing but the pick; any other entry gets a global reference.
void PinEntry(void* ctx, void* user) {
  auto* c = static_cast<PinContext*>(ctx);
  if (FromHeld(*c->pick, c->held)) [[likely]] return;
  c->other = c->env->NewGlobalRef(static_cast<Slot*>(user)->entry);
  c->pinned = true;
}

// The one place a failed status becomes an exception is Java's NativeLibrary.checkCall: the
// exception it throws is pending when the native returns, so no return value has to mean
// "failed".
void ThrowStatus(JNIEnv* env, wt_status s) {
  env->CallStaticVoidMethod(wtjni::g_native_library_class, wtjni::g_check_call,
                            static_cast<jint>(s));
}
}  // namespace

void wtjni::DeleteReleased(JNIEnv* env) {
  Slot* slot = g_released.exchange(nullptr, std::memory_order_acquire);
  while (slot != nullptr) {
    Slot* next = slot->next;
    env->DeleteGlobalRef(slot->entry);
    delete slot;
    slot = next;
  }
}

// `installed` (null outside tests) runs once the set is live and before its entries learn their
// keys and epoch: the window in which a pick must carry its own.
JNIEXPORT jint JNICALL Java_io_weighted_jni_Service_setEndpoints0(
    JNIEnv* env, jclass, jlong service, jobjectArray ids, jdoubleArray weights,
    jobjectArray entries, jlongArray out_keys, jlongArray out_epoch, jobject installed) {
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
  std::vector<Slot*> slots;
  slots.reserve(count);
  std::vector<wt_endpoint_spec> specs(count);
  for (size_t i = 0; i < count; ++i) {
    jobject entry = env->GetObjectArrayElement(entries, static_cast<jsize>(i));
    jobject global = entry == nullptr ? nullptr : env->NewGlobalRef(entry);
    env->DeleteLocalRef(entry);
    if (global == nullptr) {  // out of memory (Java never passes a null entry)
      DeleteSlots(env, slots);
      return env->ExceptionCheck() ? wtjni::kJavaException : static_cast<jint>(WT_ERR_NO_MEMORY);
    }
    slots.push_back(new Slot{global});
    specs[i] = WT_ENDPOINT_SPEC_INIT;
    specs[i].id = id_storage[i].c_str();
    specs[i].base_weight = w[i];
    specs[i].user = slots.back();
  }
  wt_endpoints_options options = WT_ENDPOINTS_OPTIONS_INIT;
  options.release_user = QueueReleased;
  std::vector<uint64_t> keys(count);
  uint64_t epoch = 0;
  wt_status s = wt_service_set_endpoints(S(service), specs.data(), count, &options, keys.data(),
                                         &epoch);
  if (s != WT_OK) {  // the engine kept none of the user pointers
    DeleteSlots(env, slots);
    return s;
  }
  // From here the engine owns the slots: another thread may replace and release the set at any
  // time, so only the Java array's references are used below.
  jthrowable hook_failure = nullptr;
  if (installed != nullptr) {
    jclass cls = env->GetObjectClass(installed);
    env->CallVoidMethod(installed, env->GetMethodID(cls, "run", "()V"));
    env->DeleteLocalRef(cls);
    hook_failure = env->ExceptionOccurred();
    env->ExceptionClear();  // the entries must still learn their keys
  }
  for (size_t i = 0; i < count; ++i) {
    jobject entry = env->GetObjectArrayElement(entries, static_cast<jsize>(i));
    env->SetLongField(entry, wtjni::g_entry_key, static_cast<jlong>(keys[i]));
    env->SetLongField(entry, wtjni::g_entry_epoch, static_cast<jlong>(epoch));
    env->DeleteLocalRef(entry);
  }
  wtjni::DeleteReleased(env);
  if (n > 0) {
    env->SetLongArrayRegion(out_keys, 0, n, reinterpret_cast<const jlong*>(keys.data()));
  }
  const jlong e = static_cast<jlong>(epoch);
  env->SetLongArrayRegion(out_epoch, 0, 1, &e);
  if (hook_failure != nullptr) env->Throw(hook_failure);
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

// The pick resolved to its EndpointTable.Entry. A pick from the table the caller holds (its
// epoch `held`) is the answer itself (see kOther). Any other, or one whose entry could not be
// referenced, waits for takeOther0 on this thread. A failure throws (ThrowStatus) and returns 0,
// which Java never reads.
JNIEXPORT jlong JNICALL Java_io_weighted_jni_Service_pickPinned0(JNIEnv* env, jclass,
                                                                 jlong service, jlong held) {
  wt_pick p = WT_PICK_INIT;
  PinContext ctx{env, static_cast<uint64_t>(held), &p};
  wt_status s = wt_service_pick_pinned(S(service), &p, PinEntry, &ctx);
  if (s != WT_OK) [[unlikely]] {
    ThrowStatus(env, s);
    return 0;
  }
  if (FromHeld(p, ctx.held)) [[likely]] {
    return static_cast<jlong>((static_cast<uint64_t>(p.flags) << 56) |
                              (static_cast<uint64_t>(p.index) << 32) | p.ticket);
  }
  if (ctx.pinned && ctx.other == nullptr) {  // NewGlobalRef found no memory: never half a pick
    if (p.flags & WT_PICK_TRACKED) wt_service_cancel(S(service), &p);
    if (!env->ExceptionCheck()) ThrowStatus(env, WT_ERR_NO_MEMORY);
    return 0;
  }
  // A take that never came (an asynchronous exception between the two calls) frees its entry.
  if (t_other_entry != nullptr) env->DeleteGlobalRef(t_other_entry);
  t_other_entry = ctx.other;
  t_other_pick = p;
  return static_cast<jlong>(kOther);
}

// The pick pickPinned0 left for this thread: its entry as a local reference (null only for a
// set registered without entries, which no Java caller makes), and key, epoch,
// (flags << 32) | index and the ticket into out[0..3]. The pick's own key and epoch, since the
// entry may not know them yet (its set's installing call may still be returning).
JNIEXPORT jobject JNICALL Java_io_weighted_jni_Service_takeOther0(JNIEnv* env, jclass,
                                                                  jlongArray out) {
  const wt_pick& p = t_other_pick;
  const jlong packed[4] = {static_cast<jlong>(p.key), static_cast<jlong>(p.epoch),
                           static_cast<jlong>((static_cast<uint64_t>(p.flags) << 32) | p.index),
                           static_cast<jlong>(p.ticket)};
  env->SetLongArrayRegion(out, 0, 4, packed);
  jobject global = t_other_entry;
  t_other_entry = nullptr;
  if (global == nullptr) return nullptr;
  jobject local = env->NewLocalRef(global);
  env->DeleteGlobalRef(global);
  return local;
}

JNIEXPORT jint JNICALL Java_io_weighted_jni_Service_complete0(JNIEnv*, jclass, jlong service,
                                                              jlong key, jlong epoch, jint index,
                                                              jint flags, jint ticket,
                                                              jdouble latency_ms, jint outcome) {
  const wt_pick p = MakePick(key, epoch, index, flags, ticket);
  return wt_service_complete(S(service), &p, latency_ms, outcome);
}

// The header crosses as bytes, copied to the stack: the engine refuses a report over 4096
// bytes anyway, and a longer one is copied to the heap only to get its precise error.
namespace {
template <typename Fn>
jint WithHeader(JNIEnv* env, jbyteArray header, Fn&& fn) {
  const jsize n = header == nullptr ? 0 : env->GetArrayLength(header);
  char small[4096];
  std::string big;
  char* data = small;
  if (n > static_cast<jsize>(sizeof small)) {
    big.resize(static_cast<size_t>(n));
    data = big.data();
  }
  if (n > 0) env->GetByteArrayRegion(header, 0, n, reinterpret_cast<jbyte*>(data));
  if (env->ExceptionCheck()) return wtjni::kJavaException;
  return fn(n > 0 ? data : nullptr, static_cast<size_t>(n));
}
}  // namespace

JNIEXPORT jint JNICALL Java_io_weighted_jni_Service_completeWithLoad0(
    JNIEnv* env, jclass, jlong service, jlong key, jlong epoch, jint index, jint flags,
    jint ticket, jdouble latency_ms, jint outcome, jbyteArray header) {
  const wt_pick p = MakePick(key, epoch, index, flags, ticket);
  return WithHeader(env, header, [&](const char* h, size_t len) {
    return wt_service_complete_with_load(S(service), &p, latency_ms, outcome, h, len);
  });
}

JNIEXPORT jint JNICALL Java_io_weighted_jni_Service_reportLoadKey0(JNIEnv* env, jclass,
                                                                   jlong service, jlong key,
                                                                   jbyteArray header) {
  return WithHeader(env, header, [&](const char* h, size_t len) {
    return wt_service_report_load_key(S(service), static_cast<uint64_t>(key), h, len);
  });
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
