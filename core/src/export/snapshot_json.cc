#include "export/snapshot_json.h"

#include <algorithm>
#include <atomic>
#include <stdexcept>

#include "export/text_block.h"

namespace weighted {

namespace {
// The record passes through a buffer of about this size (ByteSink::OnBoundary): large enough
// that a piece's bookkeeping is nothing, small enough to stay in the L2 cache.
constexpr size_t kPiece = 256 << 10;

// Text bytes per record byte in the last whole snapshot rendered (x 1/1024), to size the next
// one's buffer: 2.2 in the benchmark's fleet; 3 until a snapshot has been measured. Pages
// reserved and never written cost nothing, so a high estimate only costs address space (and the
// tail is given back at the end); a low one costs a reallocation (for a block glibc maps on its
// own, an mremap, no copy).
std::atomic<uint32_t> g_text_per_record_1024{3 * 1024};

// Renders the scope's record, streamed in pieces, into `renderer`; the number of endpoints
// recorded, and the record's size in *record_bytes.
size_t Render(Engine& engine, const SnapshotScope& scope, bool whole, RecordRenderer& renderer,
              size_t* record_bytes) {
  std::string record;
  if (whole) record.reserve(kPiece + (16 << 10));  // the sink zeroes what is reserved
  ByteSink sink(&record);
  struct Fed {
    RecordRenderer* renderer;
    size_t bytes = 0;
  } fed{&renderer};
  sink.OnBoundary(kPiece, [](void* ctx, std::string_view piece) {
    auto* f = static_cast<Fed*>(ctx);
    f->bytes += piece.size();
    f->renderer->Feed(piece, false);
  }, &fed);
  const size_t n = EncodeSnapshot(engine, sink, nullptr, nullptr, scope);
  *record_bytes = fed.bytes + record.size();
  // The engine's own record renders unless the library is broken: say so rather than hand out
  // half a document.
  if (!renderer.Feed(record, true)) throw std::logic_error("snapshot record: " + renderer.error());
  return n;
}

size_t TextEstimate(Engine& engine, const SnapshotScope& scope) {
  const uint64_t ratio = g_text_per_record_1024.load(std::memory_order_relaxed);
  // A tenth over the last ratio: a fleet's text per record byte moves a little with its numbers.
  return size_t(RecordSizeEstimate(engine, scope) * ratio * 11 / 10 / 1024) + 4096;
}

void Remember(size_t record_bytes, size_t text_bytes) {
  if (record_bytes < 4096) return;  // too small to say what a large one needs
  const uint64_t r = uint64_t(text_bytes) * 1024 / record_bytes + 1;
  g_text_per_record_1024.store(uint32_t(std::min<uint64_t>(r, 16 * 1024)), std::memory_order_relaxed);
}

}  // namespace

std::string SnapshotJson(Engine& engine, const SnapshotScope& scope, size_t* recorded) {
  // One allocation for all of the text. A part of one endpoint needs no estimate.
  const bool whole = scope.endpoint_id.empty();
  RecordRenderer renderer(std::string(), whole ? TextEstimate(engine, scope) : 4096);
  size_t record_bytes = 0;
  const size_t n = Render(engine, scope, whole, renderer, &record_bytes);
  if (recorded) *recorded = n;
  std::string text = renderer.Take();
  if (whole) Remember(record_bytes, text.size());
  return text;
}

MallocedText SnapshotText(Engine& engine, const SnapshotScope& scope, size_t* recorded) {
  const bool whole = scope.endpoint_id.empty();
  JsonWriter::Malloced buffer{whole ? TextEstimate(engine, scope) : 4096};
  // The last large text's block, which its caller freed (export/text_block.h), when it fits.
  if (buffer.reserve >= kMinTextBlock) buffer.block = TakeTextBlock(buffer.reserve, &buffer.capacity);
  RecordRenderer renderer(buffer);
  size_t record_bytes = 0;
  const size_t n = Render(engine, scope, whole, renderer, &record_bytes);
  if (recorded) *recorded = n;
  MallocedText text;
  text.data.reset(renderer.TakeMalloced(&text.size));
  if (whole) Remember(record_bytes, text.size);
  return text;
}

}  // namespace weighted
