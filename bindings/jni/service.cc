// Natives of io.weighted.jni.Service. pick0/complete0/reportKey0 are the hot path: primitives
// in, primitives out, no allocation, no string.
#include <cstdint>
#include <string>
#include <vector>

#include "io_weighted_jni_Service.h"
#include "jni_util.h"

namespace {
wt_service* S(jlong p) { return reinterpret_cast<wt_service*>(p); }

wt_pick MakePick(jlong key, jlong epoch, jint index, jint flags) {
  wt_pick p{};
  p.key = static_cast<uint64_t>(key);
  p.epoch = static_cast<uint64_t>(epoch);
  p.index = static_cast<uint32_t>(index);
  p.flags = static_cast<uint32_t>(flags);
  return p;
}
}  // namespace

JNIEXPORT jint JNICALL Java_io_weighted_jni_Service_setEndpoints0(JNIEnv* env, jclass,
                                                                  jlong service, jobjectArray ids,
                                                                  jdoubleArray weights,
                                                                  jlongArray out_epoch) {
  const jsize n = env->GetArrayLength(ids);
  std::vector<std::string> id_storage(static_cast<size_t>(n));
  std::vector<double> w(static_cast<size_t>(n));
  if (n > 0) env->GetDoubleArrayRegion(weights, 0, n, w.data());
  for (jsize i = 0; i < n; ++i) {
    auto bytes = static_cast<jbyteArray>(env->GetObjectArrayElement(ids, i));
    bool ok = wtjni::CopyBytes(env, bytes, &id_storage[static_cast<size_t>(i)]);
    env->DeleteLocalRef(bytes);
    if (!ok) return wtjni::kJavaException;
  }
  std::vector<wt_endpoint_spec> specs(static_cast<size_t>(n));
  for (jsize i = 0; i < n; ++i) {
    specs[static_cast<size_t>(i)].id = id_storage[static_cast<size_t>(i)].c_str();
    specs[static_cast<size_t>(i)].base_weight = w[static_cast<size_t>(i)];
  }
  wt_endpoint_spec none{};  // a valid pointer for an empty set
  uint64_t epoch = 0;
  wt_status s = wt_service_set_endpoints_epoch(S(service), n > 0 ? specs.data() : &none,
                                               static_cast<size_t>(n), &epoch);
  if (s != WT_OK) return s;
  const jlong e = static_cast<jlong>(epoch);
  env->SetLongArrayRegion(out_epoch, 0, 1, &e);
  return WT_OK;
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
  char buf[272];
  size_t len = 0;
  wt_status s = wt_service_endpoint_id(S(service), static_cast<uint64_t>(key), buf, sizeof buf,
                                       &len);
  if (s == WT_ERR_INVALID_ARGUMENT && len >= sizeof buf) {  // longer than ids may be; retry
    std::string big(len + 1, '\0');
    s = wt_service_endpoint_id(S(service), static_cast<uint64_t>(key), big.data(), big.size(),
                               &len);
    if (s != WT_OK) return s;
    return wtjni::StoreFirst(env, out, wtjni::NewBytes(env, big.data(), len));
  }
  if (s != WT_OK) return s;
  jbyteArray bytes = wtjni::NewBytes(env, buf, len);
  if (env->ExceptionCheck()) return wtjni::kJavaException;
  return wtjni::StoreFirst(env, out, bytes);
}

JNIEXPORT jint JNICALL Java_io_weighted_jni_Service_pick0(JNIEnv* env, jclass, jlong service,
                                                          jlongArray out) {
  wt_pick p;
  wt_status s = wt_service_pick(S(service), &p);
  if (s != WT_OK) return s;
  const jlong packed[3] = {
      static_cast<jlong>(p.key), static_cast<jlong>(p.epoch),
      static_cast<jlong>((static_cast<uint64_t>(p.flags) << 32) | p.index)};
  env->SetLongArrayRegion(out, 0, 3, packed);
  return WT_OK;
}

// The pick for callers that know which endpoint set they registered (Spring, Ribbon): returns
// (flags << 32) | index, a JNI call with primitives only and no write back. A pick from another
// set (`epoch` differs: the set changed meanwhile) is cancelled here, where its key is known,
// and reported as kOtherEpoch so that the caller takes the full pick; errors are -status.
JNIEXPORT jlong JNICALL Java_io_weighted_jni_Service_pickIn0(JNIEnv*, jclass, jlong service,
                                                             jlong epoch) {
  wt_pick p;
  wt_status s = wt_service_pick(S(service), &p);
  if (s != WT_OK) return -static_cast<jlong>(s);
  if (p.epoch != static_cast<uint64_t>(epoch)) {
    if (p.flags & WT_PICK_TRACKED) wt_service_cancel(S(service), &p);
    return wtjni::kOtherEpoch;
  }
  return static_cast<jlong>((static_cast<uint64_t>(p.flags) << 32) | p.index);
}

JNIEXPORT jint JNICALL Java_io_weighted_jni_Service_complete0(JNIEnv*, jclass, jlong service,
                                                              jlong key, jlong epoch, jint index,
                                                              jint flags, jdouble latency_ms,
                                                              jint outcome) {
  const wt_pick p = MakePick(key, epoch, index, flags);
  return wt_service_complete(S(service), &p, latency_ms, outcome);
}

JNIEXPORT jint JNICALL Java_io_weighted_jni_Service_cancel0(JNIEnv*, jclass, jlong service,
                                                            jlong key, jlong epoch, jint index,
                                                            jint flags) {
  const wt_pick p = MakePick(key, epoch, index, flags);
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
  std::vector<wt_report> reports(static_cast<size_t>(n));
  for (size_t i = 0; i < reports.size(); ++i) {
    reports[i].key = static_cast<uint64_t>(k[i]);
    reports[i].latency_ms = l[i];
    reports[i].outcome = o[i];
    reports[i].status = 0;
  }
  size_t done = 0;
  wt_report none{};
  wt_status s = wt_service_report_batch(S(service), n > 0 ? reports.data() : &none,
                                        static_cast<size_t>(n), &done);
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
  wt_resources r{};
  r.present = static_cast<uint32_t>(present);
  r.cpu = cpu;
  r.memory = memory;
  r.thread_pool = thread_pool;
  r.connection_pool = connection_pool;
  return wt_service_report_resources(S(service), i.c_str(), &r);
}
