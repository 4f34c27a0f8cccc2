// Natives of io.weighted.jni.Monitor (wt_monitor_*: a state file, read-only). Each forwards to one
// C API call and returns its wt_status; the Java side checks it and guarantees a live pointer.
#include <string>

#include "io_weighted_jni_Monitor.h"
#include "jni_util.h"

namespace {
wt_monitor* M(jlong p) { return reinterpret_cast<wt_monitor*>(p); }

jint Opened(JNIEnv* env, wt_status s, wt_monitor* m, jlongArray out) {
  if (s != WT_OK) return s;
  jint r = wtjni::StoreLong(env, out, reinterpret_cast<jlong>(m));
  if (r != WT_OK) wt_monitor_close(m);
  return r;
}
}  // namespace

JNIEXPORT jint JNICALL Java_io_weighted_jni_Monitor_open0(JNIEnv* env, jclass, jbyteArray path,
                                                          jlongArray out) {
  std::string p;
  if (!wtjni::CopyBytes(env, path, &p)) return wtjni::kJavaException;
  wt_monitor* m = nullptr;
  const wt_status s = wt_monitor_open(p.c_str(), &m);  // before m is read: argument order is unspecified
  return Opened(env, s, m, out);
}

JNIEXPORT jint JNICALL Java_io_weighted_jni_Monitor_openEngine0(JNIEnv* env, jclass, jlong engine,
                                                                jlongArray out) {
  wt_monitor* m = nullptr;
  const wt_status s = wt_monitor_open_engine(reinterpret_cast<wt_engine*>(engine), &m);
  return Opened(env, s, m, out);
}

JNIEXPORT void JNICALL Java_io_weighted_jni_Monitor_close0(JNIEnv*, jclass, jlong monitor) {
  wt_monitor_close(M(monitor));
}

JNIEXPORT jint JNICALL Java_io_weighted_jni_Monitor_snapshot0(JNIEnv* env, jclass, jlong monitor,
                                                              jobjectArray out) {
  char* text = nullptr;
  size_t len = 0;
  wt_status s = wt_monitor_snapshot_json(M(monitor), &text, &len);
  return s != WT_OK ? s : wtjni::StoreOwnedText(env, out, text, len);
}

JNIEXPORT jint JNICALL Java_io_weighted_jni_Monitor_history0(JNIEnv* env, jclass, jlong monitor,
                                                             jlong since, jlong max,
                                                             jobjectArray out) {
  char* text = nullptr;
  size_t len = 0;
  wt_status s = wt_monitor_history_json(M(monitor), static_cast<uint64_t>(since),
                                        static_cast<size_t>(max), &text, &len);
  return s != WT_OK ? s : wtjni::StoreOwnedText(env, out, text, len);
}

JNIEXPORT jint JNICALL Java_io_weighted_jni_Monitor_events0(JNIEnv* env, jclass, jlong monitor,
                                                            jlong cursor, jlong max,
                                                            jobjectArray out) {
  char* text = nullptr;
  size_t len = 0;
  wt_status s = wt_monitor_events_json(M(monitor), static_cast<uint64_t>(cursor),
                                       static_cast<size_t>(max), &text, &len);
  return s != WT_OK ? s : wtjni::StoreOwnedText(env, out, text, len);
}

JNIEXPORT jint JNICALL Java_io_weighted_jni_Monitor_info0(JNIEnv* env, jclass, jlong monitor,
                                                          jobjectArray out) {
  char* text = nullptr;
  size_t len = 0;
  wt_status s = wt_monitor_info_json(M(monitor), &text, &len);
  return s != WT_OK ? s : wtjni::StoreOwnedText(env, out, text, len);
}
