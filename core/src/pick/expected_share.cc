#include "pick/expected_share.h"

#include <algorithm>
#include <cmath>

#include "pick/random.h"

namespace weighted {

namespace {

constexpr double kTwo32 = 4294967296.0;

// An endpoint's requests in flight at a pick, as a Poisson count of mean `m`: the occupancy of
// an M/G/infinity queue (requests arrive at the endpoint's rate and each stays for its latency).
// The in-flight term is the one cost input that moves with every pick; a fixed count would
// make the comparison all-or-nothing (the cheaper endpoint always wins), which the picker's own
// feedback (a winner's queue grows) never does.
class InflightDraw {
 public:
  explicit InflightDraw(double m) {
    if (!(m > 1e-9)) return;
    const double sd = std::sqrt(m);
    first_ = static_cast<int32_t>(std::max(0.0, std::floor(m - 10 * sd - 8)));
    const int32_t last = static_cast<int32_t>(std::ceil(m + 10 * sd + 8));
    double sum = 0;
    for (int32_t k = first_; k <= last; ++k) {
      sum += std::exp(k * std::log(m) - m - std::lgamma(k + 1.0));
      cdf_.push_back(sum);
    }
    for (double& c : cdf_) c /= sum;  // the tails beyond 10 sd: below 1e-20
  }
  int32_t operator()(uint64_t r) const {
    if (cdf_.empty()) return 0;
    const double u = double(r >> 11) * 0x1p-53;
    const size_t k = std::upper_bound(cdf_.begin(), cdf_.end(), u) - cdf_.begin();
    return first_ + static_cast<int32_t>(std::min(k, cdf_.size() - 1));
  }

