#include "fold/stack_symboliser.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "fold/sample_selection.h"
#include "folded/hash.h"

namespace fg {

namespace {

// Tags in the top 3 bits of a frame-cache key's first word.
// symbol_free: an address where its object has no symbol (one key per
// object); jit_unnamed: JIT code of a process without perf-PID.map entries
// (one key per process). Each names all its addresses the same.
enum class FrameKind : uint32_t { user = 1, kernel = 2, jit = 3, unknown = 4, symbol_free = 5, jit_unnamed = 6 };


// perf's is_anon_memory (tools/perf/util/map.c): mappings perf names by the
// process's perf-PID.map.
bool is_perf_anon_path(std::string_view path) {
  return path == "//anon" || path.rfind("/dev/zero", 0) == 0 || path.rfind("/anon_hugepage", 0) == 0;
}

bool has_object(const MapEntry& m) { return m.is_file_backed() || m.path == "[vdso]"; }

}  // namespace

uint64_t StackSymboliser::FrameSlotPolicy::rehash(const FrameSlot& s) { return detail::hash_pair(s.a, s.b); }

StackSymboliser::StackSymboliser(const FoldOptions& options, const PerfFileInfo& info)
    : options_(options), info_(info), symbols_(options.symbols) {
  // frame_cache_ keeps every answer by the key the SymbolCache would use.
  symbols_.keep_answers(false);
}

void NamedStacks::tell(FoldObserver& observer) {
  for (size_t i = 0; i < frames.size(); ++i) frames[i].names = records.data() + names_at[i];
  for (const ObservedStack& s : stacks) {
    if (s.same_as != kNotKnown) observer.on_known_raw_stack(s.index, s.same_as);
    else observer.on_raw_stack(s.index, s.root, frames.data() + s.frames_start, s.count, s.memo);
  }
}

void StackSymboliser::symbolise(uint32_t idx, const uint64_t* key_words, int32_t pid, MapsView maps,
                                NamedStacks& named) {
  const StackKeyView key(key_words);
  ThreadRoot* root = const_cast<ThreadRoot*>(static_cast<const ThreadRoot*>(key.root()));
  if (root->frame == FoldedProfile::kNoFrame) root->frame = names_.intern(root->name);
  GrowableArray<uint32_t>& out = named.records;
  const size_t header = out.size();
  out.extend(SymbolisedStack::kWords);
  out[header + SymbolisedStack::kIdx] = idx;
  out[header + SymbolisedStack::kRootFrame] = root->frame;
  if (options_.observer && !options_.observer->follows_memo()) {
    bool cut = false;
    size_t used = frame_keys(key, key.size(), pid, maps, &cut);
    observe_stack(idx, root, used, pid, named);
  } else {
    symbolise_with_memo(idx, key_words, pid, maps, named);
  }
}

// Fills frames_[0, end) (leaf first) with each address's cache key,
// prefetching its slot: the frame cache is too big for the CPU caches, and
// this way the misses of one stack's frames overlap. Returns how many
// frames are kept: past a cut (*cut set) the root side is dropped.
// A caller address in no executable mapping ends the walk: past it a
// frame-pointer chain (through code built without frame pointers) yields
// garbage, perf script prints each as "[unknown]", and a stack of dozens of
// them hides the real ones. One "[unknown]" marks the cut (also where DWARF
// unwinding was cut short, see kCutShortMarker). The leaf-most user address
// may be unmapped JIT code: its callers count.
size_t StackSymboliser::frame_keys(const StackKeyView& key, size_t end, int32_t pid, MapsView& maps, bool* cut) {
  *cut = false;
  if (frames_.size() < end) frames_.resize(end);
  bool user_seen = false;
  for (size_t i = 0; i < end; ++i) {
    StackFrame& fr = frames_[i];
    fr.address = key[i];
    fr.named = fr.address;
    fr.named.return_address = naming_call_site(fr.address, key);
    fr.key = frame_key(fr.named, pid, maps, &fr.map);
    fr.hash = detail::hash_pair(fr.key.a, fr.key.b);  // as FrameSlotPolicy::rehash
    frame_cache(fr.hash).prefetch(fr.hash);
    if (!fr.address.kernel) {
      if (!fr.map && user_seen) {
        *cut = true;
        return i + 1;
      }
      user_seen = true;
    }
  }
  return end;
}

// Whether a caller is named by its call site (return address - 1) or, as
// perf script names a frame-pointer callchain's entries (machine.c
// add_callchain_ip), by the address itself; perf's DWARF unwinder
// decrements callers' pcs, and so does FoldOptions::call_sites everywhere.
bool StackSymboliser::naming_call_site(const StackAddress& a, const StackKeyView& key) const {
  return a.return_address && (options_.call_sites || (!a.kernel && key.dwarf_user()));
}

// Of the kMemoWays memos of the key's root and process, the one sharing the
// most callers with the key (*reused: how many); if none shares any, the
// least recently used of the set, emptied for the key.
StackSymboliser::PathMemo& StackSymboliser::best_memo(const uint64_t* key_words, size_t* reused) {
  if (!memos_) {
    memos_ = std::make_unique<PathMemo[]>(kMemoSets * kMemoWays);
    for (size_t i = 0; i < kMemoSets * kMemoWays; ++i) memos_[i].entries = std::make_unique<MemoEntry[]>(kMemoDepth);
  }
  const StackKeyView key(key_words);
  const size_t n = key.size();
  const void* root = key.root();
  PathMemo* set = &memos_[(detail::hash_pair(key_words[1], key_words[2]) % kMemoSets) * kMemoWays];
  PathMemo* best = nullptr;
  PathMemo* oldest = set;
  size_t best_len = 0;
  for (size_t w = 0; w < kMemoWays; ++w) {
    PathMemo& m = set[w];
    if (m.last_used < oldest->last_used) oldest = &m;
    if (m.root != root || m.generation != key_words[2] || m.kernel_generation != key_words[3]) continue;
    const size_t limit = std::min<size_t>(m.depth, n);
    size_t len = 0;
    for (; len < limit; ++len) {
      const StackAddress a = key[n - 1 - len];
      const MemoEntry& e = m.entries[len];
      if (e.address != a.address || e.flags != memo_flags(a, naming_call_site(a, key))) break;
    }
    if (len > best_len) {
      best_len = len;
      best = &m;
    }
  }
  if (!best) {
    best = oldest;
    best->root = root;
    best->generation = key_words[2];
    best->kernel_generation = key_words[3];
    best->depth = 0;
  }
  best->last_used = ++memo_clock_;
  *reused = best_len;
  return *best;
}

// symbolise without an observer: the callers this stack shares with a
// recent one symbolised under its root in its process come from a memo (the
// same addresses in the same maps name the same frames), the rest frame by
// frame; the memo then holds this stack's addresses. `out` ends with this
// stack's SymbolisedStack header, whose other words are filled here.
void StackSymboliser::symbolise_with_memo(uint32_t idx, const uint64_t* key_words, int32_t pid, MapsView& maps,
                                          NamedStacks& named) {
  GrowableArray<uint32_t>& out = named.records;
  const StackKeyView key(key_words);
  const size_t n = key.size();
  size_t reused = 0;
  PathMemo& memo = best_memo(key_words, &reused);
  // Every memo address is kernel or mapped, so a cut can only fall among
  // the others; a cut drops the root side, memo included.
  bool cut = false;
  size_t used = frame_keys(key, n - reused, pid, maps, &cut);
  if (cut) reused = 0;
  else used = n;
  // Past the shared addresses, callers named alike (no symbol in their
  // object, or unnamed JIT code: one frame-cache key for all their
  // addresses) have the memo's names, so its nodes too: a stripped
  // browser's stacks differ in addresses deep down but not in names.
  // Their entries take this stack's addresses for the next stack.
  while (reused && reused < memo.depth && reused < n) {
    const StackFrame& f = frames_[n - 1 - reused];
    MemoEntry& e = memo.entries[reused];
    if (!e.alike || e.alike != f.key.a || f.key.b != 0) break;
    e.address = f.address.address;
    e.flags = memo_flags(f.address, f.named.return_address);
    ++reused;
  }
  if (reused) {
    stats_.frames += reused;
    stats_.memo_frames += reused;
    for (size_t j = 0; j < reused; ++j) stats_.kernel_frames += (memo.entries[j].flags >> 1) & 1;
  }
  const size_t header = out.size() - SymbolisedStack::kWords;
  // Frames [0, used - reused) remain, root side first; the memo keeps the
  // prefix of kernel or mapped addresses.
  size_t depth = reused;
  bool memo_open = true;
  const size_t observed = named.frames.size();
  if (options_.observer) {
    named.frames.resize(observed + used - reused);
    named.names_at.resize(observed + used - reused);
  }
  for (size_t i = used - reused; i-- > 0;) {
    const StackFrame& f = frames_[i];
    const size_t names_at = out.size() + 1;  // after the count
    const FrameSpan sp = append_frames(f, pid, out);
    if (options_.observer) {
      named.frames[observed + i] = observed_frame(f, sp);
      named.names_at[observed + i] = uint32_t(names_at);
    }
    memo_open = memo_open && depth < kMemoDepth && (f.address.kernel || f.map);
    if (memo_open)
      memo.entries[depth++] =
          MemoEntry{f.address.address, memo_flags(f.address, f.named.return_address), alike_key(f.key) ? f.key.a : 0};
  }
  memo.depth = uint32_t(depth);
  const uint32_t slot = uint32_t(&memo - memos_.get());
  out[header + SymbolisedStack::kMemoSlot] = slot;
  out[header + SymbolisedStack::kReused] = uint32_t(reused);
  out[header + SymbolisedStack::kMemoNew] = uint32_t(depth - reused);
  out[header + SymbolisedStack::kAddresses] = uint32_t(used - reused);
  if (options_.observer)
    observe(idx, key.root(), observed, used - reused, RawStackMemo{slot, uint32_t(reused), uint32_t(depth)}, named);
}

RawStackFrame StackSymboliser::observed_frame(const StackFrame& f, FrameSpan sp) {
  RawStackFrame o;
  o.address = f.address.address;
  o.kernel = f.address.kernel;
  o.return_address = f.address.return_address;
  o.map = f.address.kernel ? nullptr : f.map;
  o.names_start = sp.start;
  o.name_count = sp.count;
  return o;
}

// Raw stack idx for the observer: named.frames[frames_start, +n) and its root.
void StackSymboliser::observe(uint32_t idx, const void* root_ptr, size_t frames_start, size_t n,
                              const RawStackMemo& memo, NamedStacks& named) {
  const ThreadRoot& root = *static_cast<const ThreadRoot*>(root_ptr);
  RawStackRoot r;
  r.comm = root.comm;
  r.pid = root.pid;
  r.tid = root.tid;
  r.frame = root.frame;
  named.stacks.push_back(NamedStacks::ObservedStack{observer_index(idx), r, uint32_t(frames_start), uint32_t(n), memo});
}

// symbolise's loop when an observer watches and does not follow the memo:
// the same frames (the memo unused), and what each address became handed
// to the observer.
void StackSymboliser::observe_stack(uint32_t idx, const void* root, size_t n, int32_t pid, NamedStacks& named) {
  GrowableArray<uint32_t>& out = named.records;
  const size_t header = out.size() - SymbolisedStack::kWords;
  out[header + SymbolisedStack::kMemoSlot] = out[header + SymbolisedStack::kReused] =
      out[header + SymbolisedStack::kMemoNew] = 0;
  out[header + SymbolisedStack::kAddresses] = uint32_t(n);
  const size_t observed = named.frames.size();
  named.frames.resize(observed + n);
  named.names_at.resize(observed + n);
  for (size_t i = n; i-- > 0;) {
    named.names_at[observed + i] = uint32_t(out.size() + 1);  // after the count
    named.frames[observed + i] = observed_frame(frames_[i], append_frames(frames_[i], pid, out));
  }
  observe(idx, root, observed, n, RawStackMemo{}, named);
}

// Appends the frames (outermost first, inlines included) of one address to
// `out`, after their count; returns where they are in the frame arena.
StackSymboliser::FrameSpan StackSymboliser::append_frames(const StackFrame& f, int32_t pid, GrowableArray<uint32_t>& out) {
  ++stats_.frames;
  if (f.address.kernel) ++stats_.kernel_frames;
  const uint64_t hash = f.hash;
  auto same = [&](const FrameSlot& s) { return s.a == f.key.a && s.b == f.key.b; };
  FrameSpan sp;
  FrameCache& cache = frame_cache(hash);
  if (const FrameSlot* cached = cache.find(hash, same)) {
    if (cached->start & kInlineFrame) {
      uint32_t* w = out.extend(2);
      w[0] = 1;
      w[1] = cached->start & ~kInlineFrame;
      return FrameSpan{cached->start, 1};  // only an observer would read its start
    }
    sp = FrameSpan{cached->start, frame_arena_[cached->start]};
  } else {
    sp = name_address(f.named, f.map, pid);
    ++stats_.named_addresses;
    uint32_t start = sp.start;
    if (!options_.observer && sp.count == 1 && frame_arena_[sp.start + 1] < kInlineFrame)
      start = kInlineFrame | frame_arena_[sp.start + 1];
    cache.insert_new(hash, FrameSlot{f.key.b, f.key.a, start});
  }
  const FrameId* run = frame_arena_.data() + sp.start;
  out.append(run, size_t(sp.count) + 1);  // the count, then the names
  return sp;
}

// The frame cache's key for an address: the kernel address, the object and
// file offset, or the JIT process and address. *map_out gets the map.
StackSymboliser::FrameKey StackSymboliser::frame_key(const StackAddress& a, int32_t pid, MapsView& maps,
                                                     const MapEntry** map_out) {
  constexpr unsigned kKindShift = kKeyValueBits + 1;
  auto tag = [](FrameKind k) { return uint32_t(k) << kKindShift; };
  const uint32_t ret = a.return_address ? 1 : 0;
  FrameKey key;
  const MapEntry* map = nullptr;
  if (a.kernel) {
    key = FrameKey{tag(FrameKind::kernel) | ret, a.address};
  } else {
    map = maps.find(a.address);
    if (!map) {
      // One entry for every unmapped address ("[unknown]"), unless --addrs
      // names each by its address.
      key = FrameKey{tag(FrameKind::unknown), options_.addrs ? a.address : 0};
    } else if (const uint64_t handle = object_or_none(*map); handle != kNotAnObject) {
      // Handles number the objects opened: each costs far more than the
      // 2^28 * a few bytes a fold could hold before this is reached.
      if (handle >> kKeyValueBits) throw std::length_error("more than 2^28 objects to symbolise");
      const uint64_t offset = map->file_offset(a.address);
      if (names_alike() && symbol_free(handle).contains(offset)) {
        ++stats_.alike_frames;
        key = FrameKey{tag(FrameKind::symbol_free) | uint32_t(handle << 1), 0};
      } else {
        key = FrameKey{tag(FrameKind::user) | uint32_t(handle << 1) | ret, offset};
      }
    } else if (names_alike() && is_perf_anon_path(map->path) && jit_names_nothing(pid)) {
      ++stats_.alike_frames;
      key = FrameKey{tag(FrameKind::jit_unnamed) | (jit_process(pid) << 1), 0};
    } else {
      // Anonymous executable memory: JIT code, named per process by
      // perf-PID.map (at the call site too: hence the return-address bit).
      key = FrameKey{tag(FrameKind::jit) | (jit_process(pid) << 1) | ret, a.address};
    }
  }
  *map_out = map;
  return key;
}

bool StackSymboliser::alike_key(const FrameKey& k) {
  const uint32_t kind = k.a >> (kKeyValueBits + 1);
  return kind == uint32_t(FrameKind::symbol_free) || kind == uint32_t(FrameKind::jit_unnamed);
}

// Whether addresses that all get the same name (symbol_free,
// jit_unnamed) share a frame-cache entry. Not where each is told apart: an
// observer keys locations by address, --addrs names each by its offset, and
// `fgtool info` counts the addresses of each object looked up.
bool StackSymboliser::names_alike() const {
  return !options_.observer && !options_.addrs && !options_.object_statuses;
}

const SymbolFreePages& StackSymboliser::symbol_free(uint64_t handle) {
  while (symbol_free_.size() <= handle) symbol_free_.push_back(symbols_.symbol_free_pages(ObjectHandle(symbol_free_.size())));
  return symbol_free_[handle];
}

bool StackSymboliser::jit_names_nothing(int32_t pid) {
  if (!jit_seen_ || jit_seen_pid_ != pid) {
    jit_seen_ = true;
    jit_seen_pid_ = pid;
    jit_seen_nothing_ = symbols_.jit_names_nothing(pid);
  }
  return jit_seen_nothing_;
}

// The process of a JIT frame's key, in kKeyValueBits: the pid itself, or
// for a pid Linux never gives (2^27 and up, negative) one past 2^27 in
// order of first sight, so that no two processes share JIT names.
uint32_t StackSymboliser::jit_process(int32_t pid) {
  constexpr uint32_t kWide = uint32_t(1) << (kKeyValueBits - 1);
  if (pid >= 0 && uint32_t(pid) < kWide) return uint32_t(pid);
  auto it = wide_jit_pids_.emplace(pid, kWide + uint32_t(wide_jit_pids_.size())).first;
  if (it->second >> kKeyValueBits) throw std::length_error("more than 2^27 processes with JIT code");
  return it->second;
}

// The map's object handle (object_of), or kNotAnObject for anonymous
// memory: MapEntry::object_slot keeps either, as the path checks of
// has_object were 3% of a busy recording's fold when made for every frame.
uint64_t StackSymboliser::object_or_none(const MapEntry& m) {
  const uint64_t slot = m.object_slot.get();
  if (slot != MapEntry::kNoObject) return slot;
  if (has_object(m)) return object_of(m);
  m.object_slot.set(kNotAnObject);
  return kNotAnObject;
}

// MapEntry::object_slot is written here only: on the symbolising thread, or
// under elf_path_mutex_ by the unwinders (which never run alongside a
// symbolising thread: a fold has DWARF unwinding or a symbolising thread).
uint64_t StackSymboliser::object_of(const MapEntry& m) {
  uint64_t slot = m.object_slot.get();
  if (slot == MapEntry::kNoObject) {
    std::string_view bid(reinterpret_cast<const char*>(m.build_id.data()), m.build_id_size);
    if (bid.empty()) bid = build_id_from_feature(m.path);
    slot = symbols_.object(ObjectKey{m.path, bid});
    m.object_slot.set(slot);
  }
  return slot;
}

// The BUILD_ID feature's id for a path (the feature lists only some DSOs).
std::string_view StackSymboliser::build_id_from_feature(std::string_view path) {
  if (!feature_ids_built_) {
    feature_ids_built_ = true;
    for (const auto& e : info_.build_ids) feature_ids_.emplace(e.filename, e.build_id);
  }
  auto it = feature_ids_.find(std::string(path));
  return it == feature_ids_.end() ? std::string_view() : std::string_view(it->second);
}

// The unwinder needs the vdso image too (perf saves it in its build-id
// cache); without it a sample whose leaf is in the vdso stops at one frame.
std::string StackSymboliser::elf_path_for(const MapEntry& m) {
  if (!has_object(m)) return std::string();
  std::lock_guard<std::mutex> lock(elf_path_mutex_);  // two unwinding threads share the SymbolCache
  return symbols_.resolved_elf_path(ObjectHandle(object_of(m)));
}

// What perf script calls an address it has no symbol for.
std::string StackSymboliser::fallback_name(const StackAddress& a, const MapEntry* map, int32_t pid, bool* jit) {
  *jit = false;
  if (a.kernel) return "[kernel.kallsyms]";
  if (!map) return "[unknown]";
  if (has_object(*map)) {
    std::string name = "[" + std::string(path_base_name(map->path)) + "]";
    if (options_.addrs) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "+0x%llx", (unsigned long long)map->file_offset(a.address));
      name.insert(name.size() - 1, buf);
    }
    return name;
  }
  *jit = true;
  // perf's map__new gives anonymous memory ("//anon", /dev/zero,
  // /anon_hugepage) the dso /tmp/perf-PID.map, and perf script names an
  // unresolved frame there by it: keep that spelling (drop-in folds).
  if (!is_perf_anon_path(map->path)) return "[" + std::string(path_base_name(map->path)) + "]";
  if (options_.merge_jit) return "[JIT]";
  return "[perf-" + std::to_string(pid) + ".map]";
}

