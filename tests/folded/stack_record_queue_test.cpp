// StackRecordQueue (lib/folded/stack_record_queue.h): records reach the
// worker whole and in order across batches, on the worker's thread, and an
// exception there comes back from finish().
#include <gtest/gtest.h>

#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include "folded/stack_record_queue.h"

namespace fg {
namespace {

struct Record {
  uint32_t tag;
  std::vector<FrameId> ids;
  uint64_t bits;
  bool operator==(const Record& o) const { return tag == o.tag && ids == o.ids && bits == o.bits; }
};

TEST(StackRecordQueue, RecordsArriveWholeAndInOrderOnTheWorker) {
  std::mt19937 rng(1);
  std::vector<Record> sent, seen;  // seen: the worker's until finish()
  std::thread::id worker;
  {
    StackRecordQueue q([&](uint32_t tag, const FrameId* ids, size_t n, uint64_t bits) {
      worker = std::this_thread::get_id();
      seen.push_back(Record{tag, std::vector<FrameId>(ids, ids + n), bits});
    });
    for (int i = 0; i < 20000; ++i) {
      // Some as long as a stack may be, so records straddle batch ends.
      const size_t n = i % 500 == 7 ? kMaxStackDepth : rng() % 40;
      Record r{uint32_t(rng()), std::vector<FrameId>(n), (uint64_t(rng()) << 32) | rng()};
      for (FrameId& f : r.ids) f = FrameId(rng());
      q.add(r.tag, r.ids.data(), r.ids.size(), r.bits);
      sent.push_back(std::move(r));
    }
    q.finish();
    EXPECT_EQ(seen.size(), sent.size());
    EXPECT_TRUE(seen == sent);
    EXPECT_NE(worker, std::this_thread::get_id());
  }
}

TEST(StackRecordQueue, TheWorkersExceptionComesBackFromFinish) {
  const FrameId f = 1;
  StackRecordQueue q([](uint32_t tag, const FrameId*, size_t, uint64_t) {
    if (tag == 3) throw std::length_error("too many nodes");
  });
  for (uint32_t i = 0; i < 10; ++i) q.add(i, &f, 1, 0);
  EXPECT_THROW(q.finish(), std::length_error);
}

// Destroyed with records still queued (the reader threw on a later line):
// the worker finishes them and is joined, nothing is left running.
TEST(StackRecordQueue, GoesAwayWithRecordsQueued) {
  int placed = 0;
  const std::vector<FrameId> ids(1000, 7);
  {
    StackRecordQueue q([&](uint32_t, const FrameId*, size_t, uint64_t) { ++placed; });
    for (int i = 0; i < 5000; ++i) q.add(0, ids.data(), ids.size(), 0);
  }
  EXPECT_GT(placed, 0);
}

}  // namespace
}  // namespace fg
