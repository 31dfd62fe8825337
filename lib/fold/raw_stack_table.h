// Deduplicates raw stacks (the words a sample's stack is made of: the root
// frame, the process's map generation and the addresses) so that a stack seen
// a million times is symbolised once and each later sample costs one hash
// lookup. Keys live in one arena that only clear() empties (a bounded
// table, see RawStackIndex).
//
// With hundreds of thousands of distinct stacks the table outgrows the CPU
// caches and a lookup is two cache misses (slot, then key). prefetch() lets a
// caller that batches samples start both loads early and overlap them.
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "folded/huge_page_allocator.h"
#include "folded/hash.h"
#include "folded/open_table.h"
#include "folded/prefetch.h"

namespace fg {

class RawStackTable {
 public:
  static constexpr uint32_t kMissing = ~uint32_t{0};

  // The index of an equal key, or kMissing; *entry (if given) gets the
  // stored entry, for add_weight.
  uint32_t find(const uint64_t* words, uint32_t count, uint64_t hash, uint64_t** entry = nullptr) {
    const Slot* s = slots_.find(hash, [&](const Slot& s) {
      if (s.hash != hash) return false;
      // The arena holds each key's length and weight, then its words.
      const uint64_t* stored = at(s.offset);
      return stored[0] == count && same_words(stored + kEntryHeader, words, count);
    });
    if (!s) return kMissing;
    if (entry) *entry = at(s->offset);
    return s->index;
  }

  // Stage 1 of a batched lookup: start loading the slot for hash.
  void prefetch_slot(uint64_t hash) const { slots_.prefetch(hash); }
  // Stage 2 (after the slot has arrived): start loading the key of the first
  // slot whose hash matches (a likely hit).
  void prefetch_key(uint64_t hash) const {
    const Slot* s = slots_.home(hash);
    if (s && s->index != kMissing && s->hash == hash) prefetch_for_read(at(s->offset));
  }

  // Inserts a key known to be missing; returns its index (0, 1, 2, ...).
  uint32_t insert(const uint64_t* words, uint32_t count, uint64_t hash, uint64_t** entry = nullptr) {
    if (count + kEntryHeader > kBlockWords) throw std::length_error("raw stack table: a key of more than 256 K words");
    if (blocks_in_use_ == 0 || block_used_ + count + kEntryHeader > kBlockWords) {
      if (blocks_in_use_ >= (size_t(1) << (32 - kBlockShift)) || offsets_.size() + 1 >= kMissing)
        throw std::length_error("raw stack table: more than 32 GB of stacks");
      if (blocks_in_use_ == blocks_.size()) blocks_.emplace_back(kBlockWords);
      ++blocks_in_use_;
      block_used_ = 0;
    }
    uint32_t index = uint32_t(offsets_.size());
    uint32_t offset = uint32_t(((blocks_in_use_ - 1) << kBlockShift) | block_used_);
    uint64_t* p = blocks_[blocks_in_use_ - 1].data() + block_used_;
    p[0] = count;
    p[1] = 0;  // the weight, 0.0
    std::memcpy(p + kEntryHeader, words, count * sizeof(uint64_t));
    block_used_ += count + kEntryHeader;
    if (entry) *entry = p;
    offsets_.push_back(offset);
    slots_.insert_new(hash, Slot{hash, index, offset});
    return index;
  }

  size_t size() const { return offsets_.size(); }

  // Forgets every key (indices start again at 0). The key blocks stay, to be
  // filled again: their pages are already faulted in, and a bounded table
  // (RawStackIndex's max_stacks) reaches the same size again. The slots are
  // sized at once for as many keys as before, not doubled up again.
  void clear() {
    const size_t keys = offsets_.size();
    offsets_.clear();
    blocks_in_use_ = 0;
    block_used_ = 0;
    slots_.clear();
    slots_.reserve_for(keys);
  }
  // The words of key index, and their number.
  const uint64_t* key(uint32_t index, uint32_t* count) const {
    const uint64_t* stored = at(offsets_[index]);
    *count = uint32_t(stored[0]);
    return stored + kEntryHeader;
  }
  // A weight kept with each key: adding to it touches the cache line that
  // the lookup just compared, where a separate array would be one more miss.
  double weight(uint32_t index) const {
    double w;
    std::memcpy(&w, at(offsets_[index]) + 1, sizeof w);
    return w;
  }
  static void add_weight(uint64_t* entry, double w) {
    double v;
    std::memcpy(&v, entry + 1, sizeof v);
    v += w;
    std::memcpy(entry + 1, &v, sizeof v);
  }

  static uint64_t hash_words(const uint64_t* words, uint32_t count) { return detail::hash_words(words, count); }
  // The same hash, and a second 64 bits for a fingerprint (KnownStacks).
  static uint64_t hash_words(const uint64_t* words, uint32_t count, uint64_t* check) {
    return detail::hash_words_pair(words, count, check);
  }

  // Equal keys: a plain word loop, inlined (memcmp's call showed in profiles).
  static bool same_words(const uint64_t* a, const uint64_t* b, uint32_t count) {
    for (uint32_t i = 0; i < count; ++i)
      if (a[i] != b[i]) return false;
    return true;
  }

 private:
  // 16 bytes, four to a cache line; the key's offset is here so that a
  // lookup touches the slot and the key, nothing in between.
  struct Slot {
    uint64_t hash = 0;
    uint32_t index = kMissing;
    uint32_t offset = 0;
  };
  struct SlotPolicy {
    static bool empty(const Slot& s) { return s.index == kMissing; }
    static Slot empty_slot() { return Slot{}; }
    static uint64_t rehash(const Slot& s) { return s.hash; }
  };

  // Keys live in fixed 2 MiB blocks, never moved: a growing vector would copy
  // tens of MB at each doubling and briefly need twice the memory.
  static constexpr size_t kEntryHeader = 2;  // count, weight
  static constexpr unsigned kBlockShift = 18;
  static constexpr size_t kBlockWords = size_t(1) << kBlockShift;
  const uint64_t* at(uint32_t offset) const {
    return blocks_[offset >> kBlockShift].data() + (offset & (kBlockWords - 1));
  }
  uint64_t* at(uint32_t offset) { return blocks_[offset >> kBlockShift].data() + (offset & (kBlockWords - 1)); }

  OpenTable<Slot, SlotPolicy, HugePageAllocator<Slot>> slots_{1024};
  std::vector<uint32_t> offsets_;  // per index: block << kBlockShift | word in the block
  std::vector<std::vector<uint64_t, HugePageAllocator<uint64_t>>> blocks_;  // per key: length, weight, words
  size_t blocks_in_use_ = 0;       // blocks_[0, blocks_in_use_) hold keys; later ones wait, emptied by clear()
  size_t block_used_ = 0;          // words used in blocks_[blocks_in_use_ - 1]
};

}  // namespace fg
