#include "pprof/perf_data_collector.h"

#include <algorithm>
#include <stdexcept>

#include "folded/hash.h"
#include "folded/prefetch.h"
#include "unwind/process_table.h"

namespace fg {

PerfDataCollector::~PerfDataCollector() { stop_location_thread(); }

// Lets the location thread finish the batches queued (or only the one it
// is on: drop_queued), then joins it.
void PerfDataCollector::stop_location_thread(bool drop_queued) {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    if (drop_queued) queued_.clear();
  }
  cv_.notify_all();
  thread_.join();
}

void PerfDataCollector::on_fold_abandoned() noexcept {
  finished_ = true;  // no more raw stacks; finish() has nothing to add
  filling_ = Batch();
  try {
    stop_location_thread(true);
  } catch (...) {  // std::system_error from join: nothing else may run it now
  }
}

void PerfDataCollector::on_raw_stack(uint32_t index, const RawStackRoot& root, const RawStackFrame* frames,
                                     size_t count, const RawStackMemo& memo) {
  if (finished_) throw std::logic_error("pprof export: a raw stack after the fold's weights");
  // The names of each frame-cache entry are copied the first time it is
  // seen (the fold's copy may move once the call returns).
  if (root_names_at_.size() <= root.frame) root_names_at_.resize(size_t(root.frame) + 1 + root_names_at_.size() / 2, kNone);
  uint32_t& root_names = root_names_at_[root.frame];
  if (root_names == kNone) {
    if (names.size() + 2 >= kReturnAddress) throw std::length_error("pprof export: too many frame names");
    root_names = uint32_t(names.size());
    names.push_back(1);
    names.push_back(root.frame);
  }
  if (by_object_) return add_by_object(index, root_index(root), frames, count, memo, root.frame, root_names);
  // Per process: the rest waits for the location thread.
  filling_.stacks.push_back(BatchStack{index, root_index(root), uint32_t(filling_.frames.size()), uint32_t(count),
                                       root.frame, root_names});
  for (size_t i = 0; i < count; ++i) {
    const RawStackFrame& f = frames[i];
    filling_.frames.push_back(BatchFrame{f.address, f.kernel ? nullptr : f.map, f.names_start,
                                         copy_names(f) | (f.return_address ? kReturnAddress : 0), f.kernel});
  }
  if (filling_.frames.size() >= kHandOffFrames) hand_off();
}

// Where the names of f's frame-cache entry are in `names` (copied on first sight).
uint32_t PerfDataCollector::copy_names(const RawStackFrame& f) {
  if (names_at_.size() <= f.names_start) names_at_.resize(size_t(f.names_start) + 1 + names_at_.size() / 2, kNone);
  uint32_t& at = names_at_[f.names_start];
  if (at == kNone) {
    if (names.size() + f.name_count + 1 >= kReturnAddress)
      throw std::length_error("pprof export: too many frame names");
    at = uint32_t(names.size());
    names.push_back(f.name_count);
    names.append(f.names, f.name_count);
  }
  return at;
}

// The fold's frame-cache entry is one object offset (or one kernel or JIT
// address): with locations keyed by object offset it is the location, found
// with one access to a small array, on the observer calls' thread. The
// callers the stack shares with its memo slot come from the slot.
void PerfDataCollector::add_by_object(uint32_t index, uint32_t root, const RawStackFrame* frames, size_t count,
                                      const RawStackMemo& memo, FrameId root_frame, uint32_t root_names) {
  if (raws.size() <= index) raws.resize(size_t(index) + 1, RawStack{kNone, 0, 0});
  if (stack_locs.size() + count + memo.reused + 1 > UINT32_MAX)
    throw std::length_error("pprof export: over 4 G stack frames");
  if (memo_locations_.size() <= memo.slot) memo_locations_.resize(size_t(memo.slot) + 1);
  std::vector<uint32_t>& slot = memo_locations_[memo.slot];
  if (memo.reused > slot.size() || memo.kept < memo.reused || memo.kept - memo.reused > count)
    throw std::logic_error("pprof export: a path memo out of step with the fold's");
  RawStack& r = raws[index];
  r.root = root;
  r.locs_start = uint32_t(stack_locs.size());
  r.locs_count = uint32_t(count + memo.reused + 1);
  for (size_t i = 0; i < count; ++i) stack_locs.push_back(object_location(frames[i]));
  for (size_t j = memo.reused; j-- > 0;) stack_locs.push_back(slot[j]);
  stack_locs.push_back(root_location(root_frame, root_names));
  slot.resize(memo.kept);
  const uint32_t* leaf_first = &stack_locs[r.locs_start];
  for (size_t j = memo.reused; j < memo.kept; ++j) slot[j] = leaf_first[count - 1 - (j - memo.reused)];
}

