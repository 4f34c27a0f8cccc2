#include "export/history_point.h"

#include <initializer_list>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "export/json_writer.h"

namespace weighted {

namespace {

using nlohmann::json;

// Reads the few fields a point needs while the parser walks the text, without building a DOM:
// the DOM (with JSON_DIAGNOSTICS' parent links) cost ~30 ms of CPU per cycle at 1 000 endpoints,
// six times the snapshot's own serialisation.
class PointReader final : public nlohmann::json_sax<json> {
 public:
  struct Endpoint {
    std::string id, state;
    std::optional<double> effective_weight, weight, share, measured, penalty;
  };
  struct Service {
    std::string name;
    bool panic = false;
    std::vector<Endpoint> endpoints;
  };
  std::vector<Service> services;

  bool null() override { return true; }
  bool boolean(bool v) override {
    if (At({"services", "[]", "panic"}) && !services.empty()) services.back().panic = v;
    return true;
  }
  bool number_integer(number_integer_t v) override { return Number(double(v)); }
  bool number_unsigned(number_unsigned_t v) override { return Number(double(v)); }
  bool number_float(number_float_t v, const string_t&) override { return Number(v); }
  bool string(string_t& v) override {
    if (At({"services", "[]", "name"}) && !services.empty()) {
      services.back().name = std::move(v);
    } else if (Endpoint* e = InEndpoint("id")) {
      e->id = std::move(v);
    } else if (Endpoint* e = InEndpoint("state")) {
      e->state = std::move(v);
    }
    return true;
  }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override {
    if (At({"services", "[]"})) services.emplace_back();
    if (At({"services", "[]", "endpoints", "[]"}) && !services.empty()) {
      services.back().endpoints.emplace_back();
    }
    frames_.push_back({false, {}});
    return true;
  }
  bool key(string_t& k) override {
    frames_.back().key = std::move(k);
    return true;
  }
  bool end_object() override { return Pop(); }
  bool start_array(std::size_t) override {
    frames_.push_back({true, {}});
    return true;
  }
  bool end_array() override { return Pop(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }

 private:
  struct Frame {
    bool array;
    std::string key;  // objects: the key of the value being read
  };

  // Whether the value being read sits at `path` from the root: "[]" an array element, any other
  // name the value of that key in an object.
  bool At(std::initializer_list<std::string_view> path) const {
    if (path.size() != frames_.size()) return false;
    size_t i = 0;
    for (std::string_view p : path) {
      const Frame& f = frames_[i++];
      if (p == "[]" ? !f.array : (f.array || f.key != p)) return false;
    }
    return true;
  }
  Endpoint* InEndpoint(std::string_view key, std::string_view sub = {},
                       std::string_view subsub = {}) {
    if (services.empty() || services.back().endpoints.empty()) return nullptr;
    const bool at = sub.empty()      ? At({"services", "[]", "endpoints", "[]", key})
                    : subsub.empty() ? At({"services", "[]", "endpoints", "[]", key, sub})
                                     : At({"services", "[]", "endpoints", "[]", key, sub, subsub});
    return at ? &services.back().endpoints.back() : nullptr;
  }
  bool Number(double v) {
    if (Endpoint* e = InEndpoint("effective_weight")) e->effective_weight = v;
    else if (Endpoint* e = InEndpoint("weight")) e->weight = v;
    else if (Endpoint* e = InEndpoint("penalty")) e->penalty = v;
    else if (Endpoint* e = InEndpoint("share", "expected")) e->share = v;
    else if (Endpoint* e = InEndpoint("share", "last_cycle", "measured")) e->measured = v;
    // The engine's snapshot gives the last cycle's measured share as a plain number.
    else if (Endpoint* e = InEndpoint("share", "last_cycle")) e->measured = v;
    return true;
  }
  bool Pop() {
    frames_.pop_back();
    return true;
  }

  std::vector<Frame> frames_;
};

void NumberOrNull(JsonWriter& w, const std::optional<double>& v) {
  if (v) w.Double(*v);
  else w.Null();
}

}  // namespace

std::optional<std::string> HistoryPoint(const std::string& snapshot, uint64_t n, int64_t cycle_ns,
                                        int64_t unix_ns) {
  PointReader r;
  if (!json::sax_parse(snapshot, &r)) return std::nullopt;
  JsonWriter w;
  w.BeginObject().Key("n").Uint(n).Key("time_ns").Int(cycle_ns).Key("unix_ms").Int(unix_ns / 1000000);
  w.Key("columns").BeginArray();
  for (const char* c : kHistoryColumns) w.String(c);
  w.EndArray().Key("services").BeginArray();
  for (const auto& s : r.services) {
    w.BeginObject().Key("name").String(s.name).Key("panic").Bool(s.panic);
    w.Key("endpoints").BeginArray();
    for (const auto& e : s.endpoints) {
      w.BeginArray().String(e.id).String(e.state);
      NumberOrNull(w, e.effective_weight ? e.effective_weight : e.weight);
      NumberOrNull(w, e.share);
      NumberOrNull(w, e.measured);
      NumberOrNull(w, e.penalty);
      w.EndArray();
    }
    w.EndArray().EndObject();
  }
  w.EndArray().EndObject();
  return w.Take();
}

}  // namespace weighted