 private:
  int32_t first_ = 0;
  std::vector<double> cdf_;
};

}  // namespace

void ExpectedShare::Capture(const Schedule& s, const WeightPlan& plan, const Roster& roster,
                            const std::vector<ControlState*>& controls, double interval_s) {
  const std::vector<uint32_t>& main_items = plan.main_items;
  const std::vector<double>& main_weights = plan.main_weights;
  const std::vector<uint32_t>& probe_items = plan.probe_items;
  const std::vector<double>& probe_weights = plan.probe_weights;
  in_.assign(roster.entries.size(), Input{});
  uint64_t results = 0;
  for (const ControlState* c : controls) results += c->cycle_results;
  const double results_per_s = interval_s > 0 ? double(results) / interval_s : 0.0;
  panic_ = s.panic;
  load_aware_ = s.mode == PickMode::kLoadAware;
  // Schedule::Pick: a probe when the draw falls under the threshold, or whenever nothing is in
  // rotation.
  probe_share_ = probe_items.empty() ? 0.0
                 : main_items.empty() ? 1.0
                                      : double(s.probe_threshold) / kTwo32;
  keepalive_share_ = double(s.keepalive_threshold) / kTwo32;
  rate_ = std::max(0.0, results_per_s);
  main_items_ = main_items;
  probe_items_ = probe_items;
  probe_weights_ = probe_weights;
  for (size_t k = 0; k < main_items.size(); ++k) {
    Input& e = in_[main_items[k]];
    e.weight = main_weights[k];
    if (!load_aware_) continue;
    const LoadEstimate& load = *roster.loads[main_items[k]];
    e.latency_ms = load.ewma_ms.load(std::memory_order_relaxed);
    e.mean_ms = controls[main_items[k]]->cycle_mean_ms;
    e.p99_ms = controls[main_items[k]]->stats.p99_ms;
    e.steady = load.SteadyFloor();
    e.fast = load.failure_ewma.load(std::memory_order_relaxed);
    e.evidence = load.FailureShare();
  }
  error_cost_ = s.error_cost;
  fast_weight_ = s.fast_weight;
  if (load_aware_ && !main_items.empty()) main_.Build(main_items, main_weights);
  solved_ = false;
}

const std::vector<double>& ExpectedShare::Shares() {
  if (!solved_) Solve();
  solved_ = true;
  return shares_;
}

void ExpectedShare::Solve() {
  const size_t n = in_.size();
  shares_.assign(n, 0.0);
  if (n == 0) return;
  if (panic_) {  // plain round-robin over every endpoint of the set
    std::fill(shares_.begin(), shares_.end(), 1.0 / double(n));
    return;
  }
  double probe_total = 0;
  for (double w : probe_weights_) probe_total += w;
  for (size_t k = 0; k < probe_items_.size(); ++k) {
    shares_[probe_items_[k]] += probe_share_ * probe_weights_[k] / probe_total;
  }
  if (main_items_.empty()) return;
  double main_total = 0;
  for (uint32_t i : main_items_) main_total += in_[i].weight;
  const double rotation = 1 - probe_share_;
  std::vector<double> by_weight(n, 0.0);
  for (uint32_t i : main_items_) by_weight[i] = in_[i].weight / main_total;
  if (!load_aware_) {  // the alias draw: frequencies equal the weights
    for (uint32_t i : main_items_) shares_[i] += rotation * by_weight[i];
    return;
  }
  // Two latencies per endpoint. Occupancy (Little's law) needs the mean: the last cycle's, over
  // served answers. The comparison reads the peak EWMA, which one slow answer sets and ten
  // seconds decay: its value at one instant differs between equal endpoints by tens of percent
  // that even out over a cycle, so the prediction reads the level that estimate tracks, a high
  // quantile of recent latencies, as the window's p99. (On the simulator's seed scenario, seed
  // 1, the EWMA as the cost put the p95 error at 28 points, the p99 at 20.) An endpoint without
  // served answers keeps its EWMA; one without any latency is reckoned at the others' mean for
  // its occupancy.
  double lat_sum = 0;
  int lat_n = 0;
  for (uint32_t i : main_items_) {
    Input& e = in_[i];
    if (e.p99_ms > 0 && e.latency_ms > 0) e.latency_ms = e.p99_ms;
    if (e.mean_ms > 0) lat_sum += e.mean_ms, ++lat_n;
  }
  const double lat_ref = lat_n > 0 ? lat_sum / lat_n : 0.0;
  const double k = keepalive_share_;
  // A fixed point over the in-flight counts: who wins the comparison depends on the queues, and
  // the queues on who wins (Little's law: mean in flight = rate x share x latency). Damped,
  // since an undamped step overshoots when one endpoint is much faster than the rest.
  std::vector<double> won = by_weight, wins, inflight(n, 0.0);
  const int rounds = rate_ > 0 ? kRounds : 1;
  for (int round = 0; round < rounds; ++round) {
    for (uint32_t i : main_items_) {
      const double lat = in_[i].mean_ms > 0 ? in_[i].mean_ms : lat_ref;
      const double share = rotation * (k * by_weight[i] + (1 - k) * won[i]);
      inflight[i] = rate_ * share * lat / 1000.0;
    }
    Compare(inflight, &wins);
    for (uint32_t i : main_items_) won[i] = round == 0 ? wins[i] : 0.5 * (won[i] + wins[i]);
  }
  for (uint32_t i : main_items_) shares_[i] += rotation * (k * by_weight[i] + (1 - k) * won[i]);
}

void ExpectedShare::Compare(const std::vector<double>& mean_inflight,
                            std::vector<double>* wins) const {
  const size_t n = in_.size();
  std::vector<InflightDraw> draw;
  draw.reserve(n);
  for (size_t i = 0; i < n; ++i) draw.emplace_back(in_[i].weight > 0 ? mean_inflight[i] : 0.0);
  // Schedule::Cost with a drawn in-flight count and the failure term against the alternative.
  auto cost = [&](uint32_t i, uint64_t r, double term) {
    const Input& e = in_[i];
    const int32_t pending = draw[i](r);
    if (e.latency_ms <= 0) return pending > 0 ? 1e300 + pending : 0.0;
    return e.latency_ms * (pending + 1) * (1 + term);
  };
  std::vector<uint32_t> count(n, 0);
  PickerRandom r;
  r.Seed(0x5eed, 0);  // the same inputs give the same shares
  // Schedule::PickByCost, draw for draw: two distinct candidates by weight, the cheaper wins
  // (ties to the first), and a failing candidate brings a third.
  for (uint32_t s = 0; s < kSamples; ++s) {
    const uint32_t a = main_.Sample(r.Next());
    uint32_t b = main_.Sample(r.Next());
    for (int t = 0; b == a && t < 4; ++t) b = main_.Sample(r.Next());
    const double ta = FailureTerm(in_[a], in_[b].evidence);
    const double tb = FailureTerm(in_[b], in_[a].evidence);
    const double ca = cost(a, r.Next(), ta), cb = cost(b, r.Next(), tb);
    uint32_t i = cb < ca ? b : a;
    if (a != b && std::max(ta, tb) >= 1) {
      uint32_t c = main_.Sample(r.Next());
      for (int t = 0; (c == a || c == b) && t < 4; ++t) c = main_.Sample(r.Next());
      if (c != a && c != b) {
        const double tc = FailureTerm(in_[c], in_[ca <= cb ? a : b].evidence);
        if (cost(c, r.Next(), tc) < std::min(ca, cb)) i = c;
      }
    }
    ++count[i];
  }
  wins->assign(n, 0.0);
  for (size_t i = 0; i < n; ++i) (*wins)[i] = double(count[i]) / kSamples;
}

double ExpectedShare::FailureTerm(const Input& e, double alt) const {
  return error_cost_ * PricedFailureShare(e.steady, e.fast, fast_weight_, alt);
}

}  // namespace weighted
