// Gives each sample's raw stack key its index in the RawStackTable and adds
// the sample's weight there, with lookups delayed through a short ring so
// that the cache misses of many samples overlap; a key seen for the first
// time is handed to a NewStackSink (which has it symbolised).
//
// Bounded (max_stacks): a busy system-wide recording has over a million
// distinct raw stacks (addresses differ where the folded frames do not), and
// keeping them all cost 240 of a 512 MB peak. When the table is full, the
// sink takes every stack's weight into the profile (forget_stacks), the
// table forgets them and starts again at index 0: a stack seen again is
// symbolised again (cheap: every frame is in the frame cache). Memory then
// grows with the folded profile, not with raw stacks or samples.
//
// With two tables (use_two_tables: a fold whose new stacks are symbolised on
// another thread) of half the bound each, a full table stops taking stacks
// and the other one takes them, with indices max_stacks / 2 and up; the full
// one is forgotten only when the other fills in turn. By then its stacks,
// queued for symbolising long before, are named, so forgetting it waits for
// nothing: with one table each forget waited for every queued stack
// (busyp1.data: 88 waits, 0.07 s of the folding thread, and the symbolising
// thread idle after each).
// Owning thread: the folding thread.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "fold/known_stacks.h"
#include "fold/raw_stack_table.h"
#include "fold/stack_key.h"

namespace fg {

struct ProcessMaps;

// Told of every new raw stack, in index order (0, 1, 2, ...). The key stays
// where it is for the whole fold (the table's arena never moves). `proc` is
// the process the key was built with, as the caller gave it (the process
// table does not change before the sink sees the stack: callers flush
// first), so the sink need not look it up again: on a busy machine that
// lookup was a cache miss per new stack.
class NewStackSink {
 public:
  virtual ~NewStackSink() = default;
  // `fp`: the key's fingerprint (for KnownStacks).
  virtual void on_new_stack(uint32_t index, const uint64_t* key, int32_t pid, const ProcessMaps* proc,
                            const StackFingerprint& fp) = 0;
  // A table forgets every stack next: take each stack's weight now
  // (table.weight(i) is index first + i's). Its keys are still there and
  // stay until this returns; then that table's indices start again. Only
  // with max_stacks.
  virtual void forget_stacks(const RawStackTable& table, uint32_t first) = 0;
  // With two tables: the table in use is full and stops taking stacks (the
  // stacks reported so far are all its or the other's); it is forgotten at
  // the next forget_stacks, after the other table fills.
  virtual void table_retired() {}
};

class RawStackIndex {
 public:
  // count_samples: keep a sample count per raw stack (for an observer; like
  // the weights, the counts start again when the stacks are forgotten).
  // max_stacks: forget every stack when this many are held (0 = never).
  RawStackIndex(NewStackSink& sink, bool count_samples, size_t max_stacks = 0)
      : sink_(sink), count_samples_(count_samples), max_stacks_(max_stacks), table_stacks_(max_stacks) {}

  // Two tables from now on (see above); before the first stack, with
  // max_stacks and without count_samples (an observer numbers stacks in
  // the order of one table). Otherwise one table, as before.
  // Each table then holds half of max_stacks (at least 1): the keys held
  // at once stay within max_stacks.
  void use_two_tables() {
    if (!max_stacks_ || count_samples_ || stacks_added() != 0) return;
    two_tables_ = true;
    table_stacks_ = std::max<size_t>(1, max_stacks_ / 2);
  }

  // Adding a sample, in two steps: fill the returned (empty) buffer with
  // its key, then commit. Its weight is added a little later: the slot is
  // prefetched at once, the key kPrefetchKeyAfter samples later, and the
  // lookup happens when the sample leaves the kRing-long ring.
  KeyWords& next_key();
  void commit(double weight, int32_t pid, const ProcessMaps* proc);
  // Resolves every sample in the ring: call before anything the keys or
  // their symbolisation depend on changes (the process table), and at the end.
  void flush();
  // Resolves the ring's samples up to the newest one of process pid (in
  // order: indices are given as by flush()): before a change of that
  // process alone (its maps, its comm, a new process with its pid). A busy
  // machine's recording has such a change every 14 samples (Chromium
  // relaunched: 173 k MMAP2, COMM, FORK and EXIT records), and flushing the
  // whole ring at each left its prefetches too little time.
  void flush_process(int32_t pid);

  // The index of a key now (the off-CPU paths need it at once); adds no weight.
  uint32_t index_now(const uint64_t* key, uint32_t count, int32_t pid, const ProcessMaps* proc);

  // The table in use and its stacks (index first_index() + i).
  const RawStackTable& table() const { return tables_[current_]; }
  size_t size() const { return table().size(); }
  uint32_t first_index() const { return uint32_t(current_ * table_stacks_); }
  // Stacks added since the start, forgotten ones included (a stack seen
  // again after the table was emptied counts again).
  uint64_t stacks_added() const {
    return forgotten_ + table().size() + (retired_ ? tables_[1 - current_].size() : 0);
  }
  // Stacks forgotten so far: with one table, table index i is stack
  // forgotten() + i of the fold.
  uint64_t forgotten() const { return forgotten_; }
  // With one table: the weight and sample count of the stack at index.
  double weight(uint32_t index) const { return table().weight(index); }
  uint64_t sample_count(uint32_t index) const { return index < counts_.size() ? counts_[index] : 0; }
  // Every stack not forgotten, with its index and weight (both tables).
  template <class Fn>
  void for_each_weight(Fn&& fn) const {
    auto visit = [&](unsigned t) {
      const uint32_t first = uint32_t(t * table_stacks_);
      for (uint32_t i = 0; i < tables_[t].size(); ++i) fn(first + i, tables_[t].weight(i));
    };
    if (retired_) visit(1 - current_);
    visit(current_);
  }

  static constexpr size_t kRing = 32, kPrefetchKeyAfter = 16;

 private:
  struct Pending {
    KeyWords words;  // the key (keeps its capacity across samples)
    uint64_t hash = 0, check = 0;  // its fingerprint
    double weight = 0;
    int32_t pid = 0;
    const ProcessMaps* proc = nullptr;
  };
  uint32_t resolve(const uint64_t* key, uint32_t count, const StackFingerprint& fp, int32_t pid,
                   const ProcessMaps* proc, uint64_t** entry);
  void resolve_oldest();
  void resolve_first(size_t n);
  void make_room();
  Pending& at(size_t i) { return ring_[(head_ + i) % kRing]; }

  NewStackSink& sink_;
  const bool count_samples_;
  const size_t max_stacks_;
  size_t table_stacks_;  // stacks a table holds: max_stacks, or half of it with two tables
  uint64_t forgotten_ = 0;
  bool two_tables_ = false;
  unsigned current_ = 0;  // the table taking stacks (always 0 with one table)
  bool retired_ = false;  // the other table holds stacks not yet forgotten
  RawStackTable tables_[2];
  std::array<Pending, kRing> ring_;
  size_t head_ = 0, count_ = 0;
  std::vector<uint32_t> counts_;  // per raw stack, only with count_samples
};

}  // namespace fg
