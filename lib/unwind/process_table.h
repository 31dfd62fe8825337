// The address spaces and thread names of the recorded processes, rebuilt from
// MMAP/MMAP2, COMM, FORK and EXIT records in time order, so that a sample's
// addresses can be mapped to the file and offset they came from.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace fg {

// lib/perf/perf_records.h
struct MmapRecord;
struct CommRecord;
struct TaskRecord;

// The one rule for "this mapping's name is a file we may open and read as an
// ELF image" (the unwinder, the symbol cache and the fold all ask it). An
// absolute path, except:
//  - anonymous memory as perf names it (util/map.c is_anon_memory and
//    is_no_dso_memory): "//anon", "/dev/zero...", "/anon_hugepage...",
//    "/SYSV..." (SysV shared memory); "[heap]", "[stack...]" and every other
//    "[...]" name ("[vdso]", "[vsyscall]", "[anon:...]") fail the '/' test;
//  - "/memfd:..." (memfd_create: no file by that name exists) and any other
//    "/dev/..." (device memory such as GPU driver maps: opening it to look
//    for an ELF header can block or have side effects);
//  - names ending in " (deleted)": the file is gone (or the path now names a
//    different one); the symbol cache looks such a file up by build-id with
//    the suffix removed.
// "[vdso]" is not a file but has an ELF image: callers that can use it (via
// perf's build-id cache) test for it by name.
inline bool is_file_backed_path(std::string_view path) {
  auto starts = [path](std::string_view p) { return path.substr(0, p.size()) == p; };
  if (path.empty() || path[0] != '/') return false;
  if (starts("//anon") || starts("/dev/") || starts("/anon_hugepage") || starts("/SYSV") || starts("/memfd:"))
    return false;
  constexpr std::string_view deleted = " (deleted)";
  return !(path.size() >= deleted.size() && path.substr(path.size() - deleted.size()) == deleted);
}

