// What `fgtool export -f pprof` needs from a perf.data fold, collected as the
// fold runs (a FoldObserver): each raw stack's locations, the mappings, the
// threads (roots) and the weights. The pprof is built from it once the fold
// is complete. Locations are keyed by object offset (one mapping per object
// segment, as `go tool pprof` merges profiles) or, for exact per-process
// addresses, per process mapping and address, found on a thread of the
// collector's own, batches of raw stacks behind the fold.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "fold/fold_perf_data.h"
#include "folded/huge_page_allocator.h"
#include "folded/open_table.h"
#include "folded/growable_array.h"
#include "pprof/pprof_addresses.h"

namespace fg {

class PerfDataCollector final : public FoldObserver {
 public:
  // own_thread (per-process addresses): find the locations on a second
  // thread (else on the fold's).
  explicit PerfDataCollector(bool own_thread = true, PprofAddresses addresses = PprofAddresses::object)
      : own_thread_(own_thread), by_object_(addresses == PprofAddresses::object) {}
  ~PerfDataCollector() override;
  PerfDataCollector(const PerfDataCollector&) = delete;
  PerfDataCollector& operator=(const PerfDataCollector&) = delete;

  struct MappingCopy {
    uint64_t start = 0, limit = 0, offset = 0;
    std::string path, build_id;  // build_id raw bytes
    bool kernel = false;
    bool file_backed = false;  // MapEntry::is_file_backed
  };
  struct LocationCopy {  // 16 bytes: millions of them on a system-wide recording
    uint64_t address;
    uint32_t mapping;  // index into mappings, or kNone
    // Where its frame names are in `names` (see location_names), and
    // kReturnAddress for a caller's return address (its line is that of
    // address - 1).
    uint32_t names;
  };
  static constexpr uint32_t kReturnAddress = uint32_t(1) << 31;
  struct RawStack {
    uint32_t root;  // index into roots
    // Into stack_locs: leaf first, and last the root frame (the thread's
    // comm, as in folded output), a location of its own with no address.
    uint32_t locs_start, locs_count;
  };
  struct Root {
    std::string comm;
    int32_t pid, tid;
    FrameId frame;
  };
  struct Weight {  // 24 bytes: one per raw stack
    double value;
    uint32_t samples;  // of one raw stack (see on_samples)
    uint32_t raw;
    NodeId node;
    FrameId extra;  // the wall view's "[off-cpu: S]" leaf, or kNoFrame
  };
  static constexpr uint32_t kNone = ~uint32_t{0};

  // Keyed by object offset, a memo'd caller's location is the same for
  // every stack of the slot: only the frames the fold names are looked up.
  bool follows_memo() const override { return by_object_; }
  // Keyed by object offset, a raw stack seen again (the fold's KnownStacks)
  // has the earlier one's locations: its entry is a copy of that one's.
  bool takes_known_stacks() const override { return by_object_; }
  void on_known_raw_stack(uint32_t index, uint32_t same_as) override;
  void on_raw_stack(uint32_t index, const RawStackRoot& root, const RawStackFrame* frames, size_t count,
                    const RawStackMemo& memo) override;
  // The mappings are copied while the fold's maps still live.
  void on_raw_stacks_done() override { finish(); }
  // The location thread reads the fold's maps: it is stopped (its queued
  // batches dropped) before they go.
  void on_fold_abandoned() noexcept override;
  // Also during the fold (the fold's raw-stack table forgetting stacks):
  // weights is only touched by the fold's side, never the location thread.
  void on_samples(uint32_t index, uint64_t samples, double weight, NodeId node) override {
    // 4 G samples of one stack would take a perf.data of hundreds of GB.
    if (samples > UINT32_MAX) throw std::length_error("pprof export: over 4 G samples of one stack");
    weights.push_back(Weight{weight, uint32_t(samples), index, node, FoldedProfile::kNoFrame});
  }
  void on_off_cpu(uint32_t index, uint64_t, uint64_t nanoseconds, FrameId extra, NodeId node) override {
    finish();
    off_weights.push_back(Weight{double(nanoseconds), 0, index, node, extra});
  }

  // Waits for the locations of the raw stacks handed over and frees the
  // lookup tables: call once the fold is done, before reading the fields
  // below (on_raw_stacks_done and on_off_cpu do; no raw stack may follow).
  void finish();

