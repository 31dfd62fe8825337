// FoldOptions::max_raw_stacks (the bounded raw-stack table, raw_stack_index.h)
// must not change a fold's output: every perf.data fixture folded with a
// bound of 1 or 3 stacks (the table is emptied nearly every sample) gives the
// same folded text as without a bound, with one thread and with two (where
// emptying also waits for the symbolising thread, and stacks seen again
// take their node from KnownStacks), also when the symbolising thread is
// stopped mid-fold.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "fold/fold_perf_data.h"
#include "fixture_fold_options.h"
#include "folded_text.h"
#include "test_support.h"

namespace fg::test {
namespace {

// The folded text, or the error's message (the same either way is the point).
std::string fold_text(const std::string& path, FoldOptions o, FoldStats* stats) {
  try {
    return folded_text(fold_perf_data(path, o, stats));
  } catch (const std::exception& e) {
    return std::string("error: ") + e.what();
  }
}

TEST(RawStackBound, EveryFixtureFoldsTheSameWithATinyBound) {
  size_t forgetting_folds = 0;
  uint64_t known_stacks = 0;
  for (const std::string& path : perf_data_fixtures()) {
    for (int variant = 0; variant < 3; ++variant) {
      FoldOptions o = fixture_fold_options();  // --partial: a damaged fixture still folds what it can
      if (variant == 1) o.root_with_pid = o.count = true;
      if (variant == 2) o.root_with_tid = o.addrs = true;
      for (unsigned threads : {1u, 2u}) {
        o.threads = threads;
        o.max_raw_stacks = 0;
        FoldStats unbounded_stats;
        const std::string want = fold_text(path, o, &unbounded_stats);
        for (size_t bound : {size_t(1), size_t(3)}) {
          o.max_raw_stacks = bound;
          FoldStats st;
          EXPECT_EQ(fold_text(path, o, &st), want) << path << " variant " << variant << " threads " << threads
                                                   << " bound " << bound;
          if (unbounded_stats.unique_raw_stacks > bound) {
            // Stacks seen again after the table was emptied are added again.
            EXPECT_GE(st.unique_raw_stacks, unbounded_stats.unique_raw_stacks) << path;
            ++forgetting_folds;
          }
          // With the symbolising thread, some of those took their node from
          // KnownStacks instead of being named and placed again.
          known_stacks += st.known_stacks;
          if (threads == 1) EXPECT_EQ(st.known_stacks, 0u) << path;
        }
      }
    }
  }
  EXPECT_GT(forgetting_folds, 20u);  // the bound was reached, in most fixtures
  EXPECT_GT(known_stacks, 100u);
}

// The symbolising thread stopped mid-fold (it made the folding thread wait
// too often) leaves the output as it was: here a bound of 1 makes every new
// stack a wait, and the thread is judged after every 2 new stacks.
TEST(RawStackBound, StoppingTheSymbolisingThreadMidFoldKeepsTheOutput) {
  size_t stopped = 0, frame_pointer_fixtures = 0;
  for (const std::string& path : perf_data_fixtures()) {
    FoldOptions o = fixture_fold_options();
    o.threads = 1;
    const std::string want = fold_text(path, o, nullptr);
    o.threads = 2;
    o.max_raw_stacks = 1;
    o.symbolising_window = 2;
    FoldStats st;
    EXPECT_EQ(fold_text(path, o, &st), want) << path;
    stopped += st.symbolising_thread_stopped;
    frame_pointer_fixtures += !st.dwarf && st.unique_raw_stacks > 4;
  }
  EXPECT_GT(frame_pointer_fixtures, 3u);
  EXPECT_GE(stopped, frame_pointer_fixtures / 2);
}

}  // namespace
}  // namespace fg::test
