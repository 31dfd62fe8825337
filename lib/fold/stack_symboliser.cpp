#include "fold/stack_symboliser.h"

#include <cstdio>

#include "fold/sample_selection.h"
#include "folded/hash.h"

namespace fg {

namespace {

// Tags in the high bits of a frame-cache key's first word.
enum class FrameKind : uint64_t { user = 1, kernel = 2, jit = 3, unknown = 4 };

std::string basename_of(std::string_view path) {
  size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

// perf's is_anon_memory (tools/perf/util/map.c): mappings perf names by the
// process's perf-PID.map.
bool is_perf_anon_path(std::string_view path) {
  return path == "//anon" || path.rfind("/dev/zero", 0) == 0 || path.rfind("/anon_hugepage", 0) == 0;
}

bool has_object(const MapEntry& m) { return m.is_file_backed() || m.path == "[vdso]"; }

}  // namespace

uint64_t StackSymboliser::FrameSlotPolicy::rehash(const FrameSlot& s) { return detail::hash_pair(s.key.a, s.key.b); }

StackSymboliser::StackSymboliser(const FoldOptions& options, const PerfFileInfo& info)
    : options_(options), info_(info), symbols_(options.symbols) {
  // frame_cache_ keeps every answer by the key the SymbolCache would use.
  symbols_.keep_answers(false);
}

void StackSymboliser::symbolise(uint32_t idx, const uint64_t* key_words, int32_t pid, const ProcessMaps* proc) {
  const StackKeyView key(key_words);
  const size_t n = key.size();
  ThreadRoot* root = const_cast<ThreadRoot*>(static_cast<const ThreadRoot*>(key.root()));
  if (root->frame == FoldedProfile::kNoFrame) root->frame = out_.intern(root->name);
  size_t used = n;
  bool user_seen = false;
  // First every frame's cache key, prefetching its slot, then the lookups:
  // the frame cache is too big for the CPU caches, and this way the misses
  // of one stack's frames overlap.
  if (frames_.size() < n) frames_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    StackFrame& fr = frames_[i];
    fr.address = key[i];
    fr.key = frame_key(fr.address, pid, proc, &fr.map);
    fr.hash = detail::hash_pair(fr.key.a, fr.key.b);
    frame_cache_.prefetch(fr.hash);
    // A caller address in no executable mapping ends the walk: past it a
    // frame-pointer chain (through code built without frame pointers)
    // yields garbage, perf script prints each as "[unknown]", and a stack
    // of dozens of them hides the real ones. One "[unknown]" marks the cut
    // (also where DWARF unwinding was cut short, see kCutShortMarker).
    // The leaf-most user address may be unmapped JIT code: its callers count.
    if (!fr.address.kernel) {
      if (!fr.map && user_seen) {
        used = i + 1;
        break;
      }
      user_seen = true;
    }
  }
  // Root first: the addresses are leaf first.
  NodeId node = out_.child(0, root->frame);
  if (options_.observer) {
    node = observe_stack(idx, root, used, pid, node);
  } else {
    for (size_t i = used; i-- > 0;) node = append_frames(frames_[i], pid, node);
  }
  if (stack_nodes_.size() <= idx) stack_nodes_.resize(idx + 1);
  stack_nodes_[idx] = node;
}

// symbolise's loop when an observer watches: the same frames, and what each
// address became handed to the observer.
NodeId StackSymboliser::observe_stack(uint32_t idx, const void* root_ptr, size_t n, int32_t pid, NodeId node) {
  const ThreadRoot& root = *static_cast<const ThreadRoot*>(root_ptr);
  observed_.resize(n);
  for (size_t i = n; i-- > 0;) {
    const StackFrame& f = frames_[i];
    FrameSpan sp{0, 0};
    node = append_frames(f, pid, node, &sp);
    RawStackFrame& o = observed_[i];
    o.address = f.address.address;
    o.kernel = f.address.kernel;
    o.return_address = f.address.return_address;
    o.map = f.address.kernel ? nullptr : f.map;
    o.names_start = sp.start;
    o.name_count = sp.count;
  }
  RawStackRoot r;
  r.comm = root.comm;
  r.pid = root.pid;
  r.tid = root.tid;
  r.frame = root.frame;
  options_.observer->on_raw_stack(idx, r, observed_.data(), n, frame_arena_.data());
  return node;
}

// Extends the path at node by the frames (outermost first, inlines included)
// of one address; returns where it ends.
NodeId StackSymboliser::append_frames(const StackFrame& f, int32_t pid, NodeId node, FrameSpan* span_out) {
  ++stats_.frames;
  if (f.address.kernel) ++stats_.kernel_frames;
  const uint64_t hash = f.hash;
  auto same = [&](const FrameSlot& s) { return s.key.a == f.key.a && s.key.b == f.key.b; };
  FrameSpan sp;
  if (const FrameSlot* cached = frame_cache_.find(hash, same)) {
    sp = cached->span;
  } else {
    sp = name_address(f.address, f.map, pid);
    frame_cache_.insert_new(hash, FrameSlot{f.key, sp});
  }
  for (uint32_t i = 0; i < sp.count; ++i) node = out_.child(node, frame_arena_[sp.start + i]);
  if (span_out) *span_out = sp;
  return node;
}

// The frame cache's key for an address: the kernel address, the object and
// file offset, or the JIT process and address. *map_out gets the map.
StackSymboliser::FrameKey StackSymboliser::frame_key(const StackAddress& a, int32_t pid, const ProcessMaps* proc,
                                                     const MapEntry** map_out) {
  FrameKey key;
  const MapEntry* map = nullptr;
  if (a.kernel) {
    key = FrameKey{(uint64_t(FrameKind::kernel) << 60) | (a.return_address ? 1 : 0), a.address};
  } else {
    map = proc ? proc->find(a.address) : nullptr;
    if (!map) {
      key = FrameKey{uint64_t(FrameKind::unknown) << 60, 0};
    } else if (has_object(*map)) {
      uint64_t handle = object_of(*map);
      key = FrameKey{(uint64_t(FrameKind::user) << 60) | (handle << 1) | (a.return_address ? 1 : 0),
                     map->file_offset(a.address)};
    } else {
      // Anonymous executable memory: JIT code, named per process by perf-PID.map.
      key = FrameKey{(uint64_t(FrameKind::jit) << 60) | (uint64_t(uint32_t(pid)) << 1), a.address};
    }
  }
  *map_out = map;
  return key;
}

// MapEntry::object_slot is written here only: on the symbolising thread, or
// under elf_path_mutex_ by the unwinders (which never run alongside a
// symbolising thread: a fold has DWARF unwinding or a symbolising thread).
uint64_t StackSymboliser::object_of(const MapEntry& m) {
  if (m.object_slot == MapEntry::kNoObject) {
    std::string_view bid(reinterpret_cast<const char*>(m.build_id.data()), m.build_id_size);
    if (bid.empty()) bid = build_id_from_feature(m.path);
    m.object_slot = symbols_.object(ObjectKey{m.path, bid});
  }
  return m.object_slot;
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
    std::string name = "[" + basename_of(map->path) + "]";
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
  if (!is_perf_anon_path(map->path)) return "[" + basename_of(map->path) + "]";
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
  sp.count = uint32_t(frame_arena_.size()) - sp.start;
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
    id = out_.intern(std::string(name) + (kernel ? "_[k]" : "_[j]"));
  } else {
    id = out_.intern(name);
  }
  if (out_.frame_object(id).empty()) {
    if (kernel) out_.set_frame_object(id, "[kernel.kallsyms]");
    else if (map) out_.set_frame_object(id, map->path);
  }
  frame_arena_.push_back(id);
}

}  // namespace fg
