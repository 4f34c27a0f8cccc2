#include "export/history_point.h"

namespace weighted {

void HistoryPointWriter::Begin(const HistoryPointHeader& h) {
  w_.BeginObject().Key("n").Uint(h.n).Key("time_ns").Int(h.cycle_ns);
  w_.Key("unix_ms").Int(h.unix_ns / 1000000).Key("columns").BeginArray();
  for (const char* c : kHistoryColumns) w_.String(c);
  w_.EndArray().Key("services").BeginArray();
}

void HistoryPointWriter::BeginService(std::string_view name, bool panic) {
  w_.BeginObject().Key("name").String(name).Key("panic").Bool(panic);
  w_.Key("endpoints").BeginArray();
}

void HistoryPointWriter::Endpoint(std::string_view id, std::string_view state, double weight,
                                  std::optional<double> share, std::optional<double> measured,
                                  double penalty) {
  w_.BeginArray().String(id).String(state).Double(weight);
  if (share) w_.Double(*share);
  else w_.Null();
  if (measured) w_.Double(*measured);
  else w_.Null();
  w_.Double(penalty).EndArray();
}

void HistoryPointWriter::EndService() { w_.EndArray().EndObject(); }

void HistoryPointWriter::End() { w_.EndArray().EndObject(); }

}  // namespace weighted
