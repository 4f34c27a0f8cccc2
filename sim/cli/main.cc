// weighted-sim SCENARIO.json [--policy NAME ...] [--out DIR] [--seed N] [--engines FILE]
// --engines FILE adds engine variants: a JSON object {"engine_name": {config}, ...}.
// Prints the results table (Markdown) and, with --out, writes DIR/results.json and CSV series.
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>

#include "csv.h"
#include "weighted_sim/policy.h"
#include "weighted_sim/sim.h"

namespace {

int Usage() {
  std::fprintf(stderr,
               "usage: weighted-sim SCENARIO.json [--policy NAME ...] [--out DIR] [--seed N]\n"
               "                    [--engines VARIANTS.json] [--no-oracle]\n"
               "policies:\n");
  for (const auto& n : weighted_sim::PolicyNames())
    std::fprintf(stderr, "  %-24s %s\n", n.c_str(),
                 std::string(weighted_sim::PolicyDescription(n)).c_str());
  return 2;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace weighted_sim;
  std::string scenario_path;
  std::string out_dir;
  std::string engines_path;
  RunOptions options;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--policy" || a == "--out" || a == "--seed" || a == "--engines") && i + 1 >= argc)
      return Usage();
    if (a == "--policy") options.policies.push_back(argv[++i]);
    else if (a == "--out") out_dir = argv[++i];
    else if (a == "--seed") options.seed = std::stoull(argv[++i]);
    else if (a == "--engines") engines_path = argv[++i];
    else if (a == "--no-oracle") options.oracle = false;
    else if (a == "-h" || a == "--help") return Usage();
    else if (scenario_path.empty() && a.rfind("--", 0) != 0) scenario_path = a;
    else return Usage();
  }
  if (scenario_path.empty()) return Usage();
  try {
    Scenario scenario = ParseScenario(ReadFile(scenario_path));
    if (!engines_path.empty()) AddEngineConfigs(ReadFile(engines_path), &scenario);
    const Results results = RunScenario(scenario, options);

    std::cout << fmt::format("Scenario `{}`, seed {}, {} s simulated.\n\n", scenario.name,
                             results.seed, scenario.duration_s)
              << MarkdownTable(results) << "\n";
    double total_ms = 0;
    for (const PolicyResult& p : results.policies) total_ms += p.wall_ms;
    std::cerr << fmt::format("simulated {} policies in {:.0f} ms of CPU (slowest: ", results.policies.size(), total_ms);
    const PolicyResult* slowest = &results.policies.front();
    for (const PolicyResult& p : results.policies) if (p.wall_ms > slowest->wall_ms) slowest = &p;
    std::cerr << fmt::format("{} {:.0f} ms)\n", slowest->run.policy, slowest->wall_ms);

    if (!out_dir.empty()) {
      std::filesystem::create_directories(out_dir);
      std::ofstream json(std::filesystem::path(out_dir) / "results.json");
      json << ResultsToJson(results, true) << "\n";
      WriteCsv(results, out_dir);
      std::cerr << fmt::format("wrote {}/results.json and CSV series\n", out_dir);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "weighted-sim: %s\n", e.what());
    return 1;
  }
  return 0;
}
