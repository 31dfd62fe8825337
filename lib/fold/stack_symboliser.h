// Names the frames of raw stacks, once per distinct raw stack: owns the
// symbol cache, the frame cache (object + offset -> the frames an address
// becomes; one entry for all of an object's addresses where no symbol
// reaches, and for a process's unnamed JIT code), the names perf gives what
// has no symbol ([dso], [perf-PID.map], [JIT], [unknown]) and the interned
// frame names. Its output, a record per
// stack, goes to StackTreeBuilder (stack_tree_builder.h), which builds the
// profile tree: naming and the tree walk run on two threads.
// Owning thread: the symbolising thread when the fold has one, else the
// folding thread. Only elf_path_for() may be called from other threads.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "fold/fold_perf_data.h"
#include "fold/stack_key.h"
#include "folded/folded_profile.h"
#include "folded/growable_array.h"
#include "folded/open_table.h"
#include "symbols/symbol_cache.h"
#include "unwind/process_table.h"

namespace fg {

struct SymboliserStats {
  uint64_t frames = 0, kernel_frames = 0, unknown_frames = 0;
  uint64_t truncated_names = 0;  // symbol names cut to kMaxFrameNameBytes
  uint64_t memo_frames = 0;      // of `frames`, taken from the path memo
  uint64_t named_addresses = 0;  // frame-cache misses: addresses symbolised
  // Of `frames` not from the memo, those named by their object or JIT
  // process alone without a look-up (where no address has a symbol).
  uint64_t alike_frames = 0;
};

// symbolise's output for one raw stack, in 32-bit words: a header of
// kWords words, then per address (root side first, after those the memo
// gave) the number of its frames and their FrameIds (outermost first,
// inlines included).
struct SymbolisedStack {
  enum Word : size_t {
    kIdx,        // the raw stack
    kRootFrame,  // where a path not from the memo starts: child(0, root frame)
    // The path memo: the stack starts at the node where the memo slot's
    // entry kReused - 1 ended (when kReused > 0), and the first kMemoNew
    // addresses below become the slot's entries kReused, kReused + 1, ...
    kMemoSlot,
    kReused,
    kMemoNew,
    kAddresses,  // address groups that follow
    kWords
  };
  // kMemoSlot of a stack KnownStacks knew: it ends at node kRootFrame, and
  // nothing follows (SymbolisingThread::append_known).
  static constexpr uint32_t kKnownNode = ~uint32_t{0};
};

// What symbolise appends: the SymbolisedStack records and, with an
// observer, what it is to be told of each raw stack. The observer is told
// when the stack is placed (StackTreeBuilder::place), in the same order, on
// the thread that places it: not always the symbolising thread, which is
// the busier one when a pprof export watches (busy.data: 0.17 s more).
struct NamedStacks {
  struct ObservedStack {
    uint32_t index;  // the observer's index (the stacks forgotten before counted)
    RawStackRoot root;
    uint32_t frames_start, count;  // into frames, leaf first
    RawStackMemo memo;
    // kNotKnown, or the earlier raw stack this one repeats (the observer
    // gets on_known_raw_stack, and root, frames and memo are unused).
    uint32_t same_as = kNotKnown;
  };
  static constexpr uint32_t kNotKnown = ~uint32_t{0};
  // Appended a word or a run at a time: a std::vector's push_back was not
  // inlined, and its resize zeroed what is written next (2% of a busy fold).
  GrowableArray<uint32_t> records;
  std::vector<ObservedStack> stacks;
  // RawStackFrame::names is set when the observer is told: names_at[i] is
  // where frame i's names are in `records` (which may move until then).
  std::vector<RawStackFrame> frames;
  std::vector<uint32_t> names_at;

  void clear() {
    records.clear();
    stacks.clear();
    frames.clear();
    names_at.clear();
  }
  // Tells `observer` of every stack, in order.
  void tell(FoldObserver& observer);
};

class StackSymboliser {
 public:
  // The path memo's geometry (StackTreeBuilder keeps the nodes of the same slots).
  static constexpr size_t kMemoSets = 256, kMemoWays = 4, kMemoDepth = 128;
  static constexpr size_t kMemoSlots = kMemoSets * kMemoWays;

  // `info` (the reader's) is read for its BUILD_ID feature on first need.
  StackSymboliser(const FoldOptions& options, const PerfFileInfo& info);
  StackSymboliser(const StackSymboliser&) = delete;
  StackSymboliser& operator=(const StackSymboliser&) = delete;