  // The mapping pprof tools should take for the main binary (they take the
  // first: "File:" in go tool pprof's reports), or kNone. After finish().
  uint32_t main_mapping() const;

  // A location's frame names, outermost first.
  uint32_t name_count(const LocationCopy& l) const { return names[l.names & ~kReturnAddress]; }
  const FrameId* location_names(const LocationCopy& l) const { return names.data() + (l.names & ~kReturnAddress) + 1; }
  static bool return_address(const LocationCopy& l) { return l.names & kReturnAddress; }

  // The big ones grow without copying (growable_array.h): hundreds of MB
  // on a large system-wide recording.
  std::vector<MappingCopy> mappings;
  GrowableArray<LocationCopy> locations;
  // Per fold frame-cache entry seen: its name count, then its names.
  GrowableArray<FrameId> names;
  GrowableArray<uint32_t> stack_locs;
  GrowableArray<RawStack> raws;
  // A deque: root_ids_ keys view the comm strings, which must not move
  // (a short std::string keeps its characters inside itself).
  std::deque<Root> roots;
  GrowableArray<Weight> weights, off_weights;
  uint64_t kernel_min = ~uint64_t{0}, kernel_max = 0;

 private:
  // A raw stack's frame as the fold handed it over, with where its names
  // were copied to (names is only written by the observer calls, one at a time).
  struct BatchFrame {  // 32 bytes
    uint64_t address;
    const MapEntry* map;  // MapEntry objects stay put and unchanged for the fold's lifetime
    uint32_t names_start;  // the fold's frame-cache entry
    uint32_t names;  // as LocationCopy::names
    bool kernel;
  };
  struct BatchStack {
    uint32_t index, root, frames_start, count;
    FrameId root_frame;
    uint32_t root_names;  // as LocationCopy::names
  };
  struct Batch {
    std::vector<BatchStack> stacks;
    std::vector<BatchFrame> frames;
  };
  // Raw stacks are handed to the location thread this many frames at a time.
  static constexpr size_t kHandOffFrames = 8192;
  // ... which finds their locations in windows this small (see add_window).
  static constexpr size_t kWindowStacks = 32, kWindowFrames = 512;

  uint32_t root_index(const RawStackRoot& r);
  uint32_t root_index_slow(const RawStackRoot& r);
  void hand_off();
  void location_thread();
  void stop_location_thread(bool drop_queued = false);
  void add_batch(const Batch& b);
  void add_window(const Batch& b, size_t first_stack, size_t end_stack);
  uint32_t mapping_index(const BatchFrame& f);
  uint32_t mapping_of(const MapEntry& map);
  uint32_t new_mapping(const MapEntry& e);
  uint32_t new_location(const BatchFrame& f, uint32_t mapping);
  uint32_t resolve(const BatchFrame& f, size_t window_frame);
  uint32_t root_location(FrameId root_frame, uint32_t root_names);
  // PprofAddresses::object: a raw stack's locations, found on the calling thread.
  void add_by_object(uint32_t index, uint32_t root, const RawStackFrame* frames, size_t count,
                     const RawStackMemo& memo, FrameId root_frame, uint32_t root_names);
  uint32_t object_location(const RawStackFrame& f);
  uint32_t copy_names(const RawStackFrame& f);

  // The fold's thread fills filling_; hand_off() queues it for the location
  // thread (waiting while kQueuedBatches are: the fold is faster at times,
  // the location thread at others) and takes an emptied batch from spare_.
  static constexpr size_t kQueuedBatches = 4;
  const bool own_thread_;
  const bool by_object_;
  Batch filling_, working_;
  std::deque<Batch> queued_;
  std::vector<Batch> spare_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::exception_ptr thread_error_;
  // Per fold frame-cache entry (a frame's names_start): where its names
  // are in `names`, or kNone. Copied on first sight, as the fold's names
  // are valid during on_raw_stack only; 4 bytes an entry (it stays cached).
  GrowableArray<uint32_t> names_at_;
  std::vector<uint32_t> root_names_at_;  // the same per root frame
  std::vector<uint32_t> root_location_of_;  // per root frame: its location, or kNone (location thread)
  bool finished_ = false;