void PerfDataCollector::on_known_raw_stack(uint32_t index, uint32_t same_as) {
  if (finished_) throw std::logic_error("pprof export: a raw stack after the fold's weights");
  if (!by_object_ || same_as >= raws.size() || raws[same_as].root == kNone || same_as >= index)
    throw std::logic_error("pprof export: a known raw stack that was never handed over");
  if (raws.size() <= index) raws.resize(size_t(index) + 1, RawStack{kNone, 0, 0});
  raws[index] = raws[same_as];  // the same root and locations (stack_locs shared)
}

uint32_t PerfDataCollector::object_location(const RawStackFrame& f) {
  const uint32_t names_flag = f.return_address ? kReturnAddress : 0;
  if (!f.kernel && !f.map) {
    // Outside any mapping: all such addresses share one frame-cache entry
    // ("[unknown]"), so the address is in the key.
    BatchFrame b{f.address, nullptr, f.names_start, copy_names(f) | names_flag, false};
    unmapped_table_.reserve_for(unmapped_table_.size() + 1, 3, 4);
    return unmapped_location(b, unmapped_hash(f.address, f.names_start));
  }
  if (location_of_entry_.size() <= f.names_start)
    location_of_entry_.resize(size_t(f.names_start) + 1 + location_of_entry_.size() / 2, kNone);
  uint32_t& loc = location_of_entry_[f.names_start];
  if (loc != kNone) return loc;
  const uint32_t mapping = mapping_index(BatchFrame{f.address, f.kernel ? nullptr : f.map, f.names_start, 0, f.kernel});
  uint64_t address = f.address;
  if (!f.kernel && f.map->is_file_backed())
    address = f.address - f.map->start + mappings[mapping].start;  // the same file offset in the object's mapping
  loc = uint32_t(locations.size());
  locations.push_back(LocationCopy{address, mapping, copy_names(f) | names_flag});
  return loc;
}

void PerfDataCollector::hand_off() {
  if (!own_thread_) {
    add_batch(filling_);
  } else {
    if (!thread_.joinable()) thread_ = std::thread(&PerfDataCollector::location_thread, this);
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [this] { return queued_.size() < kQueuedBatches || thread_error_; });
    if (thread_error_) std::rethrow_exception(thread_error_);
    queued_.push_back(std::move(filling_));
    filling_ = Batch();
    if (!spare_.empty()) {
      filling_ = std::move(spare_.back());
      spare_.pop_back();
    }
    lock.unlock();
    cv_.notify_all();
  }
  filling_.stacks.clear();
  filling_.frames.clear();
}

void PerfDataCollector::location_thread() {
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (!working_.stacks.empty()) {  // emptied: for the fold to fill again
        working_.stacks.clear();
        working_.frames.clear();
        spare_.push_back(std::move(working_));
        working_ = Batch();
      }
      cv_.wait(lock, [this] { return !queued_.empty() || stopping_; });
      if (queued_.empty()) return;  // stopping, nothing left
      working_ = std::move(queued_.front());
      queued_.pop_front();
    }
    cv_.notify_all();
    try {
      add_batch(working_);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      thread_error_ = std::current_exception();
      cv_.notify_all();
      return;
    }
  }
}

void PerfDataCollector::finish() {
  if (finished_) return;
  finished_ = true;
  if (!filling_.stacks.empty()) hand_off();
  stop_location_thread();
  if (thread_error_) std::rethrow_exception(thread_error_);
  // Only the raw stacks' locations are needed from here on: the tables
  // go before the weights and the export allocate theirs.
  mapped_table_ = decltype(mapped_table_)();
  unmapped_table_ = decltype(unmapped_table_)();
  seen_.release();
  names_at_.release();
  location_of_entry_.release();
  decltype(memo_locations_)().swap(memo_locations_);
  decltype(object_mappings_)().swap(object_mappings_);
  decltype(pending_)().swap(pending_);
  filling_ = Batch();
  working_ = Batch();
  spare_.clear();
}