  // Names the frames of raw stack idx (a StackKeyBuilder key whose root is
  // a ThreadRoot*) and appends its SymbolisedStack record to `out` (and,
  // with an observer, what it is to be told). `maps`: the map list of the
  // process the key's user addresses belong to, as it was when the key was
  // made (empty for kernel-only keys).
  void symbolise(uint32_t idx, const uint64_t* key, int32_t pid, MapsView maps, NamedStacks& out);
  // The same with the process as the table has it now (nullptr: none).
  void symbolise(uint32_t idx, const uint64_t* key, int32_t pid, const ProcessMaps* proc, NamedStacks& out) {
    symbolise(idx, key, pid, proc ? proc->view() : MapsView(), out);
  }

  // The interned frame names (and objects) the records' FrameIds index.
  FoldedProfile& names() { return names_; }
  // The observer's index of raw stack 0 from now on (the stacks the fold
  // forgot before it); only while no stack is being symbolised.
  void set_observer_base(uint64_t base) { observer_base_ = base; }
  // The observer's index of raw stack idx (the stacks forgotten before
  // counted).
  uint32_t observer_index(uint32_t idx) const {
    const uint64_t index = observer_base_ + idx;
    if (index > UINT32_MAX) throw std::length_error("more than 4 billion raw stacks for the observer");
    return uint32_t(index);
  }
  SymbolCache& symbols() { return symbols_; }
  const SymboliserStats& stats() const { return stats_; }

  // The ELF file for a mapping, for the DWARF unwinders (several threads):
  // "" when the mapping has no file.
  std::string elf_path_for(const MapEntry& m);

 private:
  // A frame-cache key: a kind in the top 3 bits of `a`, then a 28-bit object
  // handle or JIT process (jit_process) and the return-address bit; `b` the
  // file offset, kernel address or JIT address.
  struct FrameKey {
    uint32_t a;
    uint64_t b;
  };
  static constexpr unsigned kKeyValueBits = 28;
  // A run of FrameIds in the frame arena: arena[start] is the count, the
  // names follow (appended to a record as they are, count first).
  struct FrameSpan {
    uint32_t start, count;
  };
  // 16 bytes, four to a cache line: the table is a few hundred thousand
  // addresses on a busy system-wide recording (busy4.data: 24 MB at 24
  // bytes a slot).
  struct FrameSlot {
    uint64_t b = 0;
    uint32_t a = 0;      // 0: unused (every kind is non-zero)
    uint32_t start = 0;  // in frame_arena_, or kInlineFrame | the address's only FrameId
  };
  // Without an observer (which keys its locations by arena place), an
  // address named by one frame keeps that frame's id in its slot: reading
  // the arena after the slot was a second cache miss for every rarely seen
  // address (busy5.data: a third of append_frames' time).
  static constexpr uint32_t kInlineFrame = uint32_t(1) << 31;
  static_assert(sizeof(FrameSlot) == 16, "four frame-cache slots to a cache line");
  struct FrameSlotPolicy {
    static bool empty(const FrameSlot& s) { return s.a == 0; }
    static FrameSlot empty_slot() { return FrameSlot{}; }
    static uint64_t rehash(const FrameSlot& s);
  };
  // symbolise's per-frame scratch.
  struct StackFrame {
    StackAddress address;  // as in the key (the observer's)
    StackAddress named;    // as named: return_address only where the call site is named
    FrameKey key;
    uint64_t hash;  // of key
    const MapEntry* map;
  };

  // A recent stack symbolised under a root in one process (map generation),
  // root frame first: its addresses (StackTreeBuilder keeps the node each
  // ends at). New raw stacks of a thread mostly differ near the leaf; the
  // callers they share with a memo are taken from it instead of being named
  // and looked up in the tree frame by frame (busy.data: 48% of the frames,
  // fold 2.07 -> 1.5 s). Memos are sets of kMemoWays per (root, process).
  struct MemoEntry {
    uint64_t address;
    uint32_t flags;  // bit 0 named at its call site, bit 1 kernel (memo_flags)
    uint32_t alike;  // the frame key's `a` where alike_key (its `b` is 0), else 0
  };
  static uint32_t memo_flags(const StackAddress& a, bool call_site) {
    return (a.kernel ? 2u : 0u) | (call_site ? 1u : 0u);
  }
  struct PathMemo {
    const void* root = nullptr;
    uint64_t generation = 0, kernel_generation = 0;
    uint32_t depth = 0;  // entries in use; only addresses that are kernel or mapped
    uint64_t last_used = 0;
    std::unique_ptr<MemoEntry[]> entries;
  };
  PathMemo& best_memo(const uint64_t* key_words, size_t* reused);
  void symbolise_with_memo(uint32_t idx, const uint64_t* key_words, int32_t pid, MapsView& maps, NamedStacks& out);