  // The locations not answered by seen_, in fg::OpenTable. A mapped frame's
  // location is its (mapping, frame-cache entry): the entry is one object
  // offset, so within one mapping it is one address (seen_ relies on the
  // same). 12-byte slots: half the memory, and the misses, of a slot with
  // the address. Unmapped frames (frame-pointer garbage, JIT code without a
  // mapping) keep the address in their key.
  struct MappedSlot {
    uint32_t mapping, names_start, id;
  };
  struct MappedSlotPolicy {
    static bool empty(const MappedSlot& s) { return s.id == kNone; }
    static MappedSlot empty_slot() { return MappedSlot{0, 0, kNone}; }
    static uint64_t rehash(const MappedSlot& s) { return mapped_hash(s.mapping, s.names_start); }
  };
  // An address outside any mapping (no mapping id to keep): 16 bytes.
  struct UnmappedSlot {
    uint64_t address;
    uint32_t names_start, id;
  };
  struct UnmappedSlotPolicy {
    static bool empty(const UnmappedSlot& s) { return s.id == kNone; }
    static UnmappedSlot empty_slot() { return UnmappedSlot{0, 0, kNone}; }
    static uint64_t rehash(const UnmappedSlot& s) { return unmapped_hash(s.address, s.names_start); }
  };
  static uint64_t mapped_hash(uint32_t mapping, uint32_t names_start);
  static uint64_t unmapped_hash(uint64_t address, uint32_t names_start);
  uint32_t mapped_location(const BatchFrame& f, uint32_t mapping, uint64_t hash);
  uint32_t unmapped_location(const BatchFrame& f, uint64_t hash);

  // How a frame of the stack being added is answered (see on_raw_stack).
  enum class Answer : uint8_t { known, first, hashed };
  struct PendingLocation {
    const MapEntry* owner;  // the frame's map, kKernelOwner, or nullptr (unmapped)
    uint32_t mapping;       // mapping index; the location itself when known
    Answer answer;
    uint64_t hash;          // when hashed
  };
  // Per frame-cache entry: the first (mapping, location) seen, and the one
  // last answered by a table (a system-wide recording has one object mapped
  // by many processes; the same process's frames come in runs).
  struct Seen {
    const MapEntry* owner;
    uint32_t location;
    uint32_t recent_location;
    const MapEntry* recent_owner;
  };
  inline static const MapEntry* const kKernelOwner = reinterpret_cast<const MapEntry*>(uintptr_t(1));

  struct RootKey {
    std::string_view comm;
    int32_t pid, tid;
    bool operator==(const RootKey& o) const { return comm == o.comm && pid == o.pid && tid == o.tid; }
  };
  struct RootKeyHash {
    size_t operator()(const RootKey& k) const;
  };
  std::unordered_map<RootKey, uint32_t, RootKeyHash> root_ids_;
  std::unordered_map<const MapEntry*, uint32_t> map_ids_;
  // Huge pages: lookups at random places in tens of MB miss the TLB otherwise.
  OpenTable<MappedSlot, MappedSlotPolicy, HugePageAllocator<MappedSlot>> mapped_table_{4096};
  OpenTable<UnmappedSlot, UnmappedSlotPolicy, HugePageAllocator<UnmappedSlot>> unmapped_table_{1024};
  std::vector<PendingLocation> pending_;
  GrowableArray<Seen> seen_;
  std::vector<uint32_t> map_by_entry_id_;
  // Recent roots by their comm's address (the fold's root objects stay
  // put), pid and tid: a system-wide fold's raw stacks switch threads often,
  // and root_ids_ hashes the comm's text.
  struct RecentRoot {
    const char* comm = nullptr;
    int32_t pid = 0, tid = 0;
    uint32_t root = 0;
  };
  RecentRoot recent_roots_[256];
  uint32_t kernel_mapping_ = kNone;
  // PprofAddresses::object: per fold frame-cache entry (names_start), its
  // location or kNone.
  GrowableArray<uint32_t> location_of_entry_;
  // Per path-memo slot: the locations of its frames, outermost first.
  std::vector<std::vector<uint32_t>> memo_locations_;
  // The mappings by object segment: build-id (or a 0 byte and the path),
  // file offset, size rounded up to 4 KiB.
  std::unordered_map<std::string, uint32_t> object_mappings_;
};

}  // namespace fg
