// Natives of io.weighted.jni.NativeLibrary: versions, the thread-local error message, and the
// core's names for statuses, outcomes and event types.
#include "io_weighted_jni_NativeLibrary.h"
#include "jni_util.h"

namespace wtjni {
jclass g_event_class = nullptr;
jmethodID g_event_from_native = nullptr;
jfieldID g_entry_key = nullptr;
jfieldID g_entry_epoch = nullptr;
jclass g_native_library_class = nullptr;
jmethodID g_check_call = nullptr;
}  // namespace wtjni

namespace {
// Field and method IDs stay valid while the class is loaded, and the classes are the library's
// own: the library is loaded by (and lives as long as) their class loader. checkCall is how a
// native whose return is a value, not a status, reports a failure (service.cc, ThrowStatus).
bool CacheIds(JNIEnv* env) {
  jclass entry = env->FindClass("io/weighted/jni/EndpointTable$Entry");
  if (entry == nullptr) return false;
  wtjni::g_entry_key = env->GetFieldID(entry, "key", "J");
  wtjni::g_entry_epoch = env->GetFieldID(entry, "epoch", "J");
  env->DeleteLocalRef(entry);
  jclass lib = env->FindClass("io/weighted/jni/NativeLibrary");
  if (lib == nullptr) return false;
  wtjni::g_native_library_class = static_cast<jclass>(env->NewGlobalRef(lib));
  env->DeleteLocalRef(lib);
  if (wtjni::g_native_library_class == nullptr) return false;
  wtjni::g_check_call = env->GetStaticMethodID(wtjni::g_native_library_class, "checkCall", "(I)V");
  return wtjni::g_entry_key && wtjni::g_entry_epoch && wtjni::g_check_call;
}
}  // namespace

extern "C" JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM* vm, void*) {
  JNIEnv* env = nullptr;
  if (vm->GetEnv(reinterpret_cast<void**>(&env), JNI_VERSION_10) != JNI_OK) {
    return JNI_ERR;
  }
  jclass local = env->FindClass("io/weighted/jni/Event");
  if (local == nullptr) {
    return JNI_ERR;
  }
  wtjni::g_event_class = static_cast<jclass>(env->NewGlobalRef(local));
  env->DeleteLocalRef(local);
  wtjni::g_event_from_native = env->GetStaticMethodID(
      wtjni::g_event_class, "fromNative", "(IJ[B[BDD[B)Lio/weighted/jni/Event;");
  if (wtjni::g_event_from_native == nullptr || !CacheIds(env)) {
    return JNI_ERR;
  }
  return JNI_VERSION_10;
}

extern "C" JNIEXPORT void JNICALL JNI_OnUnload(JavaVM* vm, void*) {
  JNIEnv* env = nullptr;
  if (vm->GetEnv(reinterpret_cast<void**>(&env), JNI_VERSION_10) == JNI_OK &&
      wtjni::g_event_class != nullptr) {
    wtjni::DeleteReleased(env);
    env->DeleteGlobalRef(wtjni::g_event_class);
    wtjni::g_event_class = nullptr;
    if (wtjni::g_native_library_class != nullptr) {
      env->DeleteGlobalRef(wtjni::g_native_library_class);
      wtjni::g_native_library_class = nullptr;
    }
  }
}

JNIEXPORT jint JNICALL Java_io_weighted_jni_NativeLibrary_abiVersion0(JNIEnv*, jclass) {
  return static_cast<jint>(wt_version_number());
}

JNIEXPORT jint JNICALL Java_io_weighted_jni_NativeLibrary_headerVersion0(JNIEnv*, jclass) {
  return static_cast<jint>(WT_VERSION_NUMBER);
}

JNIEXPORT jbyteArray JNICALL Java_io_weighted_jni_NativeLibrary_lastError0(JNIEnv* env, jclass) {
  return wtjni::NewBytes(env, wt_last_error());
}

JNIEXPORT jbyteArray JNICALL Java_io_weighted_jni_NativeLibrary_statusName0(JNIEnv* env, jclass,
                                                                           jint status) {
  return wtjni::NewBytes(env, wt_status_name(status));
}

JNIEXPORT jbyteArray JNICALL Java_io_weighted_jni_NativeLibrary_outcomeName0(JNIEnv* env, jclass,
                                                                            jint outcome) {
  return wtjni::NewBytes(env, wt_outcome_name(outcome));
}

JNIEXPORT jbyteArray JNICALL Java_io_weighted_jni_NativeLibrary_eventTypeName0(JNIEnv* env,
                                                                              jclass, jint type) {
  return wtjni::NewBytes(env, wt_event_type_name(type));
}

JNIEXPORT jint JNICALL Java_io_weighted_jni_NativeLibrary_outcomeOfHttpStatus0(JNIEnv*, jclass,
                                                                              jint http_status) {
  return wt_outcome_from_http_status(http_status);
}
