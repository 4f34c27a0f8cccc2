// Natives of io.weighted.jni.NativeLibrary: versions, the thread-local error message, and the
// core's names for statuses, outcomes and event types.
#include "io_weighted_jni_NativeLibrary.h"
#include "jni_util.h"

namespace wtjni {
jclass g_event_class = nullptr;
jmethodID g_event_from_native = nullptr;
jfieldID g_entry_key = nullptr;
jfieldID g_entry_epoch = nullptr;
jfieldID g_picked_entry = nullptr;
jfieldID g_picked_key = nullptr;
jfieldID g_picked_epoch = nullptr;
jfieldID g_picked_index = nullptr;
jfieldID g_picked_status = nullptr;
}  // namespace wtjni

namespace {
// Field IDs stay valid while the class is loaded, and the classes are the library's own: the
// library is loaded by (and lives as long as) their class loader.
bool CacheFields(JNIEnv* env) {
  jclass entry = env->FindClass("io/weighted/jni/EndpointTable$Entry");
  if (entry == nullptr) return false;
  wtjni::g_entry_key = env->GetFieldID(entry, "key", "J");
  wtjni::g_entry_epoch = env->GetFieldID(entry, "epoch", "J");
  env->DeleteLocalRef(entry);
  jclass picked = env->FindClass("io/weighted/jni/Picked");
  if (picked == nullptr) return false;
  wtjni::g_picked_entry =
      env->GetFieldID(picked, "entry", "Lio/weighted/jni/EndpointTable$Entry;");
  wtjni::g_picked_key = env->GetFieldID(picked, "key", "J");
  wtjni::g_picked_epoch = env->GetFieldID(picked, "epoch", "J");
  wtjni::g_picked_index = env->GetFieldID(picked, "index", "I");
  wtjni::g_picked_status = env->GetFieldID(picked, "status", "I");
  env->DeleteLocalRef(picked);
  return wtjni::g_entry_key && wtjni::g_entry_epoch && wtjni::g_picked_entry &&
         wtjni::g_picked_key && wtjni::g_picked_epoch && wtjni::g_picked_index &&
         wtjni::g_picked_status;
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
  if (wtjni::g_event_from_native == nullptr || !CacheFields(env)) {
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
