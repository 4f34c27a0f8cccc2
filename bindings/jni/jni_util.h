// Helpers shared by the JNI glue (bindings/jni/*.cc). Only weighted/weighted.h is used: the glue
// is a client of the C API like any other.
#pragma once

#include <jni.h>

#include <cstddef>
#include <string>

#include "weighted/weighted.h"

namespace wtjni {

// Returned instead of a wt_status when a Java exception is pending (an OutOfMemoryError from a
// JNI allocation): the JVM throws it as the native method returns, so Java never reads the code.
inline constexpr jint kJavaException = -1;
// Endpoint ids are at most this long (weighted.h, wt_endpoint_spec.id).
inline constexpr size_t kMaxIdBytes = 256;

// Cached at JNI_OnLoad (native_library.cc).
extern jclass g_event_class;         // io.weighted.jni.Event (global ref)
extern jmethodID g_event_from_native;  // static Event fromNative(int, long, byte[], byte[],
                                       //                        double, double, byte[])
extern jfieldID g_entry_key;      // EndpointTable.Entry.key (long)
extern jfieldID g_entry_epoch;    // EndpointTable.Entry.epoch (long)
extern jclass g_native_library_class;  // io.weighted.jni.NativeLibrary (global ref)
extern jmethodID g_check_call;         // static void checkCall(int)

// The engine releases the global references behind endpoint sets' user pointers from threads the
// JVM may not know, under its own locks (wt_endpoints_options.release_user), so it only queues
// them; a thread inside a JNI call deletes them here. service.cc and engine.cc call it after each
// call that can release sets (set endpoints, remove a service, destroy an engine).
void DeleteReleased(JNIEnv* env);

// Copies a Java byte[] into *out. Returns false with a Java exception pending on failure.
inline bool CopyBytes(JNIEnv* env, jbyteArray array, std::string* out) {
  if (array == nullptr) {
    out->clear();
    return true;
  }
  const jsize n = env->GetArrayLength(array);
  out->resize(static_cast<size_t>(n));
  if (n > 0) {
    env->GetByteArrayRegion(array, 0, n, reinterpret_cast<jbyte*>(out->data()));
  }
  return !env->ExceptionCheck();
}

// A new Java byte[] holding [p, p + n); nullptr (with an exception pending) on failure. A NULL
// `p` gives a null array.
inline jbyteArray NewBytes(JNIEnv* env, const char* p, size_t n) {
  if (p == nullptr) {
    return nullptr;
  }
  jbyteArray a = env->NewByteArray(static_cast<jsize>(n));
  if (a != nullptr && n > 0) {
    env->SetByteArrayRegion(a, 0, static_cast<jsize>(n), reinterpret_cast<const jbyte*>(p));
  }
  return a;
}

inline jbyteArray NewBytes(JNIEnv* env, const char* cstr) {
  return cstr == nullptr ? nullptr : NewBytes(env, cstr, std::char_traits<char>::length(cstr));
}

// Stores `value` as out[0] of a Java Object[] (byte[][] or Event[]).
inline jint StoreFirst(JNIEnv* env, jobjectArray out, jobject value) {
  env->SetObjectArrayElement(out, 0, value);
  return env->ExceptionCheck() ? kJavaException : static_cast<jint>(WT_OK);
}

inline jint StoreLong(JNIEnv* env, jlongArray out, jlong value) {
  env->SetLongArrayRegion(out, 0, 1, &value);
  return env->ExceptionCheck() ? kJavaException : static_cast<jint>(WT_OK);
}

// Takes ownership of library-allocated text, hands it to Java as byte[] in out[0], frees it.
inline jint StoreOwnedText(JNIEnv* env, jobjectArray out, char* text, size_t len) {
  jbyteArray bytes = NewBytes(env, text, len);
  wt_free(text);
  if (env->ExceptionCheck()) {
    return kJavaException;
  }
  return StoreFirst(env, out, bytes);
}

}  // namespace wtjni
