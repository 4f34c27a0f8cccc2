// The seed of an engine configured without one (util/entropy.h): getrandom first, without
// blocking, retried on EINTR; /dev/urandom when it fails; the clocks and addresses last.
#include <sys/random.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <set>

#include <gtest/gtest.h>

#include "util/entropy.h"

namespace weighted::testing {
namespace {

// What the fake getrandom does on each call, in order: fill `bytes` bytes with `fill`, or fail
// with `error`. Plain globals: EntropySources holds function pointers.
struct Step {
  int error;  // 0: success
  size_t bytes;
  unsigned char fill;
};
std::deque<Step> g_steps;
int g_calls;
unsigned int g_flags;
bool g_urandom_ok;
int g_urandom_calls;
uint64_t g_clock;

ssize_t FakeGetrandom(void* buf, size_t len, unsigned int flags) {
  ++g_calls;
  g_flags = flags;
  if (g_steps.empty()) {
    errno = ENOSYS;
    return -1;
  }
  const Step s = g_steps.front();
  g_steps.pop_front();
  if (s.error) {
    errno = s.error;
    return -1;
  }
  const size_t n = s.bytes < len ? s.bytes : len;
  std::memset(buf, s.fill, n);
  return static_cast<ssize_t>(n);
}

bool FakeUrandom(void* buf, size_t len) {
  ++g_urandom_calls;
  if (!g_urandom_ok) return false;
  std::memset(buf, 0x22, len);
  return true;
}

uint64_t FakeClock() { return g_clock; }

constexpr EntropySources kFake{FakeGetrandom, FakeUrandom, FakeClock};

class Entropy : public ::testing::Test {
 protected:
  void SetUp() override {
    g_steps.clear();
    g_calls = 0;
    g_flags = ~0u;
    g_urandom_ok = true;
    g_urandom_calls = 0;
    g_clock = 1;
  }
};

TEST_F(Entropy, GetrandomIsAskedWithoutBlocking) {
  g_steps = {{0, 8, 0x11}};
  EXPECT_EQ(RandomSeed(kFake), 0x1111111111111111ULL);
  EXPECT_EQ(g_flags, static_cast<unsigned int>(GRND_NONBLOCK));
  EXPECT_EQ(g_urandom_calls, 0);
}

TEST_F(Entropy, AnInterruptedOrShortGetrandomIsContinued) {
  g_steps = {{EINTR, 0, 0}, {0, 3, 0x11}, {EINTR, 0, 0}, {0, 8, 0x33}};
  EXPECT_EQ(RandomSeed(kFake), 0x3333333333111111ULL);  // little-endian: the first bytes are low
  EXPECT_EQ(g_calls, 4);
  EXPECT_EQ(g_urandom_calls, 0);
}

TEST_F(Entropy, EndlessInterruptionsFallBackToUrandom) {
  for (int i = 0; i < 100; ++i) g_steps.push_back({EINTR, 0, 0});
  EXPECT_EQ(RandomSeed(kFake), 0x2222222222222222ULL);
  EXPECT_LT(g_calls, 100) << "gave up after a bounded number of tries";
}

TEST_F(Entropy, EachGetrandomFailureFallsBackToUrandom) {
  for (int error : {ENOSYS, EPERM, EAGAIN, EFAULT}) {
    SCOPED_TRACE(error);
    SetUp();
    g_steps = {{error, 0, 0}, {0, 8, 0x11}};
    EXPECT_EQ(RandomSeed(kFake), 0x2222222222222222ULL);
    EXPECT_EQ(g_calls, 1) << "only EINTR is retried";
    EXPECT_EQ(g_urandom_calls, 1);
  }
}

TEST_F(Entropy, WithoutEitherTheClocksSetSeedsApart) {
  g_urandom_ok = false;
  std::set<uint64_t> seeds;
  for (uint64_t t = 1; t <= 64; ++t) {
    g_clock = t;  // consecutive nanoseconds: the mix must spread them
    seeds.insert(RandomSeed(kFake));
  }
  EXPECT_EQ(seeds.size(), 64u);
  EXPECT_EQ(seeds.count(0), 0u);
  EXPECT_EQ(g_urandom_calls, 64);
}

TEST_F(Entropy, TheSystemSourcesDeliver) {
  // Two draws of 64 bits from the kernel agree with probability 2^-64.
  EXPECT_NE(RandomSeed(), RandomSeed());
  unsigned char buf[16] = {};
  ASSERT_TRUE(SystemEntropy().read_urandom(buf, sizeof buf));
  EXPECT_NE(SystemEntropy().clock_ns(), 0u);
}

}  // namespace
}  // namespace weighted::testing
