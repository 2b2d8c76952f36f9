#include "common/watchdog.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace basin {
namespace {

using std::chrono::milliseconds;

TEST(WatchdogTest, CallsOnceWhenTheDeadlinePasses) {
  std::atomic<int> calls{0};
  Watchdog watchdog([&] { calls++; });
  const uint64_t armed = watchdog.Arm(milliseconds(20));
  for (int i = 0; i < 500 && calls == 0; i++) std::this_thread::sleep_for(milliseconds(5));
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(watchdog.expired(armed));
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_EQ(calls, 1);
}

TEST(WatchdogTest, DisarmedInTimeNeverCalls) {
  std::atomic<int> calls{0};
  Watchdog watchdog([&] { calls++; });
  const uint64_t armed = watchdog.Arm(milliseconds(100));
  watchdog.Disarm(armed);
  std::this_thread::sleep_for(milliseconds(200));
  EXPECT_EQ(calls, 0);
  EXPECT_FALSE(watchdog.expired(armed));
}

TEST(WatchdogTest, ANewDeadlineReplacesTheOldAndAnOldNumberDisarmsNothing) {
  std::atomic<int> calls{0};
  Watchdog watchdog([&] { calls++; });
  const uint64_t first = watchdog.Arm(milliseconds(30));
  const uint64_t second = watchdog.Arm(milliseconds(5000));
  watchdog.Disarm(first);  // no longer the deadline set: the second stays
  std::this_thread::sleep_for(milliseconds(100));
  EXPECT_EQ(calls, 0);  // the first deadline was replaced before it passed
  const uint64_t third = watchdog.Arm(milliseconds(10));
  watchdog.Disarm(second);  // stale: the third still fires
  for (int i = 0; i < 500 && calls == 0; i++) std::this_thread::sleep_for(milliseconds(5));
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(watchdog.expired(third));
  EXPECT_FALSE(watchdog.expired(second));
}

TEST(WatchdogTest, DestroyedWhileArmedStopsItsThread) {
  std::atomic<int> calls{0};
  {
    Watchdog watchdog([&] { calls++; });
    watchdog.Arm(milliseconds(60'000));
  }
  EXPECT_EQ(calls, 0);
}

}  // namespace
}  // namespace basin
