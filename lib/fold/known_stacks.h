// Where raw stacks that a bounded raw-stack table forgot ended in the
// profile tree, by a fingerprint of their keys: a stack seen again after its
// table was forgotten takes its node from here instead of being named and
// placed again (busyp1.data: 44% of the raw-stack table's new stacks had
// been seen before, 1.54M new against 0.86M distinct).
// Owning thread: the symbolising thread (SymbolisingThread: look-ups as it
// names a batch, remembering when a placed batch's buffers come back).
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
  // two); once half full it remembers no more stacks. 20 bytes a slot.
  // Half, not 3/4: most look-ups are of stacks never seen, and a miss
  // probes to an empty slot: 2.5 slots on average at half load, 8.5 at 3/4.
  explicit KnownStacks(size_t max_slots) : max_slots_(max_slots), slots_(std::min(size_t(1) << 14, max_slots)) {}

  // Starts loading the slot a find(fp) begins at.
  void prefetch(const StackFingerprint& fp) const { slots_.prefetch(fp.hash); }
  // The node a stack with this fingerprint ended at, or 0 (not known);
  // *serial (if given) gets the serial it was remembered with.
  NodeId find(const StackFingerprint& fp, uint32_t* serial = nullptr) const {
    const Slot* s = slots_.find(fp.hash, [&](const Slot& s) { return same(s, fp); });
    if (!s) return 0;
    if (serial) *serial = s->serial;
    return s->node;
  }
  // Remembers a stack's node (not 0, the root, where no stack ends) and a
  // serial of the caller's (the observer's raw stack index), unless it is
  // known already or the table is full.
  void remember(const StackFingerprint& fp, NodeId node, uint32_t serial = 0) {
    if (node == 0 || full()) return;
    slots_.reserve_for(slots_.size() + 1, 1, 2);
    const size_t i = slots_.probe(fp.hash, [&](const Slot& s) { return same(s, fp); });
    if (slots_.at(i).node == 0)
      slots_.fill(i, Slot{uint32_t(fp.hash), uint32_t(fp.hash >> 32), uint32_t(fp.check), node, serial});
  }
  // Grows now for `count` stacks (up to max_slots), so that slots
  // prefetched before a batch of remember() calls stay where they are.
  void reserve_for(size_t count) {
    slots_.reserve_for(std::min(count, max_slots_ / 2), 1, 2);
  }
  size_t size() const { return slots_.size(); }
  bool full() const { return (slots_.size() + 1) * 2 > max_slots_; }
  size_t bytes() const { return slots_.capacity() * sizeof(Slot); }
  static constexpr size_t kSlotBytes = 20;

 private:
  // 20 bytes, 4-aligned: the hash in two halves.
  struct Slot {
    uint32_t hash_lo = 0, hash_hi = 0;
    uint32_t check = 0;
    NodeId node = 0;  // 0: empty
    uint32_t serial = 0;
    uint64_t hash() const { return (uint64_t(hash_hi) << 32) | hash_lo; }
  };
  static bool same(const Slot& s, const StackFingerprint& fp) {
    return s.hash_lo == uint32_t(fp.hash) && s.hash_hi == uint32_t(fp.hash >> 32) && s.check == uint32_t(fp.check);
  }
  struct SlotPolicy {
    static bool empty(const Slot& s) { return s.node == 0; }
    static Slot empty_slot() { return Slot{}; }
    static uint64_t rehash(const Slot& s) { return s.hash(); }
  };
  static_assert(sizeof(Slot) == kSlotBytes, "five words a slot");
  const size_t max_slots_;
  OpenTable<Slot, SlotPolicy> slots_;
};

}  // namespace fg
