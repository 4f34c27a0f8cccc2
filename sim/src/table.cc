// The article's S-X2 table (mean throughput, max error rate, recovery time, mean CPU) with this
// benchmark's extra rows, one column per policy, as Markdown.
#include <functional>

#include <fmt/format.h>

#include "weighted_sim/sim.h"

namespace weighted_sim {
namespace {

std::string Pct(double x) { return fmt::format("{:.1f}%", 100.0 * x); }
std::string Secs(const std::optional<double>& s) { return s ? fmt::format("{:.0f}", *s) : "never"; }

const PolicyResult* Find(const Results& r, std::string_view name) {
  for (const PolicyResult& p : r.policies)
    if (p.run.policy == name) return &p;
  return nullptr;
}

}  // namespace

std::string MarkdownTable(const Results& r) {
  using Cell = std::function<std::string(const Summary&)>;
  const PolicyResult* rr = Find(r, "round_robin");
  const std::vector<std::pair<std::string, Cell>> rows = {
      {"mean success throughput (TPS)",
       [](const Summary& m) { return fmt::format("{:.0f}", m.mean_success_tps); }},
      {"max error rate (1-s windows)", [](const Summary& m) { return Pct(m.max_error_rate); }},
      {"recovery time (s)",
       [](const Summary& m) {
         return m.recoveries.empty() ? std::string("n/a") : Secs(m.recoveries[0].recovery_s);
       }},
      {"mean CPU use", [](const Summary& m) { return Pct(m.mean_cpu); }},
      {"throughput vs round-robin",
       [rr](const Summary& m) {
         return rr && rr->summary.mean_success_tps > 0
                    ? fmt::format("{:.2f}x", m.mean_success_tps / rr->summary.mean_success_tps)
                    : std::string("n/a");
       }},
      {"overall error rate", [](const Summary& m) { return Pct(m.error_rate); }},
      {"re-admission time (s)",
       [](const Summary& m) {
         return m.readmissions.empty() ? std::string("n/a")
                                       : Secs(m.readmissions[0].readmission_s);
       }},
      {"p50 latency (ms)", [](const Summary& m) { return fmt::format("{:.1f}", m.p50_ms); }},
      {"p99 latency (ms)", [](const Summary& m) { return fmt::format("{:.1f}", m.p99_ms); }},
      {"p999 latency (ms)", [](const Summary& m) { return fmt::format("{:.1f}", m.p999_ms); }},
      {"traffic to sick backends during faults",
       [](const Summary& m) { return m.sick_share ? Pct(*m.sick_share) : std::string("n/a"); }},
  };
  std::string out = "| metric |";
  std::string rule = "|---|";
  for (const PolicyResult& p : r.policies) {
    out += fmt::format(" {} |", p.run.policy);
    rule += "---:|";
  }
  out += "\n" + rule + "\n";
  for (const auto& [label, cell] : rows) {
    out += fmt::format("| {} |", label);
    for (const PolicyResult& p : r.policies) out += fmt::format(" {} |", cell(p.summary));
    out += "\n";
  }
  return out;
}

}  // namespace weighted_sim
