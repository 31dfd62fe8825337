// The one hash table of the hot paths: open addressing with linear probing
// over a power-of-two slot array. std::unordered_map chases a pointer per
// lookup; here a lookup touches one slot (and, for out-of-line keys, one key),
// and callers that batch lookups can prefetch both.
//
// The slot type is the caller's: it keeps whatever makes a miss cheap (a
// hash tag, an inline key, an offset into an arena). The table only needs to
// know which slots are empty and where a slot goes when the array doubles.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "folded/prefetch.h"

namespace fg {

// Policy (a stateless type with static members):
//   static bool empty(const Slot&);           // an unused slot
//   static Slot empty_slot();                  // the value unused slots hold
//   static uint64_t rehash(const Slot&);       // the hash of a used slot, to place it after a doubling
template <class Slot, class Policy, class Alloc = std::allocator<Slot>>
class OpenTable {
 public:
  // min_capacity: the slot count of the first allocation (a power of two).
  explicit OpenTable(size_t min_capacity = 1024) : min_capacity_(min_capacity) {}

  size_t size() const { return used_; }
  size_t capacity() const { return slots_.size(); }
  bool unallocated() const { return slots_.empty(); }

  // The index of the first slot, probing from hash, that is empty or for
  // which match(slot) holds. The table must be allocated (reserve_for).
  template <class Match>
  size_t probe(uint64_t hash, Match&& match) const {
    const size_t mask = slots_.size() - 1;
    for (size_t i = size_t(hash) & mask;; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (Policy::empty(s) || match(s)) return i;
    }
  }

  // The used slot for which match holds, or nullptr (also on an empty table).
  template <class Match>
  const Slot* find(uint64_t hash, Match&& match) const {
    if (slots_.empty()) return nullptr;
    const Slot& s = slots_[probe(hash, match)];
    return Policy::empty(s) ? nullptr : &s;
  }
  template <class Match>
  Slot* find(uint64_t hash, Match&& match) {
    return const_cast<Slot*>(static_cast<const OpenTable&>(*this).find(hash, match));
  }

  // Grows (doubling, re-placing every used slot) so that `count` used slots
  // keep the load at or under max_load_num / max_load_den.
  void reserve_for(size_t count, size_t max_load_num = 3, size_t max_load_den = 4) {
    size_t cap = slots_.empty() ? min_capacity_ : slots_.size();
    while (count * max_load_den > cap * max_load_num) cap *= 2;
    if (cap != slots_.size()) rebuild(cap);
  }

  // Fills the empty slot `index` (from probe) with s. Call reserve_for(size()+1)
  // before the probe, never between the probe and the fill.
  Slot& fill(size_t index, const Slot& s) {
    slots_[index] = s;
    ++used_;
    return slots_[index];
  }

  // Inserts a slot known to be absent; returns where it went.
  Slot& insert_new(uint64_t hash, const Slot& s) {
    reserve_for(used_ + 1);
    return fill(probe(hash, [](const Slot&) { return false; }), s);
  }

  Slot& at(size_t index) { return slots_[index]; }
  const Slot& at(size_t index) const { return slots_[index]; }
  // The slot a probe for hash starts at: for prefetching before a lookup.
  const Slot* home(uint64_t hash) const {
    return slots_.empty() ? nullptr : &slots_[size_t(hash) & (slots_.size() - 1)];
  }
  void prefetch(uint64_t hash) const {
    if (!slots_.empty()) prefetch_for_read(home(hash));
  }

  void clear() {
    slots_.clear();
    used_ = 0;
  }

  template <class Visit>
  void for_each(Visit&& visit) const {
    for (const Slot& s : slots_)
      if (!Policy::empty(s)) visit(s);
  }

 private:
  void rebuild(size_t cap) {
    std::vector<Slot, Alloc> old = std::move(slots_);
    slots_.assign(cap, Policy::empty_slot());
    const size_t mask = cap - 1;
    for (const Slot& s : old) {
      if (Policy::empty(s)) continue;
      size_t i = size_t(Policy::rehash(s)) & mask;
      while (!Policy::empty(slots_[i])) i = (i + 1) & mask;
      slots_[i] = s;
    }
  }

  std::vector<Slot, Alloc> slots_;
  size_t used_ = 0;
  size_t min_capacity_;
};

}  // namespace fg
