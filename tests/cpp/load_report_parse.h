// Parsing a load report header in a test: one that must parse, and one that must be refused
// (its message returned) without touching the report it was parsed into.
#pragma once

#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "stats/load_report.h"
#include "util/status.h"

namespace weighted::testing {

inline LoadReport MustParse(std::string_view header, const LoadReportNames& names) {
  LoadReport r;
  Status s = ParseLoadReport("test", header, names, &r);
  EXPECT_TRUE(s.ok()) << s.message();
  return r;
}

inline std::string ParseError(std::string_view header, const LoadReportNames& names) {
  LoadReport r;
  r.present = 0xdead;  // must stay untouched on failure
  Status s = ParseLoadReport("test", header, names, &r);
  EXPECT_EQ(s.code(), WT_ERR_BAD_LOAD_REPORT) << header;
  EXPECT_EQ(r.present, 0xdeadu) << header;
  EXPECT_FALSE(r.has_latency) << header;
  return s.message();
}

}  // namespace weighted::testing
