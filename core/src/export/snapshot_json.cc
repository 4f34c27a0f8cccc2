#include "export/snapshot_json.h"

#include <stdexcept>

namespace weighted {

namespace {
// The record passes through a buffer of about this size (ByteSink::OnBoundary): large enough
// that a piece's bookkeeping is nothing, small enough to stay in the L2 cache.
constexpr size_t kPiece = 256 << 10;
}  // namespace

std::string SnapshotJson(Engine& engine, const SnapshotScope& scope, size_t* recorded) {
  // The text is about 2.2 times the record; one allocation for all of it (pages reserved and
  // never written cost nothing). A part of one endpoint needs no estimate.
  const bool whole = scope.endpoint_id.empty();
  RecordRenderer renderer(std::string(), whole ? 3 * RecordSizeEstimate(engine, scope) : 4096);
  std::string record;
  if (whole) record.reserve(kPiece + (16 << 10));  // the sink zeroes what is reserved
  ByteSink sink(&record);
  sink.OnBoundary(kPiece, [](void* r, std::string_view piece) {
    static_cast<RecordRenderer*>(r)->Feed(piece, false);
  }, &renderer);
  const size_t n = EncodeSnapshot(engine, sink, nullptr, nullptr, scope);
  if (recorded) *recorded = n;
  // The engine's own record renders unless the library is broken: say so rather than hand out
  // half a document.
  if (!renderer.Feed(record, true)) throw std::logic_error("snapshot record: " + renderer.error());
  return renderer.Take();
}

}  // namespace weighted
