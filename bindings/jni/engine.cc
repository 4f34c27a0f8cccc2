// Natives of io.weighted.jni.Engine. Each one forwards to one C API call and returns its
// wt_status; Java's NativeLibrary.checkCall() turns a failure into an exception. The Java side
// guarantees a live engine pointer (Handle: use after close never reaches this file).
#include <string>

#include "io_weighted_jni_Engine.h"
#include "jni_util.h"

namespace {
wt_engine* E(jlong p) { return reinterpret_cast<wt_engine*>(p); }
}  // namespace

JNIEXPORT jint JNICALL Java_io_weighted_jni_Engine_create0(JNIEnv* env, jclass, jbyteArray json,
                                                           jint clock_mode, jlongArray out) {
  std::string text;
  if (!wtjni::CopyBytes(env, json, &text)) return wtjni::kJavaException;
  wt_engine* engine = nullptr;
  wt_status s = wt_engine_create(text.data(), text.size(), clock_mode, &engine);
  if (s != WT_OK) return s;
  jint r = wtjni::StoreLong(env, out, reinterpret_cast<jlong>(engine));
  if (r != WT_OK) wt_engine_destroy(engine);
  return r;
}

JNIEXPORT jint JNICALL Java_io_weighted_jni_Engine_createFromFile0(JNIEnv* env, jclass,
                                                                   jbyteArray path, jint clock_mode,
                                                                   jlongArray out) {
  std::string p;
  if (!wtjni::CopyBytes(env, path, &p)) return wtjni::kJavaException;
  wt_engine* engine = nullptr;
  wt_status s = wt_engine_create_from_file(p.c_str(), clock_mode, &engine);
  if (s != WT_OK) return s;
  jint r = wtjni::StoreLong(env, out, reinterpret_cast<jlong>(engine));
  if (r != WT_OK) wt_engine_destroy(engine);
  return r;
}

JNIEXPORT jint JNICALL Java_io_weighted_jni_Engine_validate0(JNIEnv* env, jclass, jbyteArray json) {
  std::string text;
  if (!wtjni::CopyBytes(env, json, &text)) return wtjni::kJavaException;
  return wt_config_validate(text.data(), text.size());
}

JNIEXPORT jint JNICALL Java_io_weighted_jni_Engine_resolve0(JNIEnv* env, jclass, jbyteArray json,
                                                            jobjectArray out) {
  std::string text;
  if (!wtjni::CopyBytes(env, json, &text)) return wtjni::kJavaException;
  char* resolved = nullptr;
  wt_status s = wt_config_resolve(text.data(), text.size(), &resolved);
  if (s != WT_OK) return s;
  return wtjni::StoreOwnedText(env, out, resolved, std::char_traits<char>::length(resolved));
}

JNIEXPORT void JNICALL Java_io_weighted_jni_Engine_destroy0(JNIEnv* env, jclass, jlong engine) {
  wt_engine_destroy(E(engine));
  wtjni::DeleteReleased(env);  // every set of the engine released its user pointers just now
}

JNIEXPORT jint JNICALL Java_io_weighted_jni_Engine_reload0(JNIEnv* env, jclass, jlong engine,
                                                           jbyteArray json) {
  std::string text;
  if (!wtjni::CopyBytes(env, json, &text)) return wtjni::kJavaException;
  return wt_engine_reload(E(engine), text.data(), text.size());
}

JNIEXPORT jint JNICALL Java_io_weighted_jni_Engine_reloadFromFile0(JNIEnv* env, jclass,
                                                                   jlong engine, jbyteArray path) {
  std::string p;
  if (!wtjni::CopyBytes(env, path, &p)) return wtjni::kJavaException;
  return wt_engine_reload_from_file(E(engine), p.c_str());
}

JNIEXPORT jint JNICALL Java_io_weighted_jni_Engine_now0(JNIEnv* env, jclass, jlong engine,
                                                        jlongArray out) {
  int64_t now = 0;
  wt_status s = wt_engine_now(E(engine), &now);
  if (s != WT_OK) return s;
  return wtjni::StoreLong(env, out, now);
}

JNIEXPORT jint JNICALL Java_io_weighted_jni_Engine_advance0(JNIEnv*, jclass, jlong engine,
                                                            jlong delta_ns) {
  return wt_engine_advance(E(engine), delta_ns);
}

JNIEXPORT jint JNICALL Java_io_weighted_jni_Engine_runCycle0(JNIEnv*, jclass, jlong engine) {
  return wt_engine_run_cycle(E(engine));
}

JNIEXPORT jint JNICALL Java_io_weighted_jni_Engine_service0(JNIEnv* env, jclass, jlong engine,
                                                            jbyteArray name, jlongArray out) {
  std::string n;
  if (!wtjni::CopyBytes(env, name, &n)) return wtjni::kJavaException;
  wt_service* service = nullptr;
  wt_status s = wt_engine_service(E(engine), n.c_str(), &service);
  if (s != WT_OK) return s;
  return wtjni::StoreLong(env, out, reinterpret_cast<jlong>(service));
}

JNIEXPORT jint JNICALL Java_io_weighted_jni_Engine_snapshot0(JNIEnv* env, jclass, jlong engine,
                                                             jobjectArray out) {
  char* json = nullptr;
  size_t len = 0;
  wt_status s = wt_engine_snapshot_json(E(engine), &json, &len);
  if (s != WT_OK) return s;
  return wtjni::StoreOwnedText(env, out, json, len);
}

JNIEXPORT jint JNICALL Java_io_weighted_jni_Engine_prometheus0(JNIEnv* env, jclass, jlong engine,
                                                               jobjectArray out) {
  char* text = nullptr;
  size_t len = 0;
  wt_status s = wt_engine_prometheus(E(engine), &text, &len);
  if (s != WT_OK) return s;
  return wtjni::StoreOwnedText(env, out, text, len);
}

// Polls one event and copies it into a Java Event before returning: the C strings are valid
// only until the next poll (Engine.pollEvent() serialises polls for that reason).
JNIEXPORT jint JNICALL Java_io_weighted_jni_Engine_pollEvent0(JNIEnv* env, jclass, jlong engine,
                                                              jobjectArray out) {
  wt_event ev = WT_EVENT_INIT;
  int has = 0;
  wt_status s = wt_engine_poll_event(E(engine), &ev, &has);
  if (s != WT_OK || !has) return s;
  jbyteArray service = wtjni::NewBytes(env, ev.service);
  jbyteArray endpoint = env->ExceptionCheck() ? nullptr : wtjni::NewBytes(env, ev.endpoint);
  jbyteArray reason = env->ExceptionCheck() ? nullptr : wtjni::NewBytes(env, ev.reason);
  if (env->ExceptionCheck()) return wtjni::kJavaException;
  jobject event = env->CallStaticObjectMethod(
      wtjni::g_event_class, wtjni::g_event_from_native, static_cast<jint>(ev.type),
      static_cast<jlong>(ev.time_ns), service, endpoint, ev.old_weight, ev.new_weight, reason);
  if (env->ExceptionCheck()) return wtjni::kJavaException;
  return wtjni::StoreFirst(env, out, event);
}
