// FoldTeardown (fold_perf_data.h): a fold's state taken down on a thread of
// its own while the caller goes on. The profile and stats must be whole
// without that state, and the teardown's destructor must wait for it.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "fold/fold_perf_data.h"
#include "fixture_fold_options.h"
#include "folded_text.h"
#include "test_support.h"

namespace fg::test {
namespace {

// Records on which thread it was destroyed, slowly (so that a teardown that
// did not wait would be seen).
struct SlowState {
  SlowState(std::atomic<bool>* d, std::thread::id* on) : destroyed(d), destroyed_on(on) {}
  std::atomic<bool>* destroyed;
  std::thread::id* destroyed_on;
  ~SlowState() {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    *destroyed_on = std::this_thread::get_id();
    destroyed->store(true);
  }
};

TEST(FoldTeardown, DestroysTheStateOnAnotherThreadAndWaitsForIt) {
  std::atomic<bool> destroyed{false};
  std::thread::id on;
  {
    FoldTeardown teardown;
    teardown.take(std::make_unique<SlowState>(&destroyed, &on));
    EXPECT_FALSE(destroyed.load());  // still going (50 ms)
  }
  EXPECT_TRUE(destroyed.load());
  EXPECT_NE(on, std::this_thread::get_id());
}

TEST(FoldTeardown, ASecondStateIsDestroyedAtOnce) {
  std::atomic<bool> first{false}, second{false};
  std::thread::id on_first, on_second;
  FoldTeardown teardown;
  teardown.take(std::make_unique<SlowState>(&first, &on_first));
  teardown.take(std::make_unique<SlowState>(&second, &on_second));
  EXPECT_TRUE(second.load());
  EXPECT_EQ(on_second, std::this_thread::get_id());
}

// Every perf.data fixture: the same folded text and stats with the fold's
// state taken down after the return as with it taken down before.
TEST(FoldTeardown, EveryFixtureFoldsTheSameWithATeardown) {
  size_t folded = 0;
  for (const std::string& path : perf_data_fixtures()) {
    const FoldOptions o = fixture_fold_options();
    FoldStats plain_stats, torn_stats;
    std::string plain, torn;
    try {
      plain = folded_text(fold_perf_data(path, o, &plain_stats));
    } catch (const std::exception& e) {
      plain = std::string("error: ") + e.what();
    }
    {
      FoldTeardown teardown;
      try {
        torn = folded_text(fold_perf_data(path, o, &torn_stats, &teardown));
      } catch (const std::exception& e) {
        torn = std::string("error: ") + e.what();
      }
    }
    EXPECT_EQ(torn, plain) << path;
    EXPECT_EQ(torn_stats.unique_raw_stacks, plain_stats.unique_raw_stacks) << path;
    EXPECT_EQ(torn_stats.warnings, plain_stats.warnings) << path;
    folded += plain.rfind("error: ", 0) != 0 && !plain.empty();
  }
  EXPECT_GT(folded, 10u);
}

}  // namespace
}  // namespace fg::test
