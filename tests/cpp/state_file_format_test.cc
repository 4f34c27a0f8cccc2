// A monitor refuses what it does not understand with a message naming the check, and reads
// through what a crashed writer leaves: each case patches a real state file the way damage, an
// old or new writer, or a crash would.
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include <gmock/gmock.h>

#include "export/snapshot_record.h"
#include "export/state_format.h"
#include "harness.h"
#include "state_file_helpers.h"

namespace weighted::testing {
namespace {

namespace sf = state_format;

class StateFileFormat : public ::testing::Test {
 protected:
  void SetUp() override {
    good_ = dir_.file("good.state");
    Harness h(Config(good_, R"("state_history": 10, "state_events": 16)"));
    h.Set({{"a", 100}, {"b", 100}});
    wt_engine_advance(h.engine(), 15 * kSecond);
  }

  sf::Header ReadHeader(const std::string& path) {
    sf::Header h{};
    std::ifstream in(path, std::ios::binary);
    in.read(reinterpret_cast<char*>(&h), sizeof h);
    return h;
  }

  // A copy of the good file with `patch` applied to its bytes.
  std::string Variant(const std::string& name, const std::function<void(std::string&)>& patch) {
    std::ifstream in(good_, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    patch(bytes);
    const std::string path = dir_.file(name);
    std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
    return path;
  }

  template <typename T>
  static void Put(std::string& bytes, size_t offset, T value) {
    std::memcpy(bytes.data() + offset, &value, sizeof value);
  }

  // The hash of the slot at `slot` recomputed over its payload, as a forger would.
  static void Rehash(std::string& b, uint64_t slot) {
    const auto* sh = reinterpret_cast<const sf::SlotHeader*>(b.data() + slot);
    Put<uint64_t>(b, slot + offsetof(sf::SlotHeader, hash),
                  sf::Hash(b.data() + slot + sizeof(sf::SlotHeader), sh->length));
  }

  // Where the good file's record (at `record`) keeps its first service and first endpoint, as
  // snapshot_record.h lays it out (the harness's engine has no metric source).
  uint64_t FirstServiceRecord(uint64_t record) {
    const std::string b = Bytes();
    SnapshotHead head;
    std::memcpy(&head, b.data() + record, sizeof head);
    EXPECT_EQ(head.sources, 0u);
    uint64_t at = record + sizeof head;
    at += 8 + (Get(b, at) + 7) / 8 * 8;  // the profile
    return at + 8;                       // after the service marker
  }
  uint64_t FirstBudgetRecord(uint64_t record) {
    const std::string b = Bytes();
    uint64_t at = FirstServiceRecord(record) + sizeof(ServiceRecord);
    return at + 8 + (Get(b, at) + 7) / 8 * 8;  // after the service's name
  }
  uint64_t FirstEndpointRecord(uint64_t record) {
    // A 2.2 writer's record: the budget's and the guard's after the name.
    return FirstBudgetRecord(record) + sizeof(BudgetRecord) + sizeof(GuardRecord);
  }
  static uint64_t Get(const std::string& b, uint64_t at) {
    uint64_t v;
    std::memcpy(&v, b.data() + at, sizeof v);
    return v;
  }
  std::string Bytes() {
    std::ifstream in(good_, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }

  // The offset of the newest snapshot's slot in the good file.
  uint64_t NewestSnapshotSlot() {
    const sf::Header h = ReadHeader(good_);
    return h.snapshot_offset[(h.snapshots - 1) % 2];
  }

  static std::string OpenError(const std::string& path, wt_status expected) {
    wt_monitor* m = nullptr;
    EXPECT_EQ(wt_monitor_open(path.c_str(), &m), expected);
    EXPECT_EQ(m, nullptr);
    return wt_last_error();
  }
  static std::string SnapshotError(const std::string& path) {
    wt_monitor* m = nullptr;
    EXPECT_EQ(wt_monitor_open(path.c_str(), &m), WT_OK) << wt_last_error();
    char* t = nullptr;
    EXPECT_EQ(wt_monitor_snapshot_json(m, &t, nullptr), WT_ERR_FORMAT);
    std::string message = wt_last_error();
    wt_free(t);
    wt_monitor_close(m);
    return message;
  }

  TempDir dir_;
  std::string good_;
};

MATCHER_P(Says, part, "") { return arg.find(part) != std::string::npos; }

TEST_F(StateFileFormat, TheGoodFileReads) {
  Monitor m(good_);
  EXPECT_EQ(json::parse(m.Snapshot())["services"][0]["endpoints"].size(), 2u);
}

TEST_F(StateFileFormat, HeadersItDoesNotUnderstandAreRefused) {
  EXPECT_THAT(OpenError(Variant("magic", [](std::string& b) { b[0] = 'X'; }), WT_ERR_FORMAT),
              Says("bad magic"));
  EXPECT_THAT(OpenError(Variant("v4", [](std::string& b) {
                Put<uint32_t>(b, offsetof(sf::Header, major), 4);
              }), WT_ERR_FORMAT), Says("format version 4.1; this library reads 3.x"));
  // A 2.x file's records are shorter (no budget, guard or subset; shorter endpoint records).
  EXPECT_THAT(OpenError(Variant("v2", [](std::string& b) {
                Put<uint32_t>(b, offsetof(sf::Header, major), 2);
              }), WT_ERR_FORMAT), Says("format version 2.1; this library reads 3.x"));
  // A 3.0 file's endpoint records are 8 bytes shorter (no expected share).
  EXPECT_THAT(OpenError(Variant("v3.0", [](std::string& b) {
                Put<uint32_t>(b, offsetof(sf::Header, minor), 0);
              }), WT_ERR_FORMAT), Says("format version 3.0: its endpoint records lack the expected share"));
  // A 1.x file held the snapshot as JSON text, which this reader would take for a record.
  EXPECT_THAT(OpenError(Variant("v1", [](std::string& b) {
                Put<uint32_t>(b, offsetof(sf::Header, major), 1);
              }), WT_ERR_FORMAT), Says("format version 1.1; this library reads 3.x"));
  EXPECT_THAT(OpenError(Variant("endian", [](std::string& b) {
                Put<uint32_t>(b, offsetof(sf::Header, endian_tag), 0x04030201);
              }), WT_ERR_FORMAT), Says("byte order"));
  EXPECT_THAT(OpenError(Variant("short", [](std::string& b) { b.resize(100); }), WT_ERR_FORMAT),
              Says("shorter than a header"));
  EXPECT_THAT(OpenError(Variant("cut", [](std::string& b) { b.resize(b.size() / 2); }),
                        WT_ERR_FORMAT), Says("truncated?"));
  EXPECT_THAT(OpenError(Variant("slots0", [](std::string& b) {
                Put<uint64_t>(b, offsetof(sf::Header, history_slots), 0);
              }), WT_ERR_FORMAT), Says("history: 0 slots"));
  EXPECT_THAT(OpenError(Variant("far", [](std::string& b) {
                Put<uint64_t>(b, offsetof(sf::Header, events_offset), ~uint64_t{0} - 100);
              }), WT_ERR_FORMAT), Says("events: offset"));
  EXPECT_THAT(OpenError(Variant("overflow", [](std::string& b) {
                Put<uint64_t>(b, offsetof(sf::Header, event_slots), sf::kMaxSlots);
                Put<uint64_t>(b, offsetof(sf::Header, event_slot_bytes), sf::kMaxSlotBytes);
              }), WT_ERR_FORMAT), Says("does not fit"));
  EXPECT_THAT(OpenError(Variant("state", [](std::string& b) {
                Put<uint64_t>(b, offsetof(sf::Header, state), 9);
              }), WT_ERR_FORMAT), Says("writer state 9"));
  EXPECT_THAT(OpenError(Variant("name", [](std::string& b) {
                std::memset(b.data() + offsetof(sf::Header, service), 'x', sf::kMaxServiceName + 8);
              }), WT_ERR_FORMAT), Says("unterminated"));
}

// A count at 2^64 - 1 made the history and event loops (n <= newest) run forever: found by
// fuzz_monitor (its input is fuzz/corpus/monitor/counters-at-max).
TEST_F(StateFileFormat, CountsNoWriterCouldReachAreRefused) {
  for (auto [field, name] : {std::pair{offsetof(sf::Header, history_points), "history points"},
                             std::pair{offsetof(sf::Header, events), "events"},
                             std::pair{offsetof(sf::Header, snapshots), "snapshots"}}) {
    EXPECT_THAT(OpenError(Variant(name, [field = field](std::string& b) {
                  Put<uint64_t>(b, field, ~uint64_t{0});
                }), WT_ERR_FORMAT), Says(std::string(name) + " count 18446744073709551615"));
  }
  // The largest count accepted still reads (nothing: those slots hold other numbers).
  Monitor m(Variant("max", [](std::string& b) {
    Put<uint64_t>(b, offsetof(sf::Header, events), sf::kMaxCount);
  }));
  EXPECT_EQ(json::parse(m.Events(0, 0))["events"].size(), 0u);
}

TEST_F(StateFileFormat, WhatIsNoStateFileAtAll) {
  EXPECT_THAT(OpenError(dir_.file("missing"), WT_ERR_IO), Says("No such file"));
  EXPECT_THAT(OpenError(dir_.path(), WT_ERR_FORMAT), Says("not a regular file"));
  std::ofstream(dir_.file("empty"));
  EXPECT_THAT(OpenError(dir_.file("empty"), WT_ERR_FORMAT), Says("shorter than a header"));
  std::ofstream(dir_.file("text")) << std::string(8192, '{');
  EXPECT_THAT(OpenError(dir_.file("text"), WT_ERR_FORMAT), Says("bad magic"));
  wt_monitor* m = nullptr;
  EXPECT_EQ(wt_monitor_open(nullptr, &m), WT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(wt_monitor_open(good_.c_str(), nullptr), WT_ERR_INVALID_ARGUMENT);
  char* t = nullptr;
  EXPECT_EQ(wt_monitor_snapshot_json(nullptr, &t, nullptr), WT_ERR_INVALID_ARGUMENT);
  wt_monitor_close(nullptr);
}

TEST_F(StateFileFormat, DamagedSlotsAreErrorsNotText) {
  const uint64_t slot = NewestSnapshotSlot();
  EXPECT_THAT(SnapshotError(Variant("flip", [&](std::string& b) {
                b[slot + sizeof(sf::SlotHeader) + 10] ^= 0x20;
              })), Says("fails its hash"));
  EXPECT_THAT(SnapshotError(Variant("long", [&](std::string& b) {
                Put<uint64_t>(b, slot + offsetof(sf::SlotHeader, length), uint64_t{1} << 40);
              })), Says("claims"));
  // The history and event slots hold JSON text: a NUL there is refused even with its hash.
  const sf::Header h = ReadHeader(good_);
  const uint64_t point = h.history_offset + ((h.history_points - 1) % h.history_slots) *
                                                h.history_slot_bytes;
  const std::string nul = Variant("nul", [&](std::string& b) {
    b[point + sizeof(sf::SlotHeader) + 3] = '\0';
    Rehash(b, point);
  });
  wt_monitor* m = nullptr;
  ASSERT_EQ(wt_monitor_open(nul.c_str(), &m), WT_OK) << wt_last_error();
  char* t = nullptr;
  EXPECT_EQ(wt_monitor_history_json(m, 0, 0, &t, nullptr), WT_ERR_FORMAT);
  EXPECT_THAT(std::string(wt_last_error()), Says("NUL"));
  wt_monitor_close(m);
}

// A snapshot record that passes its hash (a hostile or buggy writer made it so) is still read as
// hostile: each case below forges one and recomputes the hash. The message says what and where.
TEST_F(StateFileFormat, ForgedSnapshotRecordsAreRefusedWithWhereAndWhy) {
  const uint64_t slot = NewestSnapshotSlot();
  const uint64_t record = slot + sizeof(sf::SlotHeader);
  const uint64_t ep = FirstEndpointRecord(record);
  const auto forge = [&](const char* name, const std::function<void(std::string&)>& patch) {
    return SnapshotError(Variant(name, [&](std::string& b) {
      patch(b);
      Rehash(b, slot);
    }));
  };
  EXPECT_THAT(forge("state", [&](std::string& b) {
                b[ep + offsetof(EndpointRecord, state)] = 9;
              }), Says("endpoint 0 of service \"svc\": byte"));
  EXPECT_THAT(forge("state2", [&](std::string& b) {
                b[ep + offsetof(EndpointRecord, state)] = 9;
              }), Says("state 9 is not a state"));
  EXPECT_THAT(forge("origin", [&](std::string& b) {
                b[ep + offsetof(EndpointRecord, resource_origin) + 2] = 3;
              }), Says("resource origin 3 is not an origin"));
  EXPECT_THAT(forge("hits", [&](std::string& b) {
                Put<uint64_t>(b, ep + offsetof(EndpointRecord, hits), uint64_t{1} << 60);
              }), Says("rule hits: 1152921504606846976 claimed"));
  EXPECT_THAT(forge("endpoints", [&](std::string& b) {
                // The service's endpoint count sits right before its name.
                const uint64_t service = FirstServiceRecord(record);
                Put<uint64_t>(b, service + offsetof(ServiceRecord, endpoints), ~uint64_t{0});
              }), Says("endpoints: 18446744073709551615 claimed"));
  EXPECT_THAT(forge("budget", [&](std::string& b) {
                Put<uint64_t>(b, FirstBudgetRecord(record) + offsetof(BudgetRecord, met), 7);
              }), Says("budget flags 0, 7, 0 are not 0 or 1"));
  EXPECT_THAT(forge("guard", [&](std::string& b) {
                const uint64_t guard = FirstBudgetRecord(record) + sizeof(BudgetRecord);
                Put<uint64_t>(b, guard + offsetof(GuardRecord, flags), 4);
              }), Says("guard flags 4 are not a combination of 1 and 2"));
  EXPECT_THAT(forge("id", [&](std::string& b) {
                b[ep + sizeof(EndpointRecord) + 8] = '\xff';  // the id's first byte
              }), Says("endpoint id is not UTF-8"));
  EXPECT_THAT(forge("idlen", [&](std::string& b) {
                Put<uint64_t>(b, ep + sizeof(EndpointRecord), uint64_t{1} << 40);
              }), Says("endpoint id: 1099511627776 bytes claimed"));
  EXPECT_THAT(forge("cut", [&](std::string& b) {
                reinterpret_cast<sf::SlotHeader*>(b.data() + slot)->length -= 8;  // the end marker
              }), Says("service marker cut short"));
  EXPECT_THAT(forge("cut2", [&](std::string& b) {
                // and 8 bytes of the last rule hit: the count is checked before any is read
                reinterpret_cast<sf::SlotHeader*>(b.data() + slot)->length -= 16;
              }), Says("endpoint 1 of service \"svc\": byte "));
  EXPECT_THAT(forge("trailing", [&](std::string& b) {
                auto* sh = reinterpret_cast<sf::SlotHeader*>(b.data() + slot);
                sh->length += 8;
              }), Says("8 bytes after the record's end"));
  EXPECT_THAT(forge("marker", [&](std::string& b) {
                Put<uint64_t>(b, FirstServiceRecord(record) - 8, 5);
              }), Says("service marker 5"));
}

TEST_F(StateFileFormat, AFileTruncatedUnderAnOpenMonitorIsAnError) {
  const std::string path = Variant("shrinks", [](std::string&) {});
  Monitor m(path);
  ASSERT_EQ(truncate(path.c_str(), 8192), 0);
  char* t = nullptr;
  EXPECT_EQ(wt_monitor_snapshot_json(m.get(), &t, nullptr), WT_ERR_FORMAT);
  EXPECT_THAT(std::string(wt_last_error()), Says("truncated?"));
}

// A writer killed inside a write leaves that slot's seq odd for good. The header still sends
// readers to the previous complete slot (it moves only after a slot is complete), so the
// snapshot, the history and the events before it read as they were.
TEST_F(StateFileFormat, ASlotLeftMidWriteByACrashIsSkipped) {
  const sf::Header h = ReadHeader(good_);
  const uint64_t next_snapshot = h.snapshot_offset[h.snapshots % 2];
  const uint64_t next_point = h.history_offset + (h.history_points % h.history_slots) *
                                                     h.history_slot_bytes;
  const std::string path = Variant("crashed", [&](std::string& b) {
    Put<uint64_t>(b, next_snapshot + offsetof(sf::SlotHeader, seq), 7);
    Put<uint64_t>(b, next_point + offsetof(sf::SlotHeader, seq), 11);
  });
  Monitor m(path);
  EXPECT_EQ(json::parse(m.Snapshot())["services"][0]["endpoints"].size(), 2u);
  EXPECT_EQ(json::parse(m.History(0, 0))["points"].size(), 3u);
  // Had it died with the header already pointing at the torn slot (it cannot), the reader
  // gives up after a bounded number of reads instead of waiting for a writer that is gone.
  const uint64_t newest = h.snapshot_offset[(h.snapshots - 1) % 2];
  EXPECT_THAT(SnapshotError(Variant("torn", [&](std::string& b) {
                Put<uint64_t>(b, newest + offsetof(sf::SlotHeader, seq), 9);
              })), Says("no complete snapshot"));
}

}  // namespace
}  // namespace weighted::testing
