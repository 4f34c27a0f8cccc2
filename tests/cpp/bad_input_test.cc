// The bad-input table (docs/reliability.md), C part; docs/reliability.md lists it beside the Java
// and Python cases. Each case is one call with its expected status and message fragment, run on
// a live engine (two services, endpoints with traffic, a reload done), and proves that the state
// is unchanged: the snapshot JSON is equal before and after, and no event was raised.
//
// Config cases run three ways: wt_config_validate, wt_engine_create (which must leave *out
// untouched) and wt_engine_reload on the live engine (which must keep the old config).
#include <climits>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <gmock/gmock.h>

#include "harness.h"

namespace weighted::testing {
namespace {

using ::testing::HasSubstr;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

const char* const kConfig =
    R"({"seed": 42, "limits": {"max_services": 2, "max_endpoints_per_service": 4,
        "max_latency_ms": 60000}})";

class Live {
 public:
  Live() : h(kConfig) {
    h.Set({{"a", 100}, {"b", 100}});
    h.Drive(6, 40, [](const std::string& id) {
      return id == "a" ? Outcome{30, WT_OUTCOME_SUCCESS} : Outcome{20, WT_OUTCOME_SUCCESS};
    });
    EXPECT_EQ(wt_engine_service(h.engine(), "other", &other), WT_OK);
    EXPECT_EQ(wt_service_endpoint_key(h.svc(), "a", &key_a), WT_OK);
    EXPECT_EQ(wt_service_pick(h.svc(), &pick), WT_OK);
    EXPECT_EQ(wt_service_complete(h.svc(), &pick, 10, 0), WT_OK);
    DrainEvents();
  }
  void DrainEvents() {
    wt_event ev = WT_EVENT_INIT;
    int has = 1;
    while (has) EXPECT_EQ(wt_engine_poll_event(h.engine(), &ev, &has), WT_OK);
  }
  bool NoEvents() {
    wt_event ev = WT_EVENT_INIT;
    int has = 0;
    EXPECT_EQ(wt_engine_poll_event(h.engine(), &ev, &has), WT_OK);
    return has == 0;
  }
  wt_engine* e() { return h.engine(); }
  wt_service* s() { return h.svc(); }

  Harness h;
  wt_service* other = nullptr;
  uint64_t key_a = 0;
  wt_pick pick = WT_PICK_INIT;
};

// ---------------------------------------------------------------------------------------------
// Config documents

struct ConfigCase {
  const char* name;
  std::string json;
  wt_status status;
  const char* message;
};

std::string Padded(size_t size, const std::string& doc) {
  std::string s = doc;
  s.insert(1, size - doc.size(), ' ');
  return s;
}

