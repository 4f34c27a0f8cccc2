#include "csv.h"

#include <cmath>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

namespace weighted_sim {
namespace {

std::string Num(double x) { return std::isfinite(x) ? fmt::format("{}", x) : ""; }
std::string Opt(const std::optional<double>& x) { return x ? Num(*x) : ""; }

std::ofstream Open(const std::filesystem::path& p) {
  std::ofstream f(p);
  if (!f) throw std::runtime_error("cannot write " + p.string());
  return f;
}

}  // namespace

void WriteCsv(const Results& r, const std::filesystem::path& dir) {
  std::ofstream sum = Open(dir / "summary.csv");
  sum << "policy,mean_success_tps,max_error_rate,recovery_s,mean_cpu,error_rate,readmission_s,"
         "p50_ms,p99_ms,p999_ms,sick_share,requests,successes,errors,timeouts\n";
  for (const PolicyResult& p : r.policies) {
    const Summary& m = p.summary;
    sum << fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", p.run.policy,
                       Num(m.mean_success_tps), Num(m.max_error_rate),
                       m.recoveries.empty() ? "" : Opt(m.recoveries[0].recovery_s),
                       Num(m.mean_cpu), Num(m.error_rate),
                       m.readmissions.empty() ? "" : Opt(m.readmissions[0].readmission_s),
                       Num(m.p50_ms), Num(m.p99_ms), Num(m.p999_ms), Opt(m.sick_share),
                       m.requests, m.successes, m.errors, m.timeouts);
  }
  for (const PolicyResult& p : r.policies) {
    const Series& s = p.run.series;
    std::ofstream f = Open(dir / fmt::format("series_{}.csv", p.run.policy));
    f << "t_s,success,errors,timeouts,sent,mean_latency_ms,p99_latency_ms";
    for (const BackendSpec& b : r.scenario.backends)
      for (const char* col : {"sent", "share", "weight", "cpu", "memory", "queue", "sick"})
        f << "," << b.id << "_" << col;
    f << "\n";
    for (int i = 0; i < s.seconds; ++i) {
      f << fmt::format("{},{},{},{},{},{},{}", i, s.success[i], s.errors[i], s.timeouts[i],
                       s.sent[i], Num(s.mean_latency_ms[i]), Num(s.p99_latency_ms[i]));
      for (const BackendSeries& b : s.backends) {
        const double share = s.sent[i] > 0 ? static_cast<double>(b.sent[i]) / s.sent[i] : 0.0;
        f << fmt::format(",{},{},{},{},{},{},{}", b.sent[i], Num(share), Num(b.weight[i]),
                         Num(b.cpu[i]), Num(b.memory[i]), b.queue[i], b.sick[i]);
      }
      f << "\n";
    }
  }
}

}  // namespace weighted_sim
