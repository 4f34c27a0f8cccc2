/* Loads libweightedjni.so as a JVM's System.load does (dlopen, here with every symbol bound at
 * once) and calls the two natives that need no JNIEnv. Built for the target, it proves a
 * cross-compiled JNI library loads and runs on that architecture (under qemu for aarch64)
 * without a JVM of that architecture: every NEEDED library resolves, nothing is left undefined,
 * and the engine inside answers. */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "weighted/weighted.h"

typedef int (*version_fn)(void* env, void* cls); /* jint (JNIEnv*, jclass) */

static int failures = 0;

/* ISO C has no object-to-function pointer conversion; POSIX guarantees this copy works. */
static version_fn function(void* lib, const char* name) {
  void* sym = dlsym(lib, name);
  version_fn fn = NULL;
  if (sym == NULL) {
    fprintf(stderr, "missing symbol %s\n", name);
    ++failures;
    return NULL;
  }
  memcpy(&fn, &sym, sizeof fn);
  return fn;
}

int main(int argc, char** argv) {
  void* lib;
  version_fn abi, header;
  if (argc != 2) {
    fprintf(stderr, "usage: %s path/to/libweightedjni.so\n", argv[0]);
    return 2;
  }
  lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    fprintf(stderr, "dlopen %s: %s\n", argv[1], dlerror());
    return 1;
  }
  (void)function(lib, "JNI_OnLoad");
  (void)function(lib, "JNI_OnUnload");
  abi = function(lib, "Java_io_weighted_jni_NativeLibrary_abiVersion0");
  header = function(lib, "Java_io_weighted_jni_NativeLibrary_headerVersion0");
  if (abi != NULL && header != NULL) {
    int a = abi(NULL, NULL), h = header(NULL, NULL);
    printf("libweightedjni: C ABI %d, glue compiled against %d\n", a, h);
    if (a / 10000 != WT_VERSION_MAJOR || h != WT_VERSION_NUMBER) {
      fprintf(stderr, "expected major %d and header %d\n", WT_VERSION_MAJOR, WT_VERSION_NUMBER);
      ++failures;
    }
  }
  /* The embedded engine's C API stays private to the JNI library (weightedjni.map). */
  if (dlsym(lib, "wt_version_number") != NULL) {
    fprintf(stderr, "libweightedjni exports the C API (wt_version_number)\n");
    ++failures;
  }
  dlclose(lib);
  return failures == 0 ? 0 : 1;
}
