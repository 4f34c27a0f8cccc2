// The block of the last large text the C ABI handed out (a snapshot of many endpoints), kept
// when the caller frees it, for the next such text.
//
// glibc maps a block above 32 MB afresh on every malloc and unmaps it on free, so a snapshot of
// 100 000 endpoints (147 MB) faulted in, and the kernel zeroed, every page of its text on every
// call: ~60 ms of CPU on the benchmark's VM, a quarter of the snapshot. A dashboard polls the
// snapshot every few seconds, and its next text is about the last one's size. wt_free() keeps
// the block (at most one, at least kMinBytes) with its pages marked MADV_FREE: the kernel may
// take them back under memory pressure (they then read as zeros, refaulted when written), and
// while it has not, the next snapshot writes into them without a fault.
#pragma once

#include <cstddef>

namespace weighted {

// What wt_free() does: keeps `p` (any block from malloc its caller gives up) when it is large,
// releasing the block kept before; frees it otherwise. p may be null.
void FreeText(void* p);

// A kept block of at least `bytes` (its usable size in *capacity), now the caller's, or null.
char* TakeTextBlock(size_t bytes, size_t* capacity);

// Frees the kept block, if any (tests; a process that wants the memory back at once).
void ReleaseTextBlock();

// Blocks below this are left to malloc, which reuses them from its heap without new faults.
inline constexpr size_t kMinTextBlock = size_t{32} << 20;

}  // namespace weighted