std::vector<ConfigCase> ConfigCases() {
  std::string many_rules = R"({"rules": [)";
  for (int i = 0; i < 65; ++i) {
    many_rules += std::string(i ? "," : "") + R"({"metric": "cpu", "threshold": 0.8, "penalty": 0.1})";
  }
  many_rules += "]}";
  return {
      {"MalformedJson", R"({"seed": )", WT_ERR_CONFIG_PARSE, "line 1, column 10"},
      {"TrailingComma", R"({"seed": 1,})", WT_ERR_CONFIG_PARSE, "line 1, column 12"},
      {"Comment", "{\n  // no comments in JSON\n}", WT_ERR_CONFIG_PARSE, "line 2, column 3"},
      {"BadUtf8", "{\"$schema\": \"\xff\"}", WT_ERR_CONFIG_PARSE, "line 1"},
      {"NaNToken", R"({"panic": {"threshold": NaN}})", WT_ERR_CONFIG_PARSE, "line 1, column 25"},
      {"InfinityToken", R"({"seed": Infinity})", WT_ERR_CONFIG_PARSE, "line 1, column 10"},
      {"NumberBeyondDouble", R"({"window": {"length_ms": 1e400}})", WT_ERR_CONFIG_PARSE,
       "number 1e400 is too large for a double"},
      {"Oversized", Padded((1 << 20) + 1, "{}"), WT_ERR_LIMIT,
       "1048577 bytes, over the limit of 1048576"},
      {"LargerThanItsOwnLimit", Padded(16385, R"({"limits": {"max_config_bytes": 16384}})"),
       WT_ERR_LIMIT, "/limits/max_config_bytes: this document is 16385 bytes, more than the 16384"},
      {"TopLevelArray", "[]", WT_ERR_CONFIG_INVALID, "(document): must be an object, got an array"},
      {"WrongTypeString", R"({"controller": {"interval_ms": "5s"}})", WT_ERR_CONFIG_INVALID,
       "/controller/interval_ms: must be an integer, got string \"5s\""},
      {"NaNAsString", R"({"panic": {"threshold": "NaN"}})", WT_ERR_CONFIG_INVALID,
       "/panic/threshold: must be a number, got string \"NaN\""},
      {"WrongTypeRules", R"({"rules": {"metric": "cpu"}})", WT_ERR_CONFIG_INVALID,
       "/rules: must be an array of rules, got an object"},
      {"FractionalInteger", R"({"window": {"min_requests": 1.5}})", WT_ERR_CONFIG_INVALID,
       "/window/min_requests: must be an integer, got 1.5"},
      {"OutOfRange", R"({"controller": {"max_step": 2}})", WT_ERR_CONFIG_INVALID,
       "/controller/max_step: must be in (0, 1], got 2"},
      {"Negative", R"({"controller": {"cooldown_ms": -1}})", WT_ERR_CONFIG_INVALID,
       "/controller/cooldown_ms: must be an integer in [0, 86400000], got -1"},
      {"NegativeSeed", R"({"seed": -1})", WT_ERR_CONFIG_INVALID, "/seed: must be an integer in [0, "},
      {"LongerThanADay", R"({"isolation": {"max_ms": 86400001}})", WT_ERR_CONFIG_INVALID,
       "/isolation/max_ms: must be an integer in [1, 86400000]"},
      {"ZeroServices", R"({"limits": {"max_services": 0}})", WT_ERR_CONFIG_INVALID,
       "/limits/max_services: must be an integer in [1, 1000000], got 0"},
      {"EndpointLimitTooHigh", R"({"limits": {"max_endpoints_per_service": 2000000}})",
       WT_ERR_CONFIG_INVALID, "/limits/max_endpoints_per_service: must be an integer in [1, 1000000]"},
      {"WindowShorterThanCycle", R"({"window": {"length_ms": 4000}})", WT_ERR_CONFIG_INVALID,
       "/window/length_ms: window.length_ms (4000) is shorter than controller.interval_ms (5000)"},
      {"IsolationShorterThanCycle", R"({"isolation": {"max_ms": 1000}})", WT_ERR_CONFIG_INVALID,
       "/isolation/max_ms: isolation.max_ms (1000) is shorter than controller.interval_ms"},
      {"NoWayOutOfIsolation",
       R"({"isolation": {"probe_share": 0, "probe_min_per_s": 0.1, "exit_min_probes": 3}})",
       WT_ERR_CONFIG_INVALID, "it could never leave isolation"},
      {"ThresholdAboveMaxLatency",
       R"({"rules": [{"metric": "latency_p99", "threshold_ms": 70000, "penalty": 0.3}],
           "limits": {"max_latency_ms": 60000}})",
       WT_ERR_CONFIG_INVALID, "/rules/0/threshold_ms: rules[0].threshold_ms (70000) is above"},
      {"LatencyRuleWithFraction",
       R"({"rules": [{"metric": "latency_p99", "threshold": 0.5, "penalty": 0.3}]})",
       WT_ERR_CONFIG_INVALID, "spell its absolute threshold \"threshold_ms\""},
      {"TooManyRules", many_rules, WT_ERR_CONFIG_INVALID, "/rules: at most 64 rules are allowed, got 65"},
      {"UnknownKeyTypo", R"({"controller": {"intreval_ms": 5000}})", WT_ERR_CONFIG_INVALID,
       "/controller/intreval_ms: unknown key; did you mean \"interval_ms\"?"},
      {"KeyAtTheWrongLevel", R"({"cooldown_ms": 5000})", WT_ERR_CONFIG_INVALID,
       "/cooldown_ms: unknown key; \"cooldown_ms\" belongs in /controller"},
      {"DuplicateKey", R"({"seed": 1, "seed": 2})", WT_ERR_CONFIG_INVALID,
       "/seed: duplicate key"},
      {"UnknownProfile", R"({"profile": "fast"})", WT_ERR_CONFIG_INVALID,
       "/profile: must be one of \"default\", \"article\", got string \"fast\""},
      {"EmptyDocument", "", WT_ERR_CONFIG_PARSE, "line 1, column 1"},
  };
}