// The frames (inlines included, outermost first) of one address, appended
// to the frame arena.
StackSymboliser::FrameSpan StackSymboliser::name_address(const StackAddress& a, const MapEntry* map, int32_t pid) {
  resolved_.clear();
  if (a.kernel) {
    symbols_.symbolize_kernel(a.address, a.return_address, resolved_);
  } else if (!map) {
  } else if (has_object(*map)) {
    uint64_t handle = object_of(*map);
    symbols_.symbolize(ObjectHandle(handle), map->file_offset(a.address), a.return_address, resolved_);
    // A "return address" whose pc-1 lies in no symbol is not a real one (a
    // frame-pointer walk through code built without them): name it by pc,
    // as perf does, rather than by nothing.
    if (a.return_address && !any_resolved()) {
      resolved_.clear();
      symbols_.symbolize(ObjectHandle(handle), map->file_offset(a.address), false, resolved_);
    }
  } else {
    symbols_.symbolize_jit(pid, a.address, a.return_address, resolved_);
  }
  bool jit = false;
  std::string fallback = fallback_name(a, map, pid, &jit);
  FrameSpan sp{uint32_t(frame_arena_.size()), 0};
  frame_arena_.push_back(0);  // the count, set below
  bool any = false;
  for (const SymbolizedFrame& f : resolved_) {
    if (!f.resolved) continue;
    any = true;
    push_frame(f.name, a.kernel, jit, map);
  }
  if (!any) {
    ++stats_.unknown_frames;
    if (options_.addrs && (a.kernel || !map)) {
      char buf[40];
      std::snprintf(buf, sizeof buf, "[unknown <%llx>]", (unsigned long long)a.address);
      fallback = buf;
    }
    push_frame(fallback, a.kernel, jit, map);
  }
  sp.count = uint32_t(frame_arena_.size()) - sp.start - 1;
  frame_arena_[sp.start] = sp.count;
  return sp;
}

bool StackSymboliser::any_resolved() const {
  for (const SymbolizedFrame& f : resolved_)
    if (f.resolved) return true;
  return false;
}

void StackSymboliser::push_frame(std::string_view name, bool kernel, bool jit, const MapEntry* map) {
  if (name.size() > kMaxFrameNameBytes) {
    name = clamp_frame_name(name);
    ++stats_.truncated_names;
  }
  FrameId id;
  if ((kernel && options_.annotate_kernel) || (jit && options_.annotate_jit)) {
    id = names_.intern(std::string(name) + (kernel ? "_[k]" : "_[j]"));
  } else {
    id = names_.intern(name);
  }
  if (names_.frame_object(id).empty()) {
    if (kernel) names_.set_frame_object(id, "[kernel.kallsyms]");
    else if (map) names_.set_frame_object(id, map->path);
  }
  frame_arena_.push_back(id);
}

}  // namespace fg
