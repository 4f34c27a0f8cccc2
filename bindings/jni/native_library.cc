// Natives of io.weighted.jni.NativeLibrary: versions and the thread-local error message.
#include "io_weighted_jni_NativeLibrary.h"
#include "jni_util.h"

namespace wtjni {
jclass g_event_class = nullptr;
jmethodID g_event_from_native = nullptr;
}  // namespace wtjni

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
  if (wtjni::g_event_from_native == nullptr) {
    return JNI_ERR;
  }
  return JNI_VERSION_10;
}

extern "C" JNIEXPORT void JNICALL JNI_OnUnload(JavaVM* vm, void*) {
  JNIEnv* env = nullptr;
  if (vm->GetEnv(reinterpret_cast<void**>(&env), JNI_VERSION_10) == JNI_OK &&
      wtjni::g_event_class != nullptr) {
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
