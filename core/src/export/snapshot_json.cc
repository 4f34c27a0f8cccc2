#include "export/snapshot_json.h"

#include <stdexcept>

#include "export/snapshot_record.h"

namespace weighted {

std::string SnapshotJson(Engine& engine) {
  std::string record, json;
  ByteSink sink(&record);
  EncodeSnapshot(engine, sink, nullptr, nullptr);
  // The engine's own record renders unless the library is broken: say so rather than hand out
  // half a document.
  const std::string why = RenderSnapshot(record, &json);
  if (!why.empty()) throw std::logic_error("snapshot record: " + why);
  return json;
}

}  // namespace weighted