  bool naming_call_site(const StackAddress& a, const StackKeyView& key) const;
  size_t frame_keys(const StackKeyView& key, size_t end, int32_t pid, MapsView& maps, bool* cut);
  void observe_stack(uint32_t idx, const void* root, size_t n, int32_t pid, NamedStacks& out);
  FrameSpan append_frames(const StackFrame& f, int32_t pid, GrowableArray<uint32_t>& out);
  static RawStackFrame observed_frame(const StackFrame& f, FrameSpan sp);
  void observe(uint32_t idx, const void* root, size_t frames_start, size_t n, const RawStackMemo& memo,
               NamedStacks& out);
  FrameKey frame_key(const StackAddress& a, int32_t pid, MapsView& maps, const MapEntry** map_out);
  uint32_t jit_process(int32_t pid);
  bool names_alike() const;
  // A key that names every address of its object or JIT process alike.
  static bool alike_key(const FrameKey& k);
  const SymbolFreePages& symbol_free(uint64_t handle);
  bool jit_names_nothing(int32_t pid);
  FrameSpan name_address(const StackAddress& a, const MapEntry* map, int32_t pid);
  std::string fallback_name(const StackAddress& a, const MapEntry* map, int32_t pid, bool* jit);
  void push_frame(std::string_view name, bool kernel, bool jit, const MapEntry* map);
  bool any_resolved() const;
  uint64_t object_of(const MapEntry& m);
  static constexpr uint64_t kNotAnObject = MapEntry::kNoObject - 1;  // in MapEntry::object_slot
  uint64_t object_or_none(const MapEntry& m);
  std::string_view build_id_from_feature(std::string_view path);

  const FoldOptions& options_;
  const PerfFileInfo& info_;
  SymbolCache symbols_;
  std::mutex elf_path_mutex_;  // the unwinders call elf_path_for from two threads
  FoldedProfile names_;  // names only: the tree is StackTreeBuilder's
  // The frame cache, in 2^kFrameCacheShardBits tables by the hash's top
  // bits: each doubles on its own, so a doubling holds its old and new slot
  // arrays for a 16th of the cache, not all of it (busy4.data: 404 K
  // addresses, a 24 MB table whose doubling added 12 MB to the fold's peak).
  static constexpr unsigned kFrameCacheShardBits = 4;
  using FrameCache = OpenTable<FrameSlot, FrameSlotPolicy>;
  FrameCache& frame_cache(uint64_t hash) { return frame_cache_[hash >> (64 - kFrameCacheShardBits)]; }
  FrameCache frame_cache_[size_t(1) << kFrameCacheShardBits];
  std::vector<FrameId> frame_arena_;
  // A JIT frame's key holds its pid when under 2^27 (Linux's limit is 2^22);
  // another pid (a hostile file's) gets 2^27 + its index here.
  std::unordered_map<int32_t, uint32_t> wide_jit_pids_;
  // Per object handle (filled as handles are first seen): SymbolCache's answer.
  std::vector<SymbolFreePages> symbol_free_;
  // jit_names_nothing's last answer: a stack's JIT frames are one process's.
  bool jit_seen_ = false, jit_seen_nothing_ = false;
  int32_t jit_seen_pid_ = 0;
  std::unordered_map<std::string, std::string> feature_ids_;
  bool feature_ids_built_ = false;
  SymboliserStats stats_;
  // Scratch reused across stacks (no allocation on the hot path).
  std::vector<StackFrame> frames_;
  std::vector<SymbolizedFrame> resolved_;
  std::unique_ptr<PathMemo[]> memos_;  // kMemoWays-way sets by (root, generation)
  uint64_t memo_clock_ = 0;
  uint64_t observer_base_ = 0;
};

}  // namespace fg