void PerfDataCollector::add_batch(const Batch& b) {
  for (size_t first = 0; first < b.stacks.size();) {
    size_t end = first, frames = 0;
    while (end < b.stacks.size() && end - first < kWindowStacks && frames < kWindowFrames) frames += b.stacks[end++].count;
    add_window(b, first, end);
    first = end;
  }
}

// The locations of a window of raw stacks. A frame's names_start names the
// fold's frame-cache entry (one object offset, kernel address or JIT
// address): with the same mapping it is the same location. A vector indexed
// by it (`seen_`) holds the first location per entry (and the one last found
// in a table): it answers most frames with one access, and says that a frame
// of an entry never seen is a new location, without a probe of a hash table.
// The rest (another process's mapping of the object, unmapped addresses) go
// to the hash tables. Both miss the CPU caches on a large recording: a
// window of stacks is handled in passes (prefetch seen_, classify and
// prefetch the table slots, resolve) so that the misses overlap. The
// locations and mappings are numbered as if stack by stack, frame by frame:
// a frame's answer never depends on the stacks after it. Room for every
// frame is made first, so that no doubling moves slots between a probe and
// its fill.
void PerfDataCollector::add_window(const Batch& b, size_t first_stack, size_t end_stack) {
  const BatchFrame* frames = b.frames.data() + b.stacks[first_stack].frames_start;
  const BatchStack& last = b.stacks[end_stack - 1];
  const size_t count = last.frames_start + last.count - b.stacks[first_stack].frames_start;
  mapped_table_.reserve_for(mapped_table_.size() + count + 1, 3, 4);
  unmapped_table_.reserve_for(unmapped_table_.size() + count + 1, 3, 4);
  pending_.resize(count);
  for (size_t i = 0; i < count; ++i) {
    const BatchFrame& f = frames[i];
    if (!f.kernel && !f.map) continue;
    if (seen_.size() <= f.names_start)
      seen_.resize(size_t(f.names_start) + 1 + seen_.size() / 2, Seen{nullptr, kNone, kNone, nullptr});
    prefetch_for_read(&seen_[f.names_start]);
  }
  for (size_t i = 0; i < count; ++i) {
    const BatchFrame& f = frames[i];
    PendingLocation& p = pending_[i];
    p.owner = f.kernel ? kKernelOwner : f.map;
    if (p.owner) {
      const Seen& s = seen_[f.names_start];
      if (s.owner == p.owner || s.recent_owner == p.owner) {
        p.answer = Answer::known;
        p.mapping = s.owner == p.owner ? s.location : s.recent_location;  // the answer
        continue;
      }
      // Numbered here, so that mappings are numbered in frame order.
      p.mapping = mapping_index(f);
      // An entry still unseen may be seen by an earlier frame of the window
      // by the time this one is resolved: its slot is fetched too.
      p.answer = s.owner ? Answer::hashed : Answer::first;
      p.hash = mapped_hash(p.mapping, f.names_start);
      mapped_table_.prefetch(p.hash);
      continue;
    }
    // Outside any mapping (mapping kNone): keyed by its address.
    p.answer = Answer::hashed;
    p.hash = unmapped_hash(f.address, f.names_start);
    unmapped_table_.prefetch(p.hash);
  }
  size_t i = 0;
  for (size_t k = first_stack; k < end_stack; ++k) {
    const BatchStack& st = b.stacks[k];
    if (raws.size() <= st.index) raws.resize(size_t(st.index) + 1, RawStack{kNone, 0, 0});
    RawStack& r = raws[st.index];
    r.root = st.root;
    r.locs_start = uint32_t(stack_locs.size());
    r.locs_count = st.count + 1;
    for (size_t end = i + st.count; i < end; ++i) stack_locs.push_back(resolve(frames[i], i));
    stack_locs.push_back(root_location(st.root_frame, st.root_names));
  }
}

// The root frame's location: one per frame name (comm), numbered where
// it is first used, after the frames of its first stack.
uint32_t PerfDataCollector::root_location(FrameId root_frame, uint32_t root_names) {
  if (root_location_of_.size() <= root_frame)
    root_location_of_.resize(size_t(root_frame) + 1 + root_location_of_.size() / 2, kNone);
  uint32_t& loc = root_location_of_[root_frame];
  if (loc == kNone) {
    loc = uint32_t(locations.size());
    locations.push_back(LocationCopy{0, kNone, root_names});
  }
  return loc;
}

