// Thread-local storage on the hot path.
//
// libweighted.so is a shared library, so by default every thread_local access calls
// __tls_get_addr (the general-dynamic model), ~5% of a pick or report. The initial-exec model
// makes it a %fs-relative load. Its cost: the library gets the STATIC_TLS flag, and when it is
// loaded with dlopen (Python, the JVM) its whole TLS segment (176 bytes: `readelf -l`, TLS)
// comes from glibc's static TLS surplus, 512 bytes by default for all such libraries of a
// process; dlopen fails if that runs out. So the segment stays small, and only trivially
// constructible variables on the hot path use the model.
#pragma once

#define WT_TLS_INITIAL_EXEC thread_local __attribute__((tls_model("initial-exec")))
