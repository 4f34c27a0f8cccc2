#include "export/text_block.h"

#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <mutex>

namespace weighted {

namespace {

std::mutex g_mu;
char* g_block = nullptr;  // guarded by g_mu
size_t g_capacity = 0;

// The block's whole pages, after the one holding malloc's header (MADV_FREE'd pages may read
// back as zeros, and free() reads the header).
void MarkFree(char* p, size_t bytes) {
#ifdef MADV_FREE
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + page) & ~(page - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + bytes) & ~(page - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_FREE);
#else
  (void)p;
  (void)bytes;
#endif
}

}  // namespace

void FreeText(void* p) {
  if (!p) return;
  const size_t usable = malloc_usable_size(p);
  if (usable < kMinTextBlock) {
    std::free(p);
    return;
  }
  MarkFree(static_cast<char*>(p), usable);
  char* old = nullptr;
  {
    std::lock_guard lock(g_mu);
    old = g_block;
    g_block = static_cast<char*>(p);
    g_capacity = usable;
  }
  std::free(old);
}

char* TakeTextBlock(size_t bytes, size_t* capacity) {
  std::lock_guard lock(g_mu);
  if (!g_block || g_capacity < bytes) return nullptr;
  char* p = g_block;
  *capacity = g_capacity;
  g_block = nullptr;
  g_capacity = 0;
  return p;
}

void ReleaseTextBlock() {
  char* old = nullptr;
  {
    std::lock_guard lock(g_mu);
    old = g_block;
    g_block = nullptr;
    g_capacity = 0;
  }
  std::free(old);
}

}  // namespace weighted