// The location of the window's frame i, classified by add_window.
uint32_t PerfDataCollector::resolve(const BatchFrame& f, size_t i) {
  PendingLocation& p = pending_[i];
  if (p.answer == Answer::known) return p.mapping;
  if (!p.owner) return unmapped_location(f, p.hash);
  // Seen since, earlier in this window?
  Seen& s = seen_[f.names_start];
  if (s.owner == p.owner) return s.location;
  if (s.recent_owner == p.owner) return s.recent_location;
  if (!s.owner) {
    uint32_t loc = new_location(f, p.mapping);
    s.owner = p.owner;
    s.location = loc;
    return loc;
  }
  const uint32_t loc = mapped_location(f, p.mapping, p.hash);
  s.recent_owner = p.owner;
  s.recent_location = loc;
  return loc;
}

uint64_t PerfDataCollector::mapped_hash(uint32_t mapping, uint32_t names_start) {
  return detail::mix64((uint64_t(mapping) << 32 | names_start) * 0x9e3779b97f4a7c15ull);
}

uint64_t PerfDataCollector::unmapped_hash(uint64_t address, uint32_t names_start) {
  return detail::hash_pair(address, names_start);
}

uint32_t PerfDataCollector::mapped_location(const BatchFrame& f, uint32_t mapping, uint64_t hash) {
  size_t i = mapped_table_.probe(
      hash, [&](const MappedSlot& s) { return s.mapping == mapping && s.names_start == f.names_start; });
  const MappedSlot& slot = mapped_table_.at(i);
  if (!MappedSlotPolicy::empty(slot)) return slot.id;
  uint32_t id = new_location(f, mapping);
  mapped_table_.fill(i, MappedSlot{mapping, f.names_start, id});
  return id;
}

uint32_t PerfDataCollector::unmapped_location(const BatchFrame& f, uint64_t hash) {
  size_t i = unmapped_table_.probe(
      hash, [&](const UnmappedSlot& s) { return s.address == f.address && s.names_start == f.names_start; });
  const UnmappedSlot& slot = unmapped_table_.at(i);
  if (!UnmappedSlotPolicy::empty(slot)) return slot.id;
  uint32_t id = new_location(f, kNone);
  unmapped_table_.fill(i, UnmappedSlot{f.address, f.names_start, id});
  return id;
}

uint32_t PerfDataCollector::new_location(const BatchFrame& f, uint32_t mapping) {
  uint32_t id = uint32_t(locations.size());
  locations.push_back(LocationCopy{f.address, mapping, f.names});
  return id;
}

uint32_t PerfDataCollector::root_index(const RawStackRoot& r) {
  const uint64_t h = detail::hash_pair(uint64_t(uintptr_t(r.comm.data())), (uint64_t(uint32_t(r.pid)) << 32) | uint32_t(r.tid));
  RecentRoot& e = recent_roots_[(h >> 32) & 255];
  if (e.comm && e.comm == r.comm.data() && e.pid == r.pid && e.tid == r.tid) return e.root;
  e = RecentRoot{r.comm.data(), r.pid, r.tid, root_index_slow(r)};
  return e.root;
}

uint32_t PerfDataCollector::root_index_slow(const RawStackRoot& r) {
  RootKey key{r.comm, r.pid, r.tid};
  auto it = root_ids_.find(key);
  if (it != root_ids_.end()) return it->second;
  uint32_t id = uint32_t(roots.size());
  roots.push_back(Root{std::string(r.comm), r.pid, r.tid, r.frame});
  root_ids_.emplace(RootKey{roots.back().comm, r.pid, r.tid}, id);
  return id;
}

size_t PerfDataCollector::RootKeyHash::operator()(const RootKey& k) const {
  return std::hash<std::string_view>()(k.comm) ^ (size_t(uint32_t(k.pid)) << 16) ^
         size_t(uint32_t(k.tid)) * 0x9e3779b97f4a7c15ull;
}

uint32_t PerfDataCollector::mapping_index(const BatchFrame& f) {
  if (f.kernel) {
    kernel_min = std::min(kernel_min, f.address);
    kernel_max = std::max(kernel_max, f.address);
    if (kernel_mapping_ == kNone) {
      kernel_mapping_ = uint32_t(mappings.size());
      MappingCopy m;
      m.path = "[kernel.kallsyms]";
      m.kernel = true;
      mappings.push_back(m);
    }
    return kernel_mapping_;
  }
  if (!f.map) return kNone;
  // MapEntry ids are small and dense (creation order): a vector, no hashing.
  if (f.map->id < (uint64_t(1) << 26)) {
    if (map_by_entry_id_.size() <= f.map->id)
      map_by_entry_id_.resize(size_t(f.map->id) + 1 + map_by_entry_id_.size() / 2, kNone);
    uint32_t& slot = map_by_entry_id_[size_t(f.map->id)];
    if (slot == kNone) slot = mapping_of(*f.map);
    return slot;
  }
  auto it = map_ids_.find(f.map);
  if (it != map_ids_.end()) return it->second;
  uint32_t id = mapping_of(*f.map);
  map_ids_.emplace(f.map, id);
  return id;
}

