// Deduplicates raw stacks (the words a sample's stack is made of: the root
// frame, the process's map generation and the addresses) so that a stack seen
// a million times is symbolised once and each later sample costs one hash
// lookup. Keys live in one arena; the table never shrinks during a run.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

namespace fg {

class RawStackTable {
 public:
  static constexpr uint32_t kMissing = ~uint32_t{0};

  // The index of an equal key, or kMissing.
  uint32_t find(const uint64_t* words, uint32_t count, uint64_t hash) const {
    if (slots_.empty()) return kMissing;
    size_t mask = slots_.size() - 1;
    for (size_t i = hash & mask;; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (s.index == kMissing) return kMissing;
      if (s.hash == hash && entries_[s.index].count == count &&
          std::memcmp(&arena_[entries_[s.index].offset], words, count * sizeof(uint64_t)) == 0)
        return s.index;
    }
  }

  // Inserts a key known to be missing; returns its index (0, 1, 2, ...).
  uint32_t insert(const uint64_t* words, uint32_t count, uint64_t hash) {
    if ((entries_.size() + 1) * 4 >= slots_.size() * 3) grow();
    uint32_t index = uint32_t(entries_.size());
    entries_.push_back(Entry{arena_.size(), count});
    arena_.insert(arena_.end(), words, words + count);
    place(hash, index);
    return index;
  }

  size_t size() const { return entries_.size(); }

  static uint64_t hash_words(const uint64_t* words, uint32_t count) {
    // A multiply-xorshift mix per word: fast, and good enough for addresses.
    uint64_t h = 0x9e3779b97f4a7c15ull ^ count;
    for (uint32_t i = 0; i < count; ++i) {
      h ^= words[i] + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
      h *= 0xff51afd7ed558ccdull;
      h ^= h >> 32;
    }
    return h;
  }

 private:
  struct Slot {
    uint64_t hash = 0;
    uint32_t index = kMissing;
  };
  struct Entry {
    size_t offset;
    uint32_t count;
  };
  void place(uint64_t hash, uint32_t index) {
    size_t mask = slots_.size() - 1;
    size_t i = hash & mask;
    while (slots_[i].index != kMissing) i = (i + 1) & mask;
    slots_[i] = Slot{hash, index};
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 1024 : old.size() * 2, Slot{});
    for (const Slot& s : old)
      if (s.index != kMissing) place(s.hash, s.index);
  }

  std::vector<Slot> slots_;
  std::vector<Entry> entries_;
  std::vector<uint64_t> arena_;
};

}  // namespace fg