class BadConfig : public ::testing::TestWithParam<ConfigCase> {};

TEST_P(BadConfig, IsRefusedEverywhereAndTheOldConfigStays) {
  const ConfigCase& c = GetParam();
  EXPECT_EQ(wt_config_validate(c.json.data(), c.json.size()), c.status) << wt_last_error();
  EXPECT_THAT(std::string(wt_last_error()), HasSubstr(c.message));

  wt_engine* sentinel = reinterpret_cast<wt_engine*>(0x1);
  wt_engine* out = sentinel;
  EXPECT_EQ(wt_engine_create(c.json.data(), c.json.size(), WT_CLOCK_MANUAL, &out), c.status);
  EXPECT_THAT(std::string(wt_last_error()), HasSubstr(c.message));
  EXPECT_EQ(out, sentinel) << "out-parameters are written only on WT_OK";

  Live live;
  const json before = live.h.Snapshot();
  EXPECT_EQ(wt_engine_reload(live.e(), c.json.data(), c.json.size()), c.status);
  EXPECT_THAT(std::string(wt_last_error()), HasSubstr(c.message));
  EXPECT_EQ(live.h.Snapshot(), before) << "a rejected reload changed the state";
  EXPECT_TRUE(live.NoEvents()) << "a rejected reload raised an event";
  // The old config is still the one in force: its endpoint limit (4) still applies.
  wt_endpoint_spec five[] = {Spec("1", 1), Spec("2", 1), Spec("3", 1), Spec("4", 1), Spec("5", 1)};
  EXPECT_EQ(wt_service_set_endpoints(live.other, five, 5, nullptr, nullptr, nullptr), WT_ERR_LIMIT);
}

INSTANTIATE_TEST_SUITE_P(Table, BadConfig, ::testing::ValuesIn(ConfigCases()),
                         [](const auto& info) { return std::string(info.param.name); });

// ---------------------------------------------------------------------------------------------
// Calls

struct CallCase {
  const char* name;
  std::function<wt_status(Live&)> call;
  wt_status status;
  const char* message;
};

std::vector<wt_endpoint_spec> Specs(const std::vector<std::string>& ids, double w = 1) {
  static thread_local std::vector<std::string> keep;
  keep = ids;
  std::vector<wt_endpoint_spec> specs;
  for (const std::string& id : keep) specs.push_back(Spec(id.c_str(), w));
  return specs;
}

wt_status SetEps(wt_service* s, const std::vector<wt_endpoint_spec>& specs) {
  return wt_service_set_endpoints(s, specs.data(), specs.size(), nullptr, nullptr, nullptr);
}

