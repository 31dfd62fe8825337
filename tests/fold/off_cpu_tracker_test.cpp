// Off-CPU pairing rules on hand-made event sequences.
#include "fold/off_cpu_tracker.h"

#include <gtest/gtest.h>

namespace fg {
namespace {

TEST(TaskStateName, DecodesPrevState) {
  EXPECT_EQ(task_state_name(0), "R");
  EXPECT_EQ(task_state_name(0x100), "R+");
  EXPECT_EQ(task_state_name(1), "S");
  EXPECT_EQ(task_state_name(2), "D");
  EXPECT_EQ(task_state_name(0x80), "I");
  EXPECT_EQ(task_state_name(0x10), "X");
}

TEST(OffCpuTracker, PairsSwitchOutWithNextSwitchIn) {
  OffCpuTracker t({});
  std::vector<OffCpuBlock> out;
  t.switch_out(42, 1000, 7, 1, out);
  t.switch_in(43, 1500, out);  // another task
  EXPECT_TRUE(out.empty());
  t.switch_in(42, 5000, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].stack, 7u);
  EXPECT_EQ(out[0].nanoseconds, 4000u);
  t.switch_in(42, 9000, out);  // no second block without a switch-out
  EXPECT_EQ(out.size(), 1u);
  EXPECT_EQ(t.stats().paired, 1u);
}

TEST(OffCpuTracker, IdleTaskAndUnfinishedBlocksAreNotCounted) {
  OffCpuTracker t({});
  std::vector<OffCpuBlock> out;
  t.switch_out(0, 10, 1, 0, out);
  t.switch_out(5, 10, 2, 1, out);
  t.finish(1000, out);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(t.stats().unfinished, 1u);
  OffCpuTracker::Options o;
  o.include_unfinished = true;
  OffCpuTracker u(o);
  u.switch_out(5, 10, 2, 1, out);
  u.finish(1000, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].nanoseconds, 990u);
}

TEST(OffCpuTracker, MissedSwitchInIsCountedNotGuessed) {
  OffCpuTracker t({});
  std::vector<OffCpuBlock> out;
  t.switch_out(5, 10, 1, 1, out);
  t.switch_out(5, 50, 2, 1, out);
  t.switch_in(5, 80, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].stack, 2u);
  EXPECT_EQ(out[0].nanoseconds, 30u);
  EXPECT_EQ(t.stats().replaced, 1u);
}

TEST(OffCpuTracker, FallbackClosesAtTheNextRecord) {
  OffCpuTracker::Options o;
  o.fallback_to_next_record = true;
  OffCpuTracker t(o);
  std::vector<OffCpuBlock> out;
  t.switch_out(5, 100, 1, 1, out);
  t.activity(6, 150, out);
  EXPECT_TRUE(out.empty());
  t.activity(5, 400, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].nanoseconds, 300u);
  // A second switch-out closes the first block in fallback mode.
  t.switch_out(5, 500, 1, 1, out);
  t.switch_out(5, 900, 1, 1, out);
  EXPECT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].nanoseconds, 400u);
  EXPECT_EQ(t.stats().closed_by_fallback, 2u);
}

TEST(OffCpuTracker, StateAndMinimumFilters) {
  OffCpuTracker::Options o;
  o.states = "D";
  o.min_block_ns = 100;
  OffCpuTracker t(o);
  std::vector<OffCpuBlock> out;
  t.switch_out(1, 0, 1, 1, out);  // S: filtered
  t.switch_in(1, 1000, out);
  t.switch_out(2, 0, 2, 2, out);  // D but short
  t.switch_in(2, 50, out);
  t.switch_out(3, 0, 3, 2, out);  // D and long
  t.switch_in(3, 500, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].stack, 3u);
  EXPECT_EQ(t.stats().dropped_state, 1u);
  EXPECT_EQ(t.stats().dropped_short, 1u);
  OffCpuTracker::Options r;
  r.states = "R";
  OffCpuTracker pre(r);
  pre.switch_out(4, 0, 4, 0x100, out);  // R+ is kept by R
  pre.switch_in(4, 10, out);
  EXPECT_EQ(out.size(), 2u);
}

}  // namespace
}  // namespace fg