// A map's mapping, the first time mapping_index sees it: by object offset
// (PprofAddresses::object), a file-backed map shares the mapping of the
// first map seen with its build-id (or path), file offset and size (rounded
// up to 4 KiB, as go tool pprof's merge keys them); any other map has its own.
uint32_t PerfDataCollector::mapping_of(const MapEntry& map) {
  if (!by_object_ || !map.is_file_backed()) return new_mapping(map);
  std::string key(reinterpret_cast<const char*>(map.build_id.data()), map.build_id_size);
  if (key.empty()) key.append(1, '\0').append(map.path);  // never equal to a build-id
  const uint64_t size = (map.end - map.start + 4095) & ~uint64_t{4095};
  key.append(reinterpret_cast<const char*>(&map.pgoff), sizeof map.pgoff);
  key.append(reinterpret_cast<const char*>(&size), sizeof size);
  auto [it, added] = object_mappings_.emplace(std::move(key), uint32_t(mappings.size()));
  if (added) new_mapping(map);
  return it->second;
}

uint32_t PerfDataCollector::new_mapping(const MapEntry& map) {
  uint32_t id = uint32_t(mappings.size());
  MappingCopy m;
  m.start = map.start;
  m.limit = map.end;
  m.offset = map.pgoff;
  m.path = std::string(map.path);
  m.file_backed = map.is_file_backed();
  m.build_id.assign(reinterpret_cast<const char*>(map.build_id.data()), map.build_id_size);
  mappings.push_back(std::move(m));
  return id;
}

namespace {

// libc.so.6, libfoo.so, libbar.so_1 (go tool pprof's libRx, without a regex).
bool is_shared_library(std::string_view base) {
  for (size_t p = base.find(".so"); p != std::string_view::npos; p = base.find(".so", p + 1))
    if (p + 3 == base.size() || base[p + 3] == '.' || base[p + 3] == '_') return true;
  return false;
}

}  // namespace

// The collector numbers mappings as frames first use them, so a system-wide
// recording whose first frame is in the kernel would make [kernel.kallsyms]
// the "main binary". Taken instead: the executable of the thread with the
// most weight, a file-backed mapping whose name starts with the thread's
// comm (which the kernel cuts at 15 characters) and is not a shared library
// (a thread named "ld" is not ld-linux-x86-64.so.2); failing that, the first
// file-backed mapping that is not a shared library (go tool pprof's own
// guess for profiles without an order, profile.massageMappings).
uint32_t PerfDataCollector::main_mapping() const {
  std::vector<double> weight(roots.size(), 0);
  for (const auto* ws : {&weights, &off_weights})
    for (size_t i = 0; i < ws->size(); ++i) {
      const Weight& w = (*ws)[i];
      if (w.raw < raws.size() && raws[w.raw].root < weight.size()) weight[raws[w.raw].root] += w.value;
    }
  std::vector<uint32_t> by_weight(roots.size());
  for (uint32_t i = 0; i < by_weight.size(); ++i) by_weight[i] = i;
  // Ties go to the first root seen: the same file gives the same choice.
  std::stable_sort(by_weight.begin(), by_weight.end(), [&](uint32_t a, uint32_t b) { return weight[a] > weight[b]; });
  if (by_weight.size() > 64) by_weight.resize(64);  // the heaviest threads: any of them is a fair choice
  for (uint32_t r : by_weight) {
    if (weight[r] <= 0) break;
    const std::string& comm = roots[r].comm;
    if (comm.empty()) continue;
    for (uint32_t m = 0; m < mappings.size(); ++m) {
      const std::string_view base = path_base_name(mappings[m].path);
      if (mappings[m].file_backed && base.substr(0, comm.size()) == comm && !is_shared_library(base)) return m;
    }
  }
  for (uint32_t m = 0; m < mappings.size(); ++m)
    if (mappings[m].file_backed && !is_shared_library(path_base_name(mappings[m].path))) return m;
  return kNone;
}

}  // namespace fg
