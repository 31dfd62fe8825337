// Where raw stacks that a bounded raw-stack table forgot ended in the
// profile tree, by a fingerprint of their keys: a stack seen again after its
// table was forgotten takes its node from here instead of being named and
// placed again (busyp1.data: 44% of the raw-stack table's new stacks had
// been seen before, 1.54M new against 0.86M distinct).
// Owning thread: the folding thread.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "folded/folded_profile.h"
#include "folded/open_table.h"

namespace fg {

// Two 64-bit hashes of a raw stack key (detail::hash_words_pair); a slot
// keeps the first and 32 bits of the second. Equal keys have equal
// fingerprints; two of a fold's n distinct keys share the 96 bits compared
// by chance with a probability near n^2 / 2^97 (10^-17 for a million).
struct StackFingerprint {
  uint64_t hash = 0, check = 0;
};

class KnownStacks {
 public:
  // max_slots: the table never grows past this many slots (a power of
  // two); once half full it remembers no more stacks. 16 bytes a slot.
  // Half, not 3/4: most look-ups are of stacks never seen, and a miss
  // probes to an empty slot (at 3/4 load, 8 slots on average; busy7.data's
  // fold was 8% slower with the look-ups than without).
  explicit KnownStacks(size_t max_slots) : max_slots_(max_slots), slots_(std::min(size_t(1) << 14, max_slots)) {}

  // Starts loading the slot a find(fp) begins at.
  void prefetch(const StackFingerprint& fp) const { slots_.prefetch(fp.hash); }
  // The node a stack with this fingerprint ended at, or 0 (not known).
  NodeId find(const StackFingerprint& fp) const {
    const Slot* s = slots_.find(fp.hash, [&](const Slot& s) { return s.hash == fp.hash && s.check == uint32_t(fp.check); });
    return s ? s->node : 0;
  }
  // Remembers a stack's node (not 0, the root, where no stack ends), unless
  // it is known already or the table is full.
  void remember(const StackFingerprint& fp, NodeId node) {
    if (node == 0 || full()) return;
    slots_.reserve_for(slots_.size() + 1, 1, 2);
    const size_t i =
        slots_.probe(fp.hash, [&](const Slot& s) { return s.hash == fp.hash && s.check == uint32_t(fp.check); });
    if (slots_.at(i).node == 0) slots_.fill(i, Slot{fp.hash, uint32_t(fp.check), node});
  }
  // Grows now for `count` stacks (up to max_slots), so that slots
  // prefetched before a batch of remember() calls stay where they are.
  void reserve_for(size_t count) {
    slots_.reserve_for(std::min(count, max_slots_ / 2), 1, 2);
  }
  size_t size() const { return slots_.size(); }
  bool full() const { return (slots_.size() + 1) * 2 > max_slots_; }
  size_t bytes() const { return slots_.capacity() * sizeof(Slot); }

 private:
  struct Slot {
    uint64_t hash = 0;
    uint32_t check = 0;
    NodeId node = 0;  // 0: empty
  };
  struct SlotPolicy {
    static bool empty(const Slot& s) { return s.node == 0; }
    static Slot empty_slot() { return Slot{}; }
    static uint64_t rehash(const Slot& s) { return s.hash; }
  };
  const size_t max_slots_;
  OpenTable<Slot, SlotPolicy> slots_;
};

}  // namespace fg
