#include "unwind/process_table.h"

#include <sys/mman.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "perf/perf_records.h"

namespace fg {

namespace {

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

// The index of the map in the sorted list [maps, maps + n) that contains
// address, or n: the first map with start > address, then a step back.
// Every lookup of a map list (ProcessMaps, MapsView, has) is this one.
size_t index_of(const MapEntry* const* maps, size_t n, uint64_t address) {
  const MapEntry* const* it =
      std::upper_bound(maps, maps + n, address, [](uint64_t a, const MapEntry* e) { return a < e->start; });
  if (it == maps) return n;
  --it;
  return (*it)->contains(address) ? size_t(it - maps) : n;
}

}  // namespace

bool MapEntry::is_kernel() const {
  return starts_with(path, "[kernel.kallsyms]") || start >= 0xffff800000000000ull;
}

const MapEntry* MapsView::find(uint64_t address) {
  if (hint_ < size_ && data_[hint_]->contains(address)) return data_[hint_];
  const size_t i = index_of(data_, size_, address);
  if (i == size_) return nullptr;
  hint_ = i;
  return data_[i];
}

const MapEntry* ProcessMaps::find(uint64_t address) const {
  uint32_t hint = last_hit.load(std::memory_order_relaxed);
  if (hint < maps.size() && maps[hint]->contains(address)) return maps[hint];
  const size_t i = index_of(maps.begin(), maps.size(), address);
  if (i == maps.size()) return nullptr;
  last_hit.store(static_cast<uint32_t>(i), std::memory_order_relaxed);
  return maps[i];
}

bool ProcessMaps::has(const MapEntry* entry) const {
  return entry != nullptr && view().find(entry->start) == entry;
}

ProcessTable::ProcessTable() : kernel_(std::make_unique<ProcessMaps>()) {
  kernel_->pid = kKernelPid;
  kernel_->incarnation = ++clock_;
  kernel_->generation = clock_;
}

ProcessTable::~ProcessTable() = default;

std::string_view ProcessTable::intern(std::string_view s) {
  // Found before anything is built: an emplace into a set of std::string made
  // (and freed) a string for every MMAP2 and COMM, malloc and free for each
  // of a busy recording's 95 k MMAP2 records.
  if (auto it = interned_.find(s); it != interned_.end()) return *it;
  const std::string_view kept = strings_.emplace_back(s);
  interned_.insert(kept);
  return kept;
}

const MapEntry* ProcessTable::new_entry(const MapEntry& e) {
  entries_.push_back(e);
  entries_.back().id = next_entry_id_++;
  return &entries_.back();
}

ProcessMaps& ProcessTable::fresh_process(int32_t pid) {
  auto& slot = processes_[pid];
  slot = std::make_unique<ProcessMaps>();
  slot->pid = pid;
  slot->incarnation = ++clock_;
  slot->generation = clock_;
  return *slot;
}

ProcessMaps& ProcessTable::process_for_update(int32_t pid) {
  auto it = processes_.find(pid);
  if (it != processes_.end()) return *it->second;
  return fresh_process(pid);
}

std::shared_ptr<MapList::Vector> ProcessTable::new_list(const MapList::Vector* copy_of) {
  std::atomic<uint64_t>* live = &map_list_bytes_;
  auto deleter = [live](MapList::Vector* v) {
    *live -= v->capacity() * sizeof(const MapEntry*);
    delete v;
  };
  MapList::Vector* v = copy_of ? new MapList::Vector(*copy_of) : new MapList::Vector();
  v->frozen = false;
  std::shared_ptr<MapList::Vector> list(v, deleter);  // deletes v if this throws
  map_list_bytes_ += v->capacity() * sizeof(const MapEntry*);
  return list;
}

void ProcessTable::check_map_budget(uint64_t more) const {
  if (map_list_budget_ && map_list_bytes_ + more > map_list_budget_)
    throw std::length_error("process maps would take " + std::to_string((map_list_bytes_ + more + (1u << 20) - 1) >> 20) +
                            " MiB, more than the memory budget of " + std::to_string(map_list_budget_ >> 20) +
                            " MiB (--max-memory raises it): too many forked processes with changed maps "
                            "(hostile input?)");
}

MapList::Vector& ProcessTable::writable(ProcessMaps& p) {
  auto& list = p.maps.list_;
  if (!list) {
    list = new_list(nullptr);
  } else if (list.use_count() > 1 || list->frozen) {
    check_map_budget(list->size() * sizeof(const MapEntry*));
    list = new_list(list.get());
  }
  return *list;
}

void ProcessTable::insert_map(ProcessMaps& p, const MapEntry& e) {
  // The entries e replaces, [first, last) by index, found before anything
  // changes: the first map that ends after e.start (everything before it is
  // untouched) up to the first that starts at or after e.end. A head of the
  // first and a tail of the last may survive.
  size_t first_i, last_i;
  {
    const MapList& list = p.maps;
    first_i = size_t(std::lower_bound(list.begin(), list.end(), e.start,
                                      [](const MapEntry* m, uint64_t s) { return m->end <= s; }) -
                     list.begin());
    last_i = first_i;
    while (last_i < list.size() && list[last_i]->start < e.end) ++last_i;
    size_t added = 1;
    if (first_i != last_i) added += (list[first_i]->start < e.start) + (list[last_i - 1]->end > e.end);
    const size_t removed = last_i - first_i;
    if (added > removed && list.size() - removed + added > kMaxMapsPerProcess) {
      ++stats_.dropped_maps;
      return;
    }
  }
  auto& maps = writable(p);  // may copy the list: iterators from here on
  const auto first = maps.begin() + static_cast<std::ptrdiff_t>(first_i);
  const auto last = maps.begin() + static_cast<std::ptrdiff_t>(last_i);
  // Only the first overlapped map can leave a head [old.start, e.start) and
  // only the last a tail [e.end, old.end); the tail's file offset moves on.
  const MapEntry* head = nullptr;
  const MapEntry* tail = nullptr;
  for (auto it = first; it != last; ++it) {
    const MapEntry* old = *it;
    if (old->start < e.start) {
      MapEntry h = *old;
      h.end = e.start;
      head = new_entry(h);
      ++stats_.splits;
    }
    if (old->end > e.end) {
      MapEntry t = *old;
      t.start = e.end;
      t.pgoff = old->pgoff + (e.end - old->start);
      tail = new_entry(t);
      ++stats_.splits;
    }
    ++stats_.replaced;
  }
  const MapEntry* added = new_entry(e);
  const MapEntry* merged[3];
  size_t n = 0;
  if (head) merged[n++] = head;
  merged[n++] = added;
  if (tail) merged[n++] = tail;
  if (n == size_t(last - first)) {
    // As many entries as replaced: overwrite in place, no shifting.
    std::copy(merged, merged + n, first);
    p.maps.sync();
    touch(p);
    return;
  }
  const size_t capacity = maps.capacity();
  if (maps.size() - size_t(last - first) + n > capacity) check_map_budget(capacity * sizeof(const MapEntry*));
  auto pos = maps.erase(first, last);
  maps.insert(pos, merged, merged + n);
  map_list_bytes_ += (maps.capacity() - capacity) * sizeof(const MapEntry*);
  p.maps.sync();
  touch(p);
}

const MapEntry* ProcessTable::add_mmap(int32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
                                       std::string_view filename, bool executable, uint32_t prot,
                                       uint32_t flags, const uint8_t* build_id,
                                       size_t build_id_size) {
  ++stats_.mmaps;
  if (len == 0 || start + len < start) return nullptr;  // empty or wrapping: ignore
  MapEntry e;
  e.start = start;
  e.end = start + len;
  e.pgoff = pgoff;
  e.path = intern(filename);
  e.prot = prot;
  e.flags = flags;
  e.executable = executable;
  if (build_id != nullptr && build_id_size > 0) {
    e.build_id_size = static_cast<uint8_t>(std::min<size_t>(build_id_size, e.build_id.size()));
    std::copy(build_id, build_id + e.build_id_size, e.build_id.begin());
  }
  if (is_kernel_mmap(pid, start)) {
    ++stats_.kernel_maps;
    insert_map(*kernel_, e);
    const MapEntry* added = kernel_->find(start);
    if (starts_with(filename, "[kernel.kallsyms]")) kernel_text_ = added;
    return added;
  }
  ProcessMaps& p = process_for_update(pid);
  insert_map(p, e);
  return p.find(start);
}

void ProcessTable::on_comm(int32_t pid, int32_t tid, std::string_view comm, bool exec) {
  ++stats_.comms;
  std::string_view name = intern(comm);
  ProcessMaps* p;
  if (exec) {
    ++stats_.execs;
    // exec replaces the address space, but the old image's maps stay until
    // the new image's MMAPs (which follow) overlap them, as in perf
    // (thread__set_comm only flushes its unwind caches): a sample taken
    // inside execve after those MMAPs still has its user frame in the old
    // image (the libc's execve), which perf script names from the old map.
    // Dropping them wrote "[unknown]" there (a system-wide busy recording:
    // a tenth of the weight on which its fold and perf script disagreed).
    // A new incarnation resets the DWARF unwinder's view of the process.
    // Old maps over half of kMaxMapsPerProcess (a long chain of execs, or a
    // hostile file) are dropped, as before, so that the new image's always
    // fit under the cap.
    auto it = processes_.find(pid);
    if (it == processes_.end()) {
      p = &fresh_process(pid);
    } else {
      p = it->second.get();
      if (p->maps.size() > kMaxMapsPerProcess / 2) {
        p->maps.list_.reset();  // a list shared with the parent stays the parent's
        p->maps.sync();
      }
      p->incarnation = ++clock_;
      p->exited = false;
      touch(*p);
    }
  } else {
    p = &process_for_update(pid);
  }
  if (tid == pid || exec || p->comm.empty()) p->comm = name;
  Thread& t = threads_[tid];
  t.pid = pid;
  t.comm = name;
}

void ProcessTable::on_fork(int32_t pid, int32_t ppid, int32_t tid, int32_t ptid) {
  std::string_view parent_comm = comm_of(ppid, ptid);
  if (pid == ppid) {
    ++stats_.thread_forks;
    ProcessMaps& p = process_for_update(pid);
    if (p.comm.empty()) p.comm = parent_comm;
  } else {
    ++stats_.forks;
    const ProcessMaps* parent = process(ppid);
    if (processes_.count(pid) != 0) ++stats_.pid_reuses;
    // Shared, not copied: copied only if one of the two changes its maps.
    std::shared_ptr<MapList::Vector> maps;
    if (parent != nullptr) maps = parent->maps.list_;
    ProcessMaps& child = fresh_process(pid);
    child.maps.list_ = std::move(maps);
    child.maps.sync();
    child.comm = parent_comm;
  }
  Thread& t = threads_[tid];
  t.pid = pid;
  t.comm = parent_comm;
}

void ProcessTable::on_exit(int32_t pid, int32_t tid) {
  ++stats_.exits;
  // Keep the maps and names: late samples of the thread may still refer to
  // them; a later FORK with the same pid replaces the process.
  if (tid == pid) {
    auto it = processes_.find(pid);
    if (it != processes_.end()) it->second->exited = true;
  }
}

const MapEntry* ProcessTable::apply(const MmapRecord& r) {
  uint32_t prot = r.prot;
  if (!r.is_mmap2) prot = r.executable ? (PROT_READ | PROT_EXEC) : PROT_READ;
  return add_mmap(r.pid, r.start, r.len, r.pgoff, r.filename, r.executable, prot, r.flags,
                  r.build_id, r.build_id_size);
}

void ProcessTable::apply(const CommRecord& r) { on_comm(r.pid, r.tid, r.comm, r.exec); }
void ProcessTable::apply_fork(const TaskRecord& r) { on_fork(r.pid, r.ppid, r.tid, r.ptid); }
void ProcessTable::apply_exit(const TaskRecord& r) { on_exit(r.pid, r.tid); }

const MapEntry* ProcessTable::find(int32_t pid, uint64_t address) const {
  const ProcessMaps* p = process(pid);
  return p != nullptr ? p->find(address) : nullptr;
}

const MapEntry* ProcessTable::find_kernel(uint64_t address) const { return kernel_->find(address); }

const ProcessMaps* ProcessTable::process(int32_t pid) const {
  if (pid == kKernelPid) return kernel_.get();
  auto it = processes_.find(pid);
  return it != processes_.end() ? it->second.get() : nullptr;
}

std::string_view ProcessTable::comm_of(int32_t tid) const {
  auto it = threads_.find(tid);
  if (it != threads_.end()) {
    if (!it->second.comm.empty()) return it->second.comm;
    if (const ProcessMaps* p = process(it->second.pid)) return p->comm;
  }
  if (const ProcessMaps* p = process(tid)) return p->comm;
  return {};
}

std::string_view ProcessTable::comm_of(int32_t pid, int32_t tid) const {
  auto it = threads_.find(tid);
  if (it != threads_.end() && !it->second.comm.empty()) return it->second.comm;
  if (const ProcessMaps* p = process(pid)) return p->comm;
  return {};
}

int32_t ProcessTable::pid_of(int32_t tid) const {
  auto it = threads_.find(tid);
  return it != threads_.end() ? it->second.pid : -1;
}

}  // namespace fg
