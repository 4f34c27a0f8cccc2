#include "export/snapshot_json.h"

#include <stdexcept>


namespace weighted {

std::string SnapshotJson(Engine& engine, const SnapshotScope& scope, size_t* recorded) {
  std::string record, json;
  ByteSink sink(&record);
  const size_t n = EncodeSnapshot(engine, sink, nullptr, nullptr, scope);
  if (recorded) *recorded = n;
  // The engine's own record renders unless the library is broken: say so rather than hand out
  // half a document.
  const std::string why = RenderSnapshot(record, &json);
  if (!why.empty()) throw std::logic_error("snapshot record: " + why);
  return json;
}

}  // namespace weighted
