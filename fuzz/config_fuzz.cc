// Fuzzes the config parser and validator through the C API, the way every binding reaches it.
//
// Properties checked on every input (a violation aborts, which libFuzzer reports as a crash):
//   - wt_config_validate and wt_config_resolve agree on the status;
//   - a rejection is one of WT_ERR_CONFIG_PARSE / WT_ERR_CONFIG_INVALID / WT_ERR_LIMIT and has a
//     message that says where (a line and column, a JSON pointer, or the sizes);
//   - an accepted document's resolved text is accepted again and resolves to itself
//     (resolve(resolve(x)) == resolve(x)), and an engine can be created and reloaded with it.
// ASan and UBSan watch everything underneath.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "weighted/weighted.h"

namespace {

[[noreturn]] void Fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_config: %s\n%s\n", what, detail.c_str());
  std::abort();
}

void CheckRejection(wt_status s, const char* text, size_t size) {
  const std::string message = wt_last_error();
  if (s != WT_ERR_CONFIG_PARSE && s != WT_ERR_CONFIG_INVALID && s != WT_ERR_LIMIT) {
    Fail("unexpected status", std::string(wt_status_name(s)) + ": " + message);
  }
  if (message.empty()) Fail("a rejection without a message", std::string(text, size));
  if (s == WT_ERR_CONFIG_PARSE && message.find("line ") == std::string::npos) {
    Fail("a parse error without line and column", message);
  }
  if (s == WT_ERR_CONFIG_INVALID && message[0] != '/' && message.rfind("(document)", 0) != 0) {
    Fail("an invalid config without a JSON pointer", message);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const char* text = reinterpret_cast<const char*>(data);
  const wt_status valid = wt_config_validate(text, size);
  char* resolved = nullptr;
  const wt_status status = wt_config_resolve(text, size, &resolved);
  if (valid != status) {
    Fail("validate and resolve disagree",
         std::string(wt_status_name(valid)) + " vs " + wt_status_name(status));
  }
  if (status != WT_OK) {
    CheckRejection(status, text, size);
    return 0;
  }
  const std::string first(resolved);
  wt_free(resolved);
  char* again = nullptr;
  if (wt_config_resolve(first.data(), first.size(), &again) != WT_OK) {
    Fail("the resolved form is rejected", std::string(wt_last_error()) + "\n" + first);
  }
  const std::string second(again);
  wt_free(again);
  if (first != second) Fail("resolve(resolve(x)) != resolve(x)", first + "\n----\n" + second);

  // A document that names a state file would have the fuzzer create files at paths it made up
  // (as whoever runs it): its engine is not made. The state file's reader has a fuzzer of its own.
  if (first.find("\"state_file\": \"\"") == std::string::npos) return 0;

  // The document is usable as it is: create an engine from it and reload its resolved form.
  wt_engine* engine = nullptr;
  if (wt_engine_create(text, size, WT_CLOCK_MANUAL, &engine) != WT_OK) {
    Fail("a valid config does not create an engine", wt_last_error());
  }
  if (wt_engine_reload(engine, first.data(), first.size()) != WT_OK) {
    Fail("an engine refuses the resolved form of its own config", wt_last_error());
  }
  wt_engine_destroy(engine);
  return 0;
}
