#include <gtest/gtest.h>

#include "weighted_sim/sim.h"

TEST(Smoke, Builds) { SUCCEED(); }
