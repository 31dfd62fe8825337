// RecordOrderQueue (lib/perf/record_order.h) on its own: perf's FINISHED_ROUND
// rule (a round delivers what is older than the previous round's newest
// time, so records up to one round late still come out in order), ties in
// arrival order, copies of unstable bytes, and memory bounded by a round or
// two however long the stream.
#include "perf/record_order.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

namespace {

using fg::perf_order::QueuedRecord;
using fg::perf_order::RecordOrderQueue;

// 8-aligned record bytes: [u64 header][u64 tag].
struct Bytes {
  uint64_t words[2];
};

std::vector<uint64_t> tags_of(std::vector<QueuedRecord>& out) {
  std::vector<uint64_t> tags;
  for (const auto& r : out) {
    uint64_t t;
    std::memcpy(&t, r.data + 8, 8);
    tags.push_back(t);
  }
  return tags;
}

void push(RecordOrderQueue& q, uint64_t time, uint64_t tag, bool copy = true) {
  Bytes b{{0, tag}};
  q.push(time, reinterpret_cast<const uint8_t*>(&b), sizeof b, tag, 0, 9, copy);
}

TEST(RecordOrderQueue, RoundDeliversOnlyWhatThePreviousRoundCovered) {
  RecordOrderQueue q;
  std::vector<uint64_t> times;
  auto collect = [&](const QueuedRecord& r) { times.push_back(r.time); };
  // Round 1: two CPUs' buffers drained in turn (two sorted runs).
  for (uint64_t t : {10, 30, 50}) push(q, t, t);
  for (uint64_t t : {20, 40, 60}) push(q, t, t);
  q.finish_round(collect);
  EXPECT_TRUE(times.empty());  // nothing is known to be complete after the first round
  // Round 2 brings 25 and 55: older than round 1's newest (60), i.e. one round late.
  for (uint64_t t : {25, 55, 70}) push(q, t, t);
  q.finish_round(collect);
  EXPECT_EQ(times, (std::vector<uint64_t>{10, 20, 25, 30, 40, 50, 55, 60}));
  EXPECT_EQ(q.unordered(), 0u);  // one round late is what perf allows
  times.clear();
  q.flush_all(collect);
  EXPECT_EQ(times, (std::vector<uint64_t>{70}));
}

TEST(RecordOrderQueue, TwoRoundsLateIsCountedAndStillDeliveredInOrderAfterward) {
  RecordOrderQueue q;
  std::vector<uint64_t> times;
  auto collect = [&](const QueuedRecord& r) { times.push_back(r.time); };
  for (uint64_t t : {10, 20}) push(q, t, t);
  q.finish_round(collect);
  push(q, 30, 30);
  q.finish_round(collect);  // delivers 10, 20
  push(q, 5, 5);            // older than what was delivered: perf would see it out of order too
  push(q, 40, 40);
  q.finish_round(collect);  // delivers up to 30
  EXPECT_EQ(q.unordered(), 1u);
  q.flush_all(collect);
  EXPECT_EQ(times, (std::vector<uint64_t>{10, 20, 5, 30, 40}));
}

TEST(RecordOrderQueue, EqualTimesKeepArrivalOrderAcrossRoundsAndRuns) {
  RecordOrderQueue q;
  std::vector<QueuedRecord> out;
  RecordOrderQueue::ArenaBlocks retired;
  // Many runs with the same times (more than the merge's run limit, so the
  // stable full sort is used too).
  uint64_t tag = 0;
  for (int run = 0; run < 100; ++run)
    for (uint64_t t : {100, 200, 300}) push(q, t, tag++);
  q.finish_round_into(out, retired);
  EXPECT_TRUE(out.empty());
  q.flush_all_into(out, retired);
  ASSERT_EQ(out.size(), 300u);
  auto tags = tags_of(out);
  for (size_t i = 1; i < out.size(); ++i) {
    ASSERT_LE(out[i - 1].time, out[i].time);
    if (out[i - 1].time == out[i].time) ASSERT_LT(tags[i - 1], tags[i]) << i;  // arrival order
  }
}

TEST(RecordOrderQueue, UnstableBytesAreCopiedAndSurviveCompaction) {
  RecordOrderQueue q;
  alignas(8) uint8_t buf[24] = {};
  // Not 8-aligned: copied even when the caller says the bytes are stable.
  uint64_t tag = 77;
  std::memcpy(buf + 4 + 8, &tag, 8);
  q.push(1, buf + 4, 16, 4000, 0, 9, false);
  std::memset(buf, 0xff, sizeof buf);  // the caller's buffer is reused
  // A stable record in place (the mapped file): its offset pins min_file_offset.
  Bytes stable{{0, 88}};
  q.push(2, reinterpret_cast<const uint8_t*>(&stable), 16, 5000, 0, 9, false);
  EXPECT_EQ(q.min_file_offset(9999), 5000u);  // the copy (offset 4000) does not pin the file
  // push_owned: the caller writes the bytes into the arena.
  uint8_t* p = q.push_owned(3, 16, 6000, 0, 3);
  uint64_t words[2] = {0, 99};
  std::memcpy(p, words, 16);
  // Flushing time 1 moves the other owned record to a fresh arena block.
  std::vector<uint64_t> tags;
  auto collect = [&](const QueuedRecord& r) {
    uint64_t t;
    std::memcpy(&t, r.data + 8, 8);
    tags.push_back(t);
  };
  q.finish_round(collect);  // limit 0: nothing
  q.finish_round(collect);  // limit 3: everything, in time order
  EXPECT_EQ(tags, (std::vector<uint64_t>{77, 88, 99}));
}

TEST(RecordOrderQueue, MemoryStaysBoundedByAboutTwoRoundsOverALongStream) {
  RecordOrderQueue q;
  std::mt19937_64 rng(7);
  uint64_t time = 0, delivered = 0, max_footprint = 0, last_time = 0;
  std::vector<uint8_t> rec(4096, 0);  // 4 KiB records (DWARF samples are 8 KiB)
  bool in_order = true;
  auto collect = [&](const QueuedRecord& r) {
    in_order &= r.time >= last_time;
    last_time = r.time;
    ++delivered;
  };
  // 200 rounds of 256 records from 4 interleaved "CPUs": 200 MiB in all.
  for (int round = 0; round < 200; ++round) {
    for (int i = 0; i < 256; ++i) {
      uint64_t t = time + (i % 4) * 1000 + i + rng() % 50;
      q.push(t, rec.data(), static_cast<uint32_t>(rec.size()), 0, 0, 9, true);
    }
    time += 4000;
    q.finish_round(collect);
    max_footprint = std::max(max_footprint, q.footprint());
  }
  q.flush_all(collect);
  EXPECT_EQ(delivered, 200u * 256);
  EXPECT_TRUE(in_order);
  EXPECT_EQ(q.unordered(), 0u);
  EXPECT_LE(q.max_size(), 3u * 256);
  // Two rounds of 1 MiB of records, in 1 MiB arena blocks, plus the slack of
  // compaction: a few MiB, not the 200 MiB that passed through.
  EXPECT_LT(max_footprint, 8u << 20) << max_footprint;
}

}  // namespace
