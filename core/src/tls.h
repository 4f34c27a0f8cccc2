// Thread-local storage on the hot path.
//
// libweighted.so is a shared library, so by default every thread_local access calls
// __tls_get_addr (the general-dynamic model), ~5% of a pick or report. The initial-exec model
// makes it a %fs-relative load. Its cost: a library loaded with dlopen (Python, the JVM) takes
// its initial-exec variables from glibc's static TLS surplus, 512 bytes shared by every such
// library in the process, and dlopen fails if that runs out. So only a few small, trivially
// constructible variables use it (about 130 bytes in all); anything else stays general-dynamic.
#pragma once

#define WT_TLS_INITIAL_EXEC thread_local __attribute__((tls_model("initial-exec")))