// The file name of a mapping's path (after its last '/'), as perf shows a
// dso: "[libc.so.6]".
inline std::string_view path_base_name(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// One mapping [start, end) of a process. Entries are immutable once created
// (except the symbolisation slot) and live as long as the ProcessTable, so a
// pointer stays valid and identifies the mapping: a fragment left over after a
// split is a new entry, and a forked child shares its parent's entries.
struct MapEntry {
  static constexpr uint64_t kNoObject = ~uint64_t{0};
  static constexpr uint32_t kMapHugetlb = 0x40000;  // MAP_HUGETLB in MmapRecord::flags

  uint64_t start = 0;
  uint64_t end = 0;       // exclusive
  uint64_t pgoff = 0;     // file offset of `start`
  std::string_view path;  // interned in the ProcessTable; "[kernel.kallsyms]_text", "//anon", ...
  std::array<uint8_t, 20> build_id{};
  uint8_t build_id_size = 0;
  uint32_t prot = 0;      // PROT_* (MMAP2); MMAP (type 1) maps count as PROT_EXEC
  uint32_t flags = 0;     // MAP_* (MMAP2)
  bool executable = true;
  uint64_t id = 0;        // unique per entry in this table (creation order)
  // Free for the consumer (the fold stage caches a SymbolCache object handle
  // here). Copied into fragments when the entry is split. Atomic (relaxed):
  // a symbolising thread fills it while the table may copy the entry.
  struct ObjectSlot {
    ObjectSlot() = default;
    ObjectSlot(const ObjectSlot& o) : value(o.get()) {}
    ObjectSlot& operator=(const ObjectSlot& o) {
      set(o.get());
      return *this;
    }
    uint64_t get() const { return value.load(std::memory_order_relaxed); }
    void set(uint64_t v) const { value.store(v, std::memory_order_relaxed); }

   private:
    mutable std::atomic<uint64_t> value{kNoObject};
  };
  ObjectSlot object_slot;

  uint64_t file_offset(uint64_t address) const { return address - start + pgoff; }
  bool contains(uint64_t address) const { return address >= start && address < end; }
  // True when the mapping is a file on disk that may hold an ELF image
  // (is_file_backed_path, below), and not hugetlbfs memory, which perf counts
  // as anonymous whatever its name (util/map.c: flags & MAP_HUGETLB).
  bool is_file_backed() const { return !(flags & kMapHugetlb) && is_file_backed_path(path); }
  bool is_kernel() const;  // "[kernel.kallsyms]..." or a module map of pid -1
};

// A process's maps, sorted by start and non-overlapping. A forked child
// shares its parent's list until one of them changes it (copy on write), so
// FORK costs O(1) and memory; only the ProcessTable changes it. Reads see a
// plain array (the hot path of address lookups is unchanged).
class MapList {
 public:
  const MapEntry* const* begin() const { return data_; }
  const MapEntry* const* end() const { return data_ + size_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const MapEntry* operator[](size_t i) const { return data_[i]; }

 private:
  friend class ProcessTable;
  friend class MapsSnapshot;
  // `frozen` once a MapsSnapshot was taken of the list: from then on the
  // table copies it before any change, even when no one else seems to hold
  // it (use_count() is a relaxed read, so a reader's last release would not
  // be ordered before an in-place change). Only the table's thread touches it.
  struct Vector : std::vector<const MapEntry*> {
    mutable bool frozen = false;
  };
  void sync() {
    data_ = list_ ? list_->data() : nullptr;
    size_ = list_ ? list_->size() : 0;
  }
  std::shared_ptr<Vector> list_;
  const MapEntry* const* data_ = nullptr;
  size_t size_ = 0;
};

// A non-owning view of one map list (a ProcessMaps' or a MapsSnapshot's),
// with a hint for the next lookup (a stack's addresses mostly fall in the
// same few maps). Empty when there is no process.
class MapsView {
 public:
  MapsView() = default;
  MapsView(const MapEntry* const* data, size_t size) : data_(data), size_(size) {}
  // The mapping containing address, or nullptr.
  const MapEntry* find(uint64_t address);

 private:
  const MapEntry* const* data_ = nullptr;
  size_t size_ = 0;
  size_t hint_ = 0;
};

// A process's map list as it was when taken, for another thread: the table
// copies a list before changing it while anything else holds it (MapList's
// copy on write), so a snapshot never changes under its reader, and the
// entries it points to live as long as the table.
class MapsSnapshot {
 public:
  MapsSnapshot() = default;
  explicit MapsSnapshot(const MapList& maps) : list_(maps.list_) {
    if (list_) list_->frozen = true;
  }
  MapsView view() const { return list_ ? MapsView(list_->data(), list_->size()) : MapsView(); }
  // Whether this is a snapshot of `maps` as the list is now (a frozen list
  // never changes in place: a view of `maps` then sees the same entries).
  bool holds(const MapList& maps) const { return list_ && list_ == maps.list_; }

 private:
  std::shared_ptr<const MapList::Vector> list_;
};

// One process incarnation: a pid between FORK/first sight and pid reuse.
struct ProcessMaps {
  int32_t pid = 0;
  // Bumped (to a table-wide unique value) whenever `maps` changes, so caches
  // built from the maps (a Dwfl) can tell they may be stale.
  uint64_t generation = 0;
  // Unique per incarnation: changes on exec, pid reuse and a new process.
  uint64_t incarnation = 0;
  std::string_view comm;  // the main thread's latest comm (interned)
  bool exited = false;
  MapList maps;  // sorted by start, non-overlapping
  // Index into maps of the last hit of find(); a hint only, so relaxed.
  mutable std::atomic<uint32_t> last_hit{0};

  // The mapping containing address, or nullptr. O(1) on a repeat hit, else a
  // binary search. Safe to call from several threads while nothing mutates.
  const MapEntry* find(uint64_t address) const;
  // Whether entry is still one of this process's maps.
  bool has(const MapEntry* entry) const;
  MapsView view() const { return MapsView(maps.begin(), maps.size()); }
};

struct ProcessTableStats {
  uint64_t mmaps = 0, comms = 0, execs = 0, forks = 0, thread_forks = 0, exits = 0;
  uint64_t pid_reuses = 0, splits = 0, replaced = 0, kernel_maps = 0;
  uint64_t dropped_maps = 0;  // mappings that would have taken a process past kMaxMapsPerProcess
};

class ProcessTable {
 public:
  static constexpr int32_t kKernelPid = -1;
  // Whether an MMAP of pid at start goes to the kernel's maps (add_mmap).
  static bool is_kernel_mmap(int32_t pid, uint64_t start) { return pid == kKernelPid || start >= 0xffff800000000000ull; }
  // Mappings one process may have (2 x Linux's default vm.max_map_count).
  // A map list is a sorted array: inserting costs O(its size), so without a
  // cap a stream of mappings inserted in descending order is quadratic.
  // Past it, a mapping that would add entries is dropped (counted in
  // stats().dropped_maps); one that replaces as many as it adds is not.
  static constexpr size_t kMaxMapsPerProcess = size_t(1) << 17;

  ProcessTable();
  // Bytes the map lists of all processes may take (copies made when a
  // forked process changes its maps); past it the change that needs more
  // throws std::length_error. 0 = no limit. Set from the read budget.
  void set_map_list_budget(uint64_t bytes) { map_list_budget_ = bytes; }
  uint64_t map_list_bytes() const { return map_list_bytes_.load(std::memory_order_relaxed); }
  ~ProcessTable();
  ProcessTable(const ProcessTable&) = delete;
  ProcessTable& operator=(const ProcessTable&) = delete;

  // Adds a mapping to pid's address space; whatever it overlaps is cut away
  // (fragments keep their file offsets right). pid -1 is the kernel: the
  // "[kernel.kallsyms]_text" map and module maps go to the kernel table.
  const MapEntry* add_mmap(int32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
                           std::string_view filename, bool executable, uint32_t prot = 0,
                           uint32_t flags = 0, const uint8_t* build_id = nullptr,
                           size_t build_id_size = 0);
  // A thread's new name; exec == COMM_EXEC starts a new incarnation whose
  // maps the new image's MMAPs overlay (the old ones stay until overlapped).
  void on_comm(int32_t pid, int32_t tid, std::string_view comm, bool exec);
  // pid == ppid: a new thread sharing the process; otherwise a new process
  // with a copy of the parent's maps and comm (replacing a reused pid).
  void on_fork(int32_t pid, int32_t ppid, int32_t tid, int32_t ptid);
  void on_exit(int32_t pid, int32_t tid);

  // Record-struct forms (lib/perf), for the fold stage's RecordHandler.
  const MapEntry* apply(const MmapRecord& r);
  void apply(const CommRecord& r);
  void apply_fork(const TaskRecord& r);
  void apply_exit(const TaskRecord& r);

  // The user mapping of pid containing address, or nullptr.
  const MapEntry* find(int32_t pid, uint64_t address) const;
  // A kernel or kernel-module mapping containing address, or nullptr.
  const MapEntry* find_kernel(uint64_t address) const;
  // The "[kernel.kallsyms]_text" map, or nullptr.
  const MapEntry* kernel_map() const { return kernel_text_; }
  // The current incarnation of pid, or nullptr.
  const ProcessMaps* process(int32_t pid) const;
  const ProcessMaps& kernel() const { return *kernel_; }

  // The thread's latest comm, else its process's, else empty.
  std::string_view comm_of(int32_t tid) const;
  std::string_view comm_of(int32_t pid, int32_t tid) const;
  // The pid a thread belongs to, or -1 if the thread is unknown.
  int32_t pid_of(int32_t tid) const;

  const ProcessTableStats& stats() const { return stats_; }
  size_t process_count() const { return processes_.size(); }

 private:
  struct Thread {
    int32_t pid = -1;
    std::string_view comm;
  };
  ProcessMaps& process_for_update(int32_t pid);
  ProcessMaps& fresh_process(int32_t pid);
  void insert_map(ProcessMaps& p, const MapEntry& e);
  const MapEntry* new_entry(const MapEntry& e);
  std::string_view intern(std::string_view s);
  void touch(ProcessMaps& p) { p.generation = ++clock_; }
  // p's own list, copied first if it is shared with another process.
  MapList::Vector& writable(ProcessMaps& p);
  std::shared_ptr<MapList::Vector> new_list(const MapList::Vector* copy_of);
  void check_map_budget(uint64_t more) const;

  // Live bytes of all map lists (capacity); declared before the processes
  // so that it outlives the lists whose deleters update it. Atomic: the
  // last holder of a MapsSnapshot may free a list on another thread.
  std::atomic<uint64_t> map_list_bytes_{0};
  uint64_t map_list_budget_ = 0;

  // Interned paths and comms: the set holds views of the deque's strings,
  // which never move, so a look-up of a name seen before allocates nothing.
  std::unordered_set<std::string_view> interned_;
  std::deque<std::string> strings_;
  std::deque<MapEntry> entries_;
  std::unordered_map<int32_t, std::unique_ptr<ProcessMaps>> processes_;
  std::unordered_map<int32_t, Thread> threads_;
  std::unique_ptr<ProcessMaps> kernel_;
  const MapEntry* kernel_text_ = nullptr;
  uint64_t clock_ = 0;
  uint64_t next_entry_id_ = 1;
  ProcessTableStats stats_;
};

}  // namespace fg
