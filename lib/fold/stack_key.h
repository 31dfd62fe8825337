// Turns a sample into its raw stack key: the words that say everything needed
// to symbolise the stack later (root frame, map generations, addresses and
// their kind), so that equal stacks are found by one hash lookup.
// Owning thread: the folding thread (one StackKeyBuilder per fold).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "folded/growable_array.h"
#include "perf/perf_records.h"
#include "unwind/dwarf_unwinder.h"
#include "unwind/process_table.h"

namespace fg {

// One address of a sample's stack, leaf first.
struct StackAddress {
  uint64_t address = 0;
  bool kernel = false;
  bool return_address = false;  // a caller's return address (symbolised at address - 1)
};

// The address a DWARF stack cut short gets as its root-side frame: what perf
// prints there (a return address read as 0, minus 1). It lies in no mapping.
constexpr uint64_t kCutShortMarker = ~uint64_t(0);

// The user part of a DWARF sample's stack, as an unwinder found it.
struct UnwoundUserStack {
  const std::vector<UnwindFrame>* frames = nullptr;
  UnwindOutcome outcome = UnwindOutcome::complete;
};

// A key's words. Written in place, not zeroed first: a std::vector's
// resize zeroed every sample's key before it was written (1% of the fold).
using KeyWords = GrowableArray<uint64_t>;

struct StackKeyStats {
  bool dwarf = false;              // a DWARF sample was seen
  uint64_t cut_short_samples = 0;  // DWARF stacks cut short by the user stack copy's size
  uint64_t truncated_stacks = 0;   // stacks over kMaxStackDepth frames (leaf-most kept)
};

// Key layout: [address count n (| kDwarfUser when the user frames come from
// DWARF unwinding), the root (an opaque pointer: the fold's ThreadRoot), the
// process's map generation (0 without user frames:
// kernel-only stacks do not depend on the process), the kernel's map
// generation, n addresses leaf first, then 2 flag bits per address (bit 0
// return address, bit 1 kernel), 32 to a word].
class StackKeyBuilder {
 public:
  static constexpr size_t kHeaderWords = 4;
  static constexpr uint64_t kDwarfUser = uint64_t(1) << 63;

  explicit StackKeyBuilder(const ProcessTable& table);

  // Whether the user part of s comes from DWARF unwinding (not its callchain).
  static bool is_dwarf(const Sample& s) { return s.regs_user_mask != 0 && s.attr && s.attr->has(sample_bits::STACK_USER); }

  // Appends s's key to `key`. `proc`: the sample's process (nullptr if not
  // known); `unwound`: for a DWARF sample (is_dwarf), its unwound user frames.
  void append_key(const Sample& s, const void* root, const ProcessMaps* proc, const UnwoundUserStack& unwound,
                  KeyWords& key);

  const StackKeyStats& stats() const { return stats_; }

 private:
  void append_callchain_key(const Sample& s, const void* root, const ProcessMaps* proc, KeyWords& key);
  void set_kinds(size_t from, size_t to, bool kernel);
  void collect_addresses(const Sample& s, const UnwoundUserStack& unwound);
  void push(uint64_t address, bool kernel, bool return_address) {
    if (count_ < kMaxDepth) addresses_[count_++] = StackAddress{address, kernel, return_address};
    else truncated_ = true;
  }

  static constexpr size_t kMaxDepth = 4096;  // kMaxStackDepth (folded_profile.h), checked in the .cpp
  const ProcessTable& table_;
  // A sample's addresses, leaf first, in a buffer sized once: pushing is a
  // store and a compare (a std::vector's push_back was not inlined and
  // showed in profiles). Addresses beyond the limit are dropped, which
  // keeps the leaf-most kMaxDepth.
  std::unique_ptr<StackAddress[]> addresses_;
  std::unique_ptr<uint64_t[]> flags_;  // a callchain key's flag words, until its address count is known
  size_t count_ = 0;
  bool truncated_ = false;
  StackKeyStats stats_;
};

// Reads a key back (the symboliser's side).
class StackKeyView {
 public:
  explicit StackKeyView(const uint64_t* key) : key_(key) {}
  size_t size() const { return size_t(key_[0] & ~StackKeyBuilder::kDwarfUser); }
  // Whether the user frames were unwound with DWARF (not a callchain's).
  bool dwarf_user() const { return (key_[0] & StackKeyBuilder::kDwarfUser) != 0; }
  const void* root() const { return reinterpret_cast<const void*>(uintptr_t(key_[1])); }
  bool has_user_frames() const { return key_[2] != 0; }
  StackAddress operator[](size_t i) const {
    uint64_t f = key_[StackKeyBuilder::kHeaderWords + size() + i / 32] >> (2 * (i % 32));
    return StackAddress{key_[StackKeyBuilder::kHeaderWords + i], (f & 2) != 0, (f & 1) != 0};
  }
  // Words of the whole key.
  size_t word_count() const { return StackKeyBuilder::kHeaderWords + size() + (size() + 31) / 32; }

 private:
  const uint64_t* key_;
};

}  // namespace fg