std::vector<CallCase> CallCases() {
  const std::string long_id(257, 'x');
  return {
      // NULL handles and pointers
      {"NullEngine", [](Live&) { return wt_engine_reload(nullptr, "{}", 2); },
       WT_ERR_INVALID_ARGUMENT, "wt_engine_reload: engine is NULL"},
      {"NullService", [](Live& l) { return wt_service_pick(nullptr, &l.pick); },
       WT_ERR_INVALID_ARGUMENT, "wt_service_pick: service is NULL"},
      {"NullPickOut", [](Live& l) { return wt_service_pick(l.s(), nullptr); },
       WT_ERR_INVALID_ARGUMENT, "wt_service_pick: out is NULL"},
      {"NullConfigText", [](Live& l) { return wt_engine_reload(l.e(), nullptr, 5); },
       WT_ERR_INVALID_ARGUMENT, "json is NULL"},
      {"NullSnapshotOut", [](Live& l) { return wt_engine_snapshot_json(l.e(), nullptr, nullptr); },
       WT_ERR_INVALID_ARGUMENT, "out_json is NULL"},
      {"NullSpecsWithCount", [](Live& l) { return wt_service_set_endpoints(l.s(), nullptr, 3, nullptr, nullptr, nullptr); },
       WT_ERR_INVALID_ARGUMENT, "specs is NULL"},
      {"NullEndpointId", [](Live& l) { return wt_service_report(l.s(), nullptr, 1, 0); },
       WT_ERR_INVALID_ARGUMENT, "endpoint_id is NULL"},
      {"NullServiceName", [](Live& l) { wt_service* s; return wt_engine_service(l.e(), nullptr, &s); },
       WT_ERR_INVALID_ARGUMENT, "name is NULL"},
      {"NullResources", [](Live& l) { return wt_service_report_resources(l.s(), "a", nullptr); },
       WT_ERR_INVALID_ARGUMENT, "resources is NULL"},
      // outcomes: NaN, inf, negative, absurd, unknown
      {"NaNLatency", [](Live& l) { return wt_service_complete(l.s(), &l.pick, kNaN, 0); },
       WT_ERR_INVALID_ARGUMENT, "latency_ms must be finite and in [0, 60000] (limits.max_latency_ms), got nan"},
      {"InfiniteLatency", [](Live& l) { return wt_service_report_key(l.s(), l.key_a, kInf, 0); },
       WT_ERR_INVALID_ARGUMENT, "got inf"},
      {"NegativeLatency", [](Live& l) { return wt_service_report(l.s(), "a", -0.5, 0); },
       WT_ERR_INVALID_ARGUMENT, "got -0.5"},
      {"LatencyAboveLimit", [](Live& l) { return wt_service_report(l.s(), "a", 60000.5, 0); },
       WT_ERR_INVALID_ARGUMENT, "limits.max_latency_ms"},
      {"UnknownOutcome", [](Live& l) { return wt_service_report(l.s(), "a", 1, 5); },
       WT_ERR_INVALID_ARGUMENT, "outcome must be a wt_outcome (0..4), got 5"},
      {"NegativeOutcome", [](Live& l) { return wt_service_report_key(l.s(), l.key_a, 1, -1); },
       WT_ERR_INVALID_ARGUMENT, "got -1"},
      {"UnknownEndpointId", [](Live& l) { return wt_service_report(l.s(), "zz", 1, 0); },
       WT_ERR_NOT_FOUND, "no endpoint \"zz\" in service \"svc\""},
      // resources
      {"ResourceNaN", [](Live& l) { wt_resources r{sizeof(wt_resources), WT_RES_CPU, kNaN, 0, 0, 0};
                                    return wt_service_report_resources(l.s(), "a", &r); },
       WT_ERR_INVALID_ARGUMENT, "cpu must be a fraction in [0, 1], got nan"},
      {"ResourceAboveOne", [](Live& l) { wt_resources r{sizeof(wt_resources), WT_RES_MEMORY, 0, 1.01, 0, 0};
                                         return wt_service_report_resources(l.s(), "a", &r); },
       WT_ERR_INVALID_ARGUMENT, "memory must be a fraction in [0, 1], got 1.01"},
      {"ResourceNegative", [](Live& l) { wt_resources r{sizeof(wt_resources), WT_RES_THREAD_POOL, 0, 0, -0.1, 0};
                                         return wt_service_report_resources(l.s(), "a", &r); },
       WT_ERR_INVALID_ARGUMENT, "thread_pool must be a fraction"},
      {"ResourceUnknownBits", [](Live& l) { wt_resources r{sizeof(wt_resources), 1u << 7, 0, 0, 0, 0};
                                            return wt_service_report_resources(l.s(), "a", &r); },
       WT_ERR_INVALID_ARGUMENT, "unknown bits 0x80"},
      // endpoint sets
      {"DuplicateIds", [](Live& l) { return SetEps(l.s(), Specs({"a", "c", "a"})); },
       WT_ERR_DUPLICATE, "endpoint id \"a\" appears twice (specs[2])"},
      {"EmptyId", [](Live& l) { return SetEps(l.s(), Specs({"a", ""})); },
       WT_ERR_INVALID_ARGUMENT, "specs[1].id must be 1..256 bytes, got 0"},
      {"LongId", [long_id](Live& l) { return SetEps(l.s(), Specs({long_id})); },
       WT_ERR_INVALID_ARGUMENT, "specs[0].id must be 1..256 bytes, got 257"},
      {"IdNotUtf8", [](Live& l) { return SetEps(l.s(), Specs({"a", "b\xff"})); },
       WT_ERR_INVALID_ARGUMENT, "specs[1].id is not valid UTF-8"},
      {"NullIdInSpecs", [](Live& l) { wt_endpoint_spec s[] = {Spec("a", 1), Spec(nullptr, 1)};
                                      return wt_service_set_endpoints(l.s(), s, 2, nullptr, nullptr, nullptr); },
       WT_ERR_INVALID_ARGUMENT, "specs[1].id is NULL"},
      {"ZeroWeight", [](Live& l) { return SetEps(l.s(), Specs({"a"}, 0)); },
       WT_ERR_INVALID_ARGUMENT, "must be finite and in (0, 1e+09], got 0"},
      {"NegativeWeight", [](Live& l) { return SetEps(l.s(), Specs({"a"}, -3)); },
       WT_ERR_INVALID_ARGUMENT, "got -3"},
      {"NaNWeight", [](Live& l) { return SetEps(l.s(), Specs({"a"}, kNaN)); },
       WT_ERR_INVALID_ARGUMENT, "got nan"},
      {"InfiniteWeight", [](Live& l) { return SetEps(l.s(), Specs({"a"}, kInf)); },
       WT_ERR_INVALID_ARGUMENT, "got inf"},
      {"AbsurdWeight", [](Live& l) { return SetEps(l.s(), Specs({"a"}, 2e9)); },
       WT_ERR_INVALID_ARGUMENT, "got 2000000000"},
      {"MoreEndpointsThanTheLimit", [](Live& l) { return SetEps(l.s(), Specs({"1", "2", "3", "4", "5"})); },
       WT_ERR_LIMIT, "5 endpoints exceed limits.max_endpoints_per_service = 4"},
      {"EnormousEndpointCount", [](Live& l) {
         // The count is checked before a single spec is read: 2^40 specs that do not exist.
         wt_endpoint_spec one = Spec("a", 1);
         return wt_service_set_endpoints(l.s(), &one, size_t{1} << 40, nullptr, nullptr, nullptr); },
       WT_ERR_LIMIT, "1099511627776 endpoints exceed limits.max_endpoints_per_service = 4"},
      // services
      {"MoreServicesThanTheLimit", [](Live& l) { wt_service* s; return wt_engine_service(l.e(), "third", &s); },
       WT_ERR_LIMIT, "cannot create service \"third\": limits.max_services = 2 reached"},
      {"EmptyServiceName", [](Live& l) { wt_service* s; return wt_engine_service(l.e(), "", &s); },
       WT_ERR_INVALID_ARGUMENT, "name must be 1..256 bytes, got 0"},
      {"ServiceNameNotUtf8", [](Live& l) { wt_service* s; return wt_engine_service(l.e(), "\xc3", &s); },
       WT_ERR_INVALID_ARGUMENT, "name is not valid UTF-8"},
      {"ReloadBelowTheServiceCount", [](Live& l) {
         const std::string c = R"({"seed": 42, "limits": {"max_services": 1}})";
         return wt_engine_reload(l.e(), c.data(), c.size()); },
       WT_ERR_LIMIT, "the engine has 2 services, more than the new limits.max_services = 1"},
      {"ReloadBelowAnEndpointSetSize", [](Live& l) {
         const std::string c = R"({"seed": 42, "limits": {"max_endpoints_per_service": 1}})";
         return wt_engine_reload(l.e(), c.data(), c.size()); },
       WT_ERR_LIMIT, "has 2 endpoints, more than the new limits.max_endpoints_per_service = 1"},
      // picks, clocks, files, buffers
      // sized structs (weighted.h, "Compatibility")
      {"SpecSizeTooSmall", [](Live& l) {
         wt_endpoint_spec one[] = {Spec("a", 100)};
         one[0].size = 8;
         return wt_service_set_endpoints(l.s(), one, 1, nullptr, nullptr, nullptr); },
       WT_ERR_INVALID_ARGUMENT, "specs[0].size is 8, less than sizeof(wt_endpoint_spec)"},
      {"SpecSizesDiffer", [](Live& l) {
         wt_endpoint_spec two[] = {Spec("a", 100), Spec("b", 100)};
         two[1].size = 24;
         return wt_service_set_endpoints(l.s(), two, 2, nullptr, nullptr, nullptr); },
       WT_ERR_INVALID_ARGUMENT, "specs[1].size is 24, but specs[0].size is 32"},
      // A struct's size is a multiple of its alignment: another stride would read misaligned
      // elements (found by fuzz_api under UBSan).
      {"SpecSizeNotAStructsSize", [](Live& l) {
         wt_endpoint_spec one[] = {Spec("a", 100)};
         one[0].size = sizeof(wt_endpoint_spec) + 3;
         return wt_service_set_endpoints(l.s(), one, 1, nullptr, nullptr, nullptr); },
       WT_ERR_INVALID_ARGUMENT, "specs[0].size is 35, not a multiple of the struct's alignment (8)"},
      {"ReportSizeNotAStructsSize", [](Live& l) {
         wt_report r[1] = {WT_REPORT_INIT};
         r[0].key = 1;
         r[0].size = sizeof(wt_report) + 4;
         size_t recorded = 0;
         return wt_service_report_batch(l.s(), r, 1, &recorded); },
       WT_ERR_INVALID_ARGUMENT, "reports[0].size is"},
      {"OptionsSizeTooSmall", [](Live& l) {
         wt_endpoint_spec one[] = {Spec("a", 100)};
         wt_endpoints_options o = WT_ENDPOINTS_OPTIONS_INIT;
         o.size = 0;
         return wt_service_set_endpoints(l.s(), one, 1, &o, nullptr, nullptr); },
       WT_ERR_INVALID_ARGUMENT, "options.size is 0"},
      {"PickSizeTooSmall", [](Live& l) {
         wt_pick p = WT_PICK_INIT;
         p.size = 4;
         return wt_service_pick(l.s(), &p); },
       WT_ERR_INVALID_ARGUMENT, "out.size is 4, less than sizeof(wt_pick) = 40"},
      {"CompleteWithUnsizedPick", [](Live& l) {
         wt_pick p{};
         return wt_service_complete(l.s(), &p, 1, WT_OUTCOME_SUCCESS); },
       WT_ERR_INVALID_ARGUMENT, "wt_service_complete: pick.size is 0"},
      {"PollWithUnsizedEvent", [](Live& l) {
         wt_event ev{};
         int has = 0;
         return wt_engine_poll_event(l.e(), &ev, &has); },
       WT_ERR_INVALID_ARGUMENT, "wt_engine_poll_event: out.size is 0"},
      {"PickOnAnEmptyService", [](Live& l) { return wt_service_pick(l.other, &l.pick); },
       WT_ERR_NO_ENDPOINT, "service \"other\" has no endpoints"},
      {"AdvanceBackwards", [](Live& l) { return wt_engine_advance(l.e(), -1); },
       WT_ERR_INVALID_ARGUMENT, "delta_ns must be >= 0"},
      {"AdvanceOverAMillionCycles", [](Live& l) {
         return wt_engine_advance(l.e(), int64_t{100} * 86400 * 1000000000); },  // 100 days of 5-s cycles
       WT_ERR_INVALID_ARGUMENT, "spans more than 1000000 controller cycles"},
      {"AdvancePastTheEnd", [](Live& l) { return wt_engine_advance(l.e(), LLONG_MAX); },
       WT_ERR_INVALID_ARGUMENT, "past its end"},
      {"UnknownClockMode", [](Live&) { wt_engine* e; return wt_engine_create("{}", 2, 7, &e); },
       WT_ERR_INVALID_ARGUMENT, "clock_mode must be WT_CLOCK_REAL (0) or WT_CLOCK_MANUAL (1), got 7"},
      {"MissingConfigFile", [](Live& l) { return wt_engine_reload_from_file(l.e(), "/nonexistent/w.json"); },
       WT_ERR_IO, "cannot open \"/nonexistent/w.json\""},
      {"ConfigFileIsADirectory", [](Live& l) { return wt_engine_reload_from_file(l.e(), "/tmp"); },
       WT_ERR_IO, "cannot read \"/tmp\": it is a directory"},
      {"ConfigFileIsADevice", [](Live& l) { return wt_engine_reload_from_file(l.e(), "/dev/zero"); },
       WT_ERR_LIMIT, "more than limits.max_config_bytes"},
      {"IdBufferTooSmall", [](Live& l) { char b[1]; size_t n;
                                         return wt_service_endpoint_id(l.s(), l.key_a, b, 1, &n); },
       WT_ERR_INVALID_ARGUMENT, "buffer of 1 bytes is too small for an id of 1 bytes plus NUL"},
      {"KeyOfUnknownId", [](Live& l) { uint64_t k; return wt_service_endpoint_key(l.s(), "zz", &k); },
       WT_ERR_NOT_FOUND, "no endpoint \"zz\""},
  };
}

