// RawStackTable and RawStackIndex (lib/fold/raw_stack_table.h,
// raw_stack_index.h): keys found again across many doublings of the slot
// array and arena blocks, weights kept per key, colliding hashes told
// apart, new stacks reported once and in index order; a cleared table and
// a bounded index (max_stacks) that give the same weights as unbounded ones.
#include <gtest/gtest.h>

#include <initializer_list>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "fold/raw_stack_index.h"
#include "fold/raw_stack_table.h"

namespace fg {
namespace {

// A key's words, as a fold writes them into RawStackIndex::next_key().
void set_key(KeyWords& key, std::initializer_list<uint64_t> words) {
  key.clear();
  key.append(words.begin(), words.size());
}

std::vector<uint64_t> key_of(uint32_t i) {
  // Lengths 1..300 so keys cross 2 MiB arena blocks at odd places.
  std::vector<uint64_t> k(1 + (i * 7919u) % 300);
  for (size_t j = 0; j < k.size(); ++j) k[j] = uint64_t(i) * 1000003u + j;
  return k;
}

TEST(RawStackTable, FindsEveryKeyAndItsWeightAcrossGrowth) {
  RawStackTable t;
  const uint32_t n = 20000;  // ~3 M words: several arena blocks, slot array doubled many times
  for (uint32_t i = 0; i < n; ++i) {
    std::vector<uint64_t> k = key_of(i);
    uint64_t h = RawStackTable::hash_words(k.data(), uint32_t(k.size()));
    ASSERT_EQ(t.find(k.data(), uint32_t(k.size()), h), RawStackTable::kMissing) << i;
    uint64_t* entry = nullptr;
    ASSERT_EQ(t.insert(k.data(), uint32_t(k.size()), h, &entry), i);
    RawStackTable::add_weight(entry, double(i));
  }
  EXPECT_EQ(t.size(), n);
  for (uint32_t i = 0; i < n; ++i) {
    std::vector<uint64_t> k = key_of(i);
    uint64_t h = RawStackTable::hash_words(k.data(), uint32_t(k.size()));
    t.prefetch_slot(h);
    t.prefetch_key(h);
    uint64_t* entry = nullptr;
    ASSERT_EQ(t.find(k.data(), uint32_t(k.size()), h, &entry), i);
    RawStackTable::add_weight(entry, 0.5);
    uint32_t count = 0;
    const uint64_t* stored = t.key(i, &count);
    ASSERT_EQ(count, k.size());
    ASSERT_TRUE(RawStackTable::same_words(stored, k.data(), count));
  }
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(t.weight(i), double(i) + 0.5);
  // A key that is a prefix of a stored one is another key.
  std::vector<uint64_t> k = key_of(5);
  k.pop_back();
  if (!k.empty()) EXPECT_EQ(t.find(k.data(), uint32_t(k.size()), RawStackTable::hash_words(k.data(), uint32_t(k.size()))),
                            RawStackTable::kMissing);
}

TEST(RawStackTable, KeysWithTheSameHashAreToldApart) {
  RawStackTable t;
  const uint64_t h = 42;  // every key collides
  for (uint64_t i = 0; i < 3000; ++i) {
    uint64_t k[2] = {i, i * 3};
    ASSERT_EQ(t.insert(k, 2, h), uint32_t(i));
  }
  for (uint64_t i = 0; i < 3000; ++i) {
    uint64_t k[2] = {i, i * 3};
    ASSERT_EQ(t.find(k, 2, h), uint32_t(i));
  }
  uint64_t absent[2] = {1, 4};
  EXPECT_EQ(t.find(absent, 2, h), RawStackTable::kMissing);
}

TEST(RawStackTable, AnEmptyTableFindsNothingAndPrefetchesSafely) {
  RawStackTable t;
  uint64_t k[1] = {7};
  t.prefetch_slot(1);
  t.prefetch_key(1);
  EXPECT_EQ(t.find(k, 1, 1), RawStackTable::kMissing);
  EXPECT_EQ(t.size(), 0u);
}

TEST(RawStackTable, HashIsTheProjectsHashWords) {
  std::vector<uint64_t> k = key_of(17);
  EXPECT_EQ(RawStackTable::hash_words(k.data(), uint32_t(k.size())), detail::hash_words(k.data(), uint32_t(k.size())));
}

struct RecordingSink : NewStackSink {
  std::vector<std::pair<uint32_t, std::vector<uint64_t>>> seen;
  std::vector<int32_t> pids;
  void on_new_stack(uint32_t index, const uint64_t* key, int32_t pid, const ProcessMaps*, const StackFingerprint&) override {
    seen.emplace_back(index, std::vector<uint64_t>(key, key + 3));
    pids.push_back(pid);
  }
  void forget_stacks(const RawStackTable&, uint32_t) override {
    ADD_FAILURE() << "an unbounded index forgot its stacks";
  }
};

TEST(RawStackIndex, WeightsArriveAfterTheRingAndNewStacksAreReportedOnceInOrder) {
  RecordingSink sink;
  RawStackIndex index(sink, /*count_samples=*/true);
  std::mt19937 rng(1);
  std::vector<double> want(50, 0);
  std::vector<uint64_t> samples_of(50, 0);
  std::vector<uint32_t> first_seen;  // stack ids in order of first appearance
  for (int s = 0; s < 5000; ++s) {
    uint32_t id = rng() % 50;
    if (std::find(first_seen.begin(), first_seen.end(), id) == first_seen.end()) first_seen.push_back(id);
    KeyWords& key = index.next_key();
    EXPECT_TRUE(key.empty());
    set_key(key, {id, id + 1, id + 2});
    index.commit(double(s % 7), int32_t(100 + id), nullptr);
    want[id] += double(s % 7);
    ++samples_of[id];
    if (s == 10) {
      // Within the ring: nothing resolved yet.
      EXPECT_EQ(index.size(), 0u);
    }
  }
  index.flush();
  ASSERT_EQ(index.size(), first_seen.size());
  ASSERT_EQ(sink.seen.size(), first_seen.size());
  for (size_t i = 0; i < first_seen.size(); ++i) {
    uint32_t id = first_seen[i];
    EXPECT_EQ(sink.seen[i].first, i);
    EXPECT_EQ(sink.seen[i].second, (std::vector<uint64_t>{id, id + 1, id + 2}));
    EXPECT_EQ(sink.pids[i], int32_t(100 + id));
    EXPECT_EQ(index.weight(uint32_t(i)), want[id]);
    EXPECT_EQ(index.sample_count(uint32_t(i)), samples_of[id]);
  }
  // index_now: an existing key's index, no weight added; a new key reported.
  uint64_t k0[3] = {first_seen[0], first_seen[0] + 1, first_seen[0] + 2};
  EXPECT_EQ(index.index_now(k0, 3, 1, nullptr), 0u);
  EXPECT_EQ(index.weight(0), want[first_seen[0]]);
  uint64_t fresh[3] = {999, 1000, 1001};
  EXPECT_EQ(index.index_now(fresh, 3, 7, nullptr), uint32_t(first_seen.size()));
  EXPECT_EQ(sink.seen.size(), first_seen.size() + 1);
  EXPECT_EQ(index.sample_count(uint32_t(first_seen.size())), 0u);
}

// flush_process resolves the ring up to the newest sample of one process,
// oldest first, and leaves the samples after it waiting; one with no
// sample of that process waiting resolves nothing.
TEST(RawStackIndex, FlushingOneProcessResolvesTheRingUpToItsNewestSampleInOrder) {
  RecordingSink sink;
  RawStackIndex index(sink, /*count_samples=*/false);
  const int32_t pids[] = {1, 2, 1, 3, 2, 3, 3};
  for (size_t i = 0; i < std::size(pids); ++i) {
    set_key(index.next_key(), {uint64_t(i), 7, 8});
    index.commit(1.0, pids[i], nullptr);
  }
  index.flush_process(9);
  EXPECT_EQ(sink.seen.size(), 0u);
  index.flush_process(1);  // samples 0-2
  ASSERT_EQ(sink.seen.size(), 3u);
  index.flush_process(1);  // none of pid 1 left
  EXPECT_EQ(sink.seen.size(), 3u);
  index.flush_process(2);  // samples 3 and 4
  ASSERT_EQ(sink.seen.size(), 5u);
  set_key(index.next_key(), {99, 7, 8});
  index.commit(1.0, 1, nullptr);
  index.flush_process(3);  // samples 5 and 6, not the newer one of pid 1
  ASSERT_EQ(sink.seen.size(), 7u);
  for (uint32_t i = 0; i < 7; ++i) {
    EXPECT_EQ(sink.seen[i].first, i);
    EXPECT_EQ(sink.seen[i].second, (std::vector<uint64_t>{i, 7, 8}));
    EXPECT_EQ(sink.pids[i], pids[i]);
  }
  index.flush();
  ASSERT_EQ(sink.seen.size(), 8u);
  EXPECT_EQ(sink.seen[7].second, (std::vector<uint64_t>{99, 7, 8}));
}

// Flushing by process gives the indices and weights a whole-ring flush at
// the same points gives (the fold's output and an observer's numbering do
// not depend on which it used).
TEST(RawStackIndex, FlushingByProcessNumbersStacksAsAFullFlushDoes) {
  RecordingSink by_process_sink, full_sink;
  RawStackIndex by_process(by_process_sink, true), full(full_sink, true);
  std::mt19937 rng(5);
  for (int s = 0; s < 20000; ++s) {
    const uint32_t id = rng() % 3000;
    const int32_t pid = int32_t(id % 13);
    for (RawStackIndex* index : {&by_process, &full}) {
      set_key(index->next_key(), {id, id * 3, 1});
      index->commit(double(s % 5), pid, nullptr);
    }
    if (rng() % 14 == 0) {
      by_process.flush_process(int32_t(rng() % 13));
      full.flush();
    }
  }
  by_process.flush();
  full.flush();
  ASSERT_EQ(by_process_sink.seen, full_sink.seen);
  ASSERT_EQ(by_process.size(), full.size());
  for (uint32_t i = 0; i < full.size(); ++i) {
    EXPECT_EQ(by_process.weight(i), full.weight(i));
    EXPECT_EQ(by_process.sample_count(i), full.sample_count(i));
  }
}

TEST(RawStackTable, ClearForgetsEveryKeyAndRefillsItsBlocks) {
  RawStackTable t;
  for (int round = 0; round < 3; ++round) {
    // Each round other keys, across several 2 MiB blocks (reused after a clear).
    const uint32_t n = 6000, base = uint32_t(round) * n;
    for (uint32_t i = 0; i < n; ++i) {
      std::vector<uint64_t> k = key_of(base + i);
      uint64_t h = RawStackTable::hash_words(k.data(), uint32_t(k.size()));
      ASSERT_EQ(t.find(k.data(), uint32_t(k.size()), h), RawStackTable::kMissing) << round << " " << i;
      uint64_t* entry = nullptr;
      ASSERT_EQ(t.insert(k.data(), uint32_t(k.size()), h, &entry), i);
      RawStackTable::add_weight(entry, double(base + i));
    }
    ASSERT_EQ(t.size(), n);
    for (uint32_t i = 0; i < n; ++i) {
      std::vector<uint64_t> k = key_of(base + i);
      ASSERT_EQ(t.find(k.data(), uint32_t(k.size()), RawStackTable::hash_words(k.data(), uint32_t(k.size()))), i);
      uint32_t count = 0;
      const uint64_t* stored = t.key(i, &count);
      ASSERT_EQ(count, k.size());
      ASSERT_TRUE(RawStackTable::same_words(stored, k.data(), count));
      ASSERT_EQ(t.weight(i), double(base + i));
    }
    t.clear();
    EXPECT_EQ(t.size(), 0u);
    std::vector<uint64_t> k = key_of(base + 1);
    EXPECT_EQ(t.find(k.data(), uint32_t(k.size()), RawStackTable::hash_words(k.data(), uint32_t(k.size()))),
              RawStackTable::kMissing);
  }
}

// A sink that "symbolises" a stack into its id (the key's first word) and,
// when the bounded index forgets a table's stacks, moves their weights into
// per-id totals, as the fold moves them into the profile's nodes. With two
// tables, stacks are numbered [0, bound) in one and [bound, 2 bound) in the
// other, and a retired table is forgotten only after the other has filled.
struct TotallingSink : NewStackSink {
  std::map<uint32_t, uint64_t> id_of;  // per index not forgotten
  std::map<uint64_t, double> totals;
  size_t forgets = 0, new_stacks = 0, retirements = 0;
  void on_new_stack(uint32_t index, const uint64_t* key, int32_t, const ProcessMaps*, const StackFingerprint&) override {
    EXPECT_EQ(id_of.count(index), 0u) << "index " << index << " given twice before it was forgotten";
    id_of[index] = key[0];
    ++new_stacks;
  }
  void forget_stacks(const RawStackTable& table, uint32_t first) override {
    for (uint32_t i = 0; i < table.size(); ++i) {
      uint32_t count = 0;
      ASSERT_EQ(id_of.count(first + i), 1u);
      EXPECT_EQ(table.key(i, &count)[0], id_of[first + i]);  // keys still there
      totals[id_of[first + i]] += table.weight(i);
      id_of.erase(first + i);
    }
    ++forgets;
  }
  void table_retired() override { ++retirements; }
  void finish(const RawStackIndex& index) {
    index.for_each_weight([&](uint32_t i, double w) {
      EXPECT_EQ(id_of.count(i), 1u);
      totals[id_of[i]] += w;
      id_of.erase(i);
    });
    EXPECT_TRUE(id_of.empty()) << "stacks reported new and never weighed";
  }
};

TEST(RawStackIndex, ABoundedIndexGivesTheSameWeightsAsAnUnboundedOne) {
  for (bool two_tables : {false, true})
    for (size_t bound : {size_t(1), size_t(2), size_t(7), size_t(40)}) {
      TotallingSink bounded_sink, unbounded_sink;
      RawStackIndex bounded(bounded_sink, false, bound), unbounded(unbounded_sink, false, 0);
      if (two_tables) bounded.use_two_tables();
      unbounded.use_two_tables();  // no bound: one table all the same
      std::mt19937 rng(7);
      for (int s = 0; s < 20000; ++s) {
        // Skewed: a few hot stacks and a long tail, as in a real profile.
        uint64_t id = (rng() % 4 == 0) ? rng() % 400 : rng() % 8;
        for (RawStackIndex* index : {&bounded, &unbounded}) {
          set_key(index->next_key(), {id, id * 3, id * 5, id * 7});
          index->commit(double(1 + s % 13) * 250000.0, 1, nullptr);
        }
        if (s % 997 == 0) {  // as before a process-table change
          bounded.flush();
          unbounded.flush();
        }
      }
      bounded.flush();
      unbounded.flush();
      bounded_sink.finish(bounded);
      unbounded_sink.finish(unbounded);
      const std::string what =
          std::string(two_tables ? "two tables" : "one table") + ", bound " + std::to_string(bound);
      EXPECT_EQ(bounded_sink.totals, unbounded_sink.totals) << what;
      EXPECT_LE(bounded.size(), bound) << what;
      EXPECT_GT(bounded_sink.forgets, 0u) << what;
      EXPECT_EQ(unbounded_sink.forgets, 0u);
      EXPECT_EQ(unbounded_sink.retirements, 0u);
      // With two tables each forget follows a retirement of the other table.
      EXPECT_EQ(bounded_sink.retirements, two_tables ? bounded_sink.forgets + 1 : 0u) << what;
      EXPECT_EQ(bounded.stacks_added(), bounded_sink.new_stacks) << what;
      EXPECT_GT(bounded.stacks_added(), unbounded.stacks_added()) << what;  // stacks seen again are added again
    }
}

// Two tables of half the bound each: the full table is retired (its keys
// stay) and indices go on from half the bound in the other; it is forgotten when the other fills, with
// its keys and weights intact, and its indices are given again after that.
TEST(RawStackIndex, TwoTablesRetireAFullTableAndForgetItOneTableLater) {
  struct Sink : NewStackSink {
    std::vector<uint32_t> indices;
    std::vector<std::pair<uint32_t, uint64_t>> forgotten;  // (first index, first key word) per forget
    std::vector<size_t> retired_at;                       // new stacks seen at each retirement
    void on_new_stack(uint32_t index, const uint64_t*, int32_t, const ProcessMaps*, const StackFingerprint&) override {
      indices.push_back(index);
    }
    void forget_stacks(const RawStackTable& table, uint32_t first) override {
      uint32_t n = 0;
      forgotten.emplace_back(first, table.size() ? table.key(0, &n)[0] : ~uint64_t(0));
    }
    void table_retired() override { retired_at.push_back(indices.size()); }
  } sink;
  RawStackIndex index(sink, false, /*max_stacks=*/4);  // two tables of 2
  index.use_two_tables();
  for (uint64_t id = 0; id < 7; ++id) {
    set_key(index.next_key(), {id, 1});
    index.commit(1, 1, nullptr);
  }
  index.flush();
  EXPECT_EQ(sink.indices, (std::vector<uint32_t>{0, 1, 2, 3, 0, 1, 2}));
  EXPECT_EQ(sink.retired_at, (std::vector<size_t>{2, 4, 6}));
  // The first table (keys 0, 1) is forgotten when the second (2, 3) is full,
  // then the second when the first fills again (4, 5).
  EXPECT_EQ(sink.forgotten, (std::vector<std::pair<uint32_t, uint64_t>>{{0, 0}, {2, 2}}));
  EXPECT_EQ(index.forgotten(), 4u);
  EXPECT_EQ(index.stacks_added(), 7u);
  EXPECT_EQ(index.size(), 1u);
  EXPECT_EQ(index.first_index(), 2u);
  std::vector<uint32_t> weighed;
  index.for_each_weight([&](uint32_t i, double w) {
    weighed.push_back(i);
    EXPECT_EQ(w, 1.0);
  });
  EXPECT_EQ(weighed, (std::vector<uint32_t>{0, 1, 2}));  // the retired table (4, 5), then the one in use (6)
}

// An index that counts samples (an observer numbers stacks in one table's
// order) keeps one table.
TEST(RawStackIndex, CountingSamplesKeepsOneTable) {
  struct Sink : NewStackSink {
    size_t retirements = 0;
    void on_new_stack(uint32_t, const uint64_t*, int32_t, const ProcessMaps*, const StackFingerprint&) override {}
    void forget_stacks(const RawStackTable&, uint32_t first) override { EXPECT_EQ(first, 0u); }
    void table_retired() override { ++retirements; }
  } sink;
  RawStackIndex index(sink, /*count_samples=*/true, /*max_stacks=*/2);
  index.use_two_tables();
  for (uint64_t id = 0; id < 9; ++id) {
    set_key(index.next_key(), {id, 1});
    index.commit(1, 1, nullptr);
  }
  index.flush();
  EXPECT_EQ(sink.retirements, 0u);
  EXPECT_EQ(index.forgotten(), 8u);
}

// With an observer the index counts samples per raw stack; a bounded index
// hands each stack's count over when it forgets the stack (the fold reports
// it then) and counts the next stacks from zero.
struct CountingSink : NewStackSink {
  const RawStackIndex* index = nullptr;
  std::vector<uint64_t> counts;  // of forgotten stacks, in index order
  void on_new_stack(uint32_t, const uint64_t*, int32_t, const ProcessMaps*, const StackFingerprint&) override {}
  void forget_stacks(const RawStackTable& table, uint32_t) override {
    for (uint32_t i = 0; i < table.size(); ++i) counts.push_back(index->sample_count(i));
  }
};

TEST(RawStackIndex, CountedSamplesAreHandedOverWhenTheBoundForgetsThem) {
  CountingSink sink;
  RawStackIndex index(sink, /*count_samples=*/true, /*max_stacks=*/2);
  sink.index = &index;
  for (uint64_t id = 0; id < 10; ++id)
    for (int repeat = 0; repeat < 3; ++repeat) {
      set_key(index.next_key(), {id, id + 1, id + 2});
      index.commit(1, 1, nullptr);
    }
  index.flush();
  EXPECT_EQ(index.stacks_added(), 10u);
  EXPECT_EQ(index.forgotten(), 8u);
  EXPECT_EQ(sink.counts, std::vector<uint64_t>(8, 3));
  ASSERT_EQ(index.size(), 2u);
  EXPECT_EQ(index.sample_count(0), 3u);
  EXPECT_EQ(index.sample_count(1), 3u);
}

}  // namespace
}  // namespace fg
