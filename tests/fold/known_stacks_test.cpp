// KnownStacks (lib/fold/known_stacks.h): forgotten raw stacks' nodes by
// fingerprint, bounded.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "fold/known_stacks.h"

namespace fg {
namespace {

TEST(KnownStacks, RemembersNodesByTheWholeFingerprint) {
  KnownStacks known(size_t(1) << 16);
  EXPECT_EQ(known.find(StackFingerprint{1, 2}), 0u);  // nothing yet (and nothing allocated)
  known.remember(StackFingerprint{1, 2}, 7);
  EXPECT_EQ(known.find(StackFingerprint{1, 2}), 7u);
  // The same hash with another check, or the same check with another hash,
  // is another stack.
  EXPECT_EQ(known.find(StackFingerprint{1, 3}), 0u);
  EXPECT_EQ(known.find(StackFingerprint{5, 2}), 0u);
  known.remember(StackFingerprint{1, 3}, 9, 42);
  uint32_t serial = 0;
  EXPECT_EQ(known.find(StackFingerprint{1, 3}, &serial), 9u);
  EXPECT_EQ(serial, 42u);  // what the caller remembered it with (the observer's index)
  // Hashes that differ only in their high half are other stacks too.
  EXPECT_EQ(known.find(StackFingerprint{1 | (uint64_t(1) << 40), 3}), 0u);
  EXPECT_EQ(known.find(StackFingerprint{1, 2}), 7u);
  // A stack's first node stays; the root (0) is never remembered.
  known.remember(StackFingerprint{1, 2}, 8);
  EXPECT_EQ(known.find(StackFingerprint{1, 2}), 7u);
  known.remember(StackFingerprint{4, 4}, 0);
  EXPECT_EQ(known.find(StackFingerprint{4, 4}), 0u);
  EXPECT_EQ(known.size(), 2u);
}

TEST(KnownStacks, GrowsThenStopsAtItsBound) {
  const size_t max_slots = size_t(1) << 16;
  KnownStacks known(max_slots);
  std::mt19937_64 rng(3);
  std::vector<StackFingerprint> fps;
  for (size_t i = 0; i < max_slots; ++i) fps.push_back(StackFingerprint{rng(), rng()});
  for (size_t i = 0; i < fps.size(); ++i) {
    if (i % 1024 == 0) {
      known.reserve_for(known.size() + 1024);
      for (size_t j = i; j < i + 1024 && j < fps.size(); ++j) known.prefetch(fps[j]);
    }
    known.remember(fps[i], NodeId(i + 1));
  }
  // Half of the slots are used, then no more: memory is bounded.
  EXPECT_TRUE(known.full());
  EXPECT_LE(known.size(), max_slots / 2);
  EXPECT_GE(known.size() + 1, max_slots / 2);
  EXPECT_LE(known.bytes(), max_slots * KnownStacks::kSlotBytes);
  for (size_t i = 0; i < fps.size(); ++i) {
    const NodeId want = i < known.size() ? NodeId(i + 1) : 0;
    ASSERT_EQ(known.find(fps[i]), want) << i;
  }
}

}  // namespace
}  // namespace fg