class BadCall : public ::testing::TestWithParam<CallCase> {};

TEST_P(BadCall, IsRefusedWithItsMessageAndChangesNothing) {
  const CallCase& c = GetParam();
  Live live;
  const json before = live.h.Snapshot();
  EXPECT_EQ(c.call(live), c.status) << wt_last_error();
  EXPECT_THAT(std::string(wt_last_error()), HasSubstr(c.message));
  EXPECT_EQ(live.h.Snapshot(), before) << "a rejected call changed the state";
  EXPECT_TRUE(live.NoEvents()) << "a rejected call raised an event";
}

INSTANTIATE_TEST_SUITE_P(Table, BadCall, ::testing::ValuesIn(CallCases()),
                         [](const auto& info) { return std::string(info.param.name); });

// The one documented exception to "nothing changes": a report on a key whose endpoint has been
// removed is refused as stale and counted as such, so that no outcome is silently lost.
TEST(BadCallStale, AReportOnARemovedEndpointIsRefusedAndCountedAsStale) {
  Live live;
  uint64_t key_b;
  ASSERT_EQ(wt_service_endpoint_key(live.s(), "b", &key_b), WT_OK);
  live.h.Set({{"a", 100}});
  live.DrainEvents();
  json before = live.h.Snapshot();
  EXPECT_EQ(wt_service_report_key(live.s(), key_b, 5, 0), WT_ERR_STALE);
  EXPECT_THAT(wt_last_error(), HasSubstr("is not in service \"svc\""));
  json after = live.h.Snapshot();
  size_t i = 0;
  while (i < after["services"].size() && after["services"][i]["name"] != "svc") ++i;
  ASSERT_LT(i, after["services"].size());
  EXPECT_EQ(after["services"][i]["stale_reports"], before["services"][i]["stale_reports"].get<int>() + 1);
  after["services"][i]["stale_reports"] = before["services"][i]["stale_reports"];
  EXPECT_EQ(after, before) << "nothing else changed";
}

}  // namespace
}  // namespace weighted::testing
