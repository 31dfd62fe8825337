// OpenTable (lib/folded/open_table.h), the hot paths' one hash table: lookups
// after many doublings, colliding hashes, and the load limit.
#include "folded/open_table.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>

#include "folded/hash.h"

namespace fg {
namespace {

struct PairSlot {
  uint64_t key = 0;  // 0 = empty
  uint64_t value = 0;
};
struct PairPolicy {
  static bool empty(const PairSlot& s) { return s.key == 0; }
  static PairSlot empty_slot() { return {}; }
  static uint64_t rehash(const PairSlot& s) { return detail::mix64(s.key); }
};
using Table = OpenTable<PairSlot, PairPolicy>;

uint64_t* upsert(Table& t, uint64_t key) {
  t.reserve_for(t.size() + 1);
  uint64_t h = detail::mix64(key);
  size_t i = t.probe(h, [&](const PairSlot& s) { return s.key == key; });
  if (PairPolicy::empty(t.at(i))) t.fill(i, PairSlot{key, 0});
  return &t.at(i).value;
}

TEST(OpenTable, AgreesWithStdMapThroughManyDoublings) {
  Table t(4);
  std::map<uint64_t, uint64_t> ref;
  std::mt19937_64 rng(7);
  for (int i = 0; i < 200000; ++i) {
    uint64_t k = 1 + rng() % 50000;
    *upsert(t, k) += 1;
    ref[k] += 1;
  }
  EXPECT_EQ(t.size(), ref.size());
  EXPECT_LE(t.size() * 4, t.capacity() * 3);
  for (auto& [k, v] : ref) {
    const PairSlot* s = t.find(detail::mix64(k), [&](const PairSlot& x) { return x.key == k; });
    ASSERT_NE(s, nullptr) << k;
    EXPECT_EQ(s->value, v);
  }
  EXPECT_EQ(t.find(detail::mix64(50001), [](const PairSlot& x) { return x.key == 50001; }), nullptr);
}

// Every key hashing to one slot still works (linear probing wraps the array).
struct CollidingPolicy : PairPolicy {
  static uint64_t rehash(const PairSlot&) { return ~uint64_t{0}; }
};
TEST(OpenTable, CollidingHashesWrapAroundTheArray) {
  OpenTable<PairSlot, CollidingPolicy> t(8);
  for (uint64_t k = 1; k <= 100; ++k) t.insert_new(~uint64_t{0}, PairSlot{k, k * 10});
  for (uint64_t k = 1; k <= 100; ++k) {
    const PairSlot* s = t.find(~uint64_t{0}, [&](const PairSlot& x) { return x.key == k; });
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->value, k * 10);
  }
  size_t seen = 0;
  t.for_each([&](const PairSlot&) { ++seen; });
  EXPECT_EQ(seen, 100u);
}

TEST(OpenTable, EmptyTableFindsNothingAndClearForgets) {
  Table t;
  EXPECT_EQ(t.find(1, [](const PairSlot&) { return true; }), nullptr);
  t.insert_new(detail::mix64(5), PairSlot{5, 1});
  EXPECT_EQ(t.size(), 1u);
  t.clear();
  EXPECT_EQ(t.size(), 0u);
  EXPECT_EQ(t.find(detail::mix64(5), [](const PairSlot& x) { return x.key == 5; }), nullptr);
}

TEST(Hash, WordHashDependsOnEveryWordAndTheCount) {
  uint64_t w[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  uint64_t base = detail::hash_words(w, 9);
  for (int i = 0; i < 9; ++i) {
    uint64_t v[9];
    std::copy(w, w + 9, v);
    v[i] ^= 1;
    EXPECT_NE(detail::hash_words(v, 9), base) << i;
  }
  EXPECT_NE(detail::hash_words(w, 8), base);
  EXPECT_NE(detail::hash_pair(1, 2), detail::hash_pair(2, 1));
}

}  // namespace
}  // namespace fg
