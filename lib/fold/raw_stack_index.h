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
// Owning thread: the folding thread.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "fold/raw_stack_table.h"

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
  virtual void on_new_stack(uint32_t index, const uint64_t* key, int32_t pid, const ProcessMaps* proc) = 0;
  // The table is full and forgets every stack next: take each index's weight
  // (table.weight(i)) now. Its keys are still there and stay until this
  // returns; then indices start again at 0. Only with max_stacks.
  virtual void forget_stacks(const RawStackTable& table) = 0;
};

class RawStackIndex {
 public:
  // count_samples: keep a sample count per raw stack (for an observer; like
  // the weights, the counts start again when the stacks are forgotten).
  // max_stacks: forget every stack when this many are held (0 = never).
  RawStackIndex(NewStackSink& sink, bool count_samples, size_t max_stacks = 0)
      : sink_(sink), count_samples_(count_samples), max_stacks_(max_stacks) {}

  // Adding a sample, in two steps: fill the returned (empty) buffer with
  // its key, then commit. Its weight is added a little later: the slot is
  // prefetched at once, the key kPrefetchKeyAfter samples later, and the
  // lookup happens when the sample leaves the kRing-long ring.
  std::vector<uint64_t>& next_key();
  void commit(double weight, int32_t pid, const ProcessMaps* proc);
  // Resolves every sample in the ring: call before anything the keys or
  // their symbolisation depend on changes (the process table), and at the end.
  void flush();

  // The index of a key now (the off-CPU paths need it at once); adds no weight.
  uint32_t index_now(const uint64_t* key, uint32_t count, int32_t pid, const ProcessMaps* proc);

  const RawStackTable& table() const { return table_; }
  size_t size() const { return table_.size(); }
  // Stacks added since the start, forgotten ones included (a stack seen
  // again after the table was emptied counts again).
  uint64_t stacks_added() const { return forgotten_ + table_.size(); }
  // Stacks forgotten so far: table index i is stack forgotten() + i of the fold.
  uint64_t forgotten() const { return forgotten_; }
  double weight(uint32_t index) const { return table_.weight(index); }
  uint64_t sample_count(uint32_t index) const { return index < counts_.size() ? counts_[index] : 0; }

  static constexpr size_t kRing = 32, kPrefetchKeyAfter = 16;

 private:
  struct Pending {
    std::vector<uint64_t> words;  // the key (keeps its capacity across samples)
    uint64_t hash = 0;
    double weight = 0;
    int32_t pid = 0;
    const ProcessMaps* proc = nullptr;
  };
  uint32_t resolve(const uint64_t* key, uint32_t count, uint64_t hash, int32_t pid, const ProcessMaps* proc,
                   uint64_t** entry);
  void resolve_oldest();
  Pending& at(size_t i) { return ring_[(head_ + i) % kRing]; }

  NewStackSink& sink_;
  const bool count_samples_;
  const size_t max_stacks_;
  uint64_t forgotten_ = 0;
  RawStackTable table_;
  std::array<Pending, kRing> ring_;
  size_t head_ = 0, count_ = 0;
  std::vector<uint32_t> counts_;  // per raw stack, only with count_samples
};

}  // namespace fg
