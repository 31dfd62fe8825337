#include "symbols/symbol_cache.h"

#include <future>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <future>
#include <sstream>

#include "diagnostics/input_error.h"
#include "symbols/build_id.h"
#include "symbols/file_bytes.h"
#include "symbols/jit_map.h"
#include "folded/folded_profile.h"
#include "folded/hash.h"
#include "folded/open_table.h"
#include "symbols/symbol_names.h"
#include "unwind/process_table.h"  // is_file_backed_path (header-only: no link dependency)

namespace fg {

namespace {

// Display names of the symbols looked up so far, by symbol index, each made
// on its first look-up: a table, not a vector per symbol, because a fold
// looks up a few thousand of the hundreds of thousands of symbols its
// objects (and kallsyms) have (a 16-byte slot per symbol was 12 MB on a busy
// system-wide recording). OpenTable, as a std::unordered_map's node was a
// cache miss per look-up (1% of a busy fold).
class NamesByIndex {
 public:
  // The name of symbol `index`; make() gives it the first time (a view that
  // stays valid).
  template <class Make>
  std::string_view get(uint32_t index, Make&& make) {
    const uint64_t hash = detail::mix64(index);
    auto same = [&](const Slot& s) { return s.index == index; };
    if (const Slot* known = table_.find(hash, same)) return std::string_view(known->data, known->size);
    const std::string_view name = make();
    static const char kEmpty[] = "";
    table_.insert_new(hash, Slot{name.data() ? name.data() : kEmpty, uint32_t(name.size()), index});
    return name;
  }

 private:
  struct Slot {
    const char* data = nullptr;  // nullptr: unused
    uint32_t size = 0;
    uint32_t index = 0;
  };
  struct Policy {
    static bool empty(const Slot& s) { return s.data == nullptr; }
    static Slot empty_slot() { return Slot{}; }
    static uint64_t rehash(const Slot& s) { return detail::mix64(s.index); }
  };
  OpenTable<Slot, Policy> table_{16};
};

}  // namespace

struct SymbolCache::Object {
  std::string path;        // recorded
  std::string build_id;    // recorded, raw
  std::unique_ptr<ElfObject> elf;
  std::string problem;
  std::string_view display;            // "[libc.so.6]"
  NamesByIndex names;
  uint64_t lookups = 0, unresolved = 0;
  // Names read from the file's mapping since its pages were last released.
  uint32_t names_since_release = 0;
};

// kallsyms symbols' names, by index: a kernel symbol's addresses (a stack is
// interrupted anywhere in a function) were each demangled and interned again.
struct SymbolCache::KernelNames : NamesByIndex {};

struct SymbolCache::Jit {
  NamedRanges ranges;
  std::string path;
  std::string problem;
  std::string_view display;  // "[perf-PID.map]"
};

namespace {

constexpr uint64_t kKindOffset = 0, kKindJit = 2, kKindVaddr = 3;

bool is_dir(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}
bool is_file(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

SymbolCache::SymbolCache(SymbolOptions options) : options_(std::move(options)) {
  if (options_.buildid_dir.empty()) {
    const char* home = std::getenv("HOME");
    if (home && *home) options_.buildid_dir = std::string(home) + "/.debug";
  }
  if (!options_.debuginfod) {
    // libdwfl consults debuginfod servers whenever DEBUGINFOD_URLS is set, which can
    // stall for seconds per object; fgtool only does so when asked.
    const char* urls = std::getenv("DEBUGINFOD_URLS");
    if (urls && *urls) ::setenv("DEBUGINFOD_URLS", "", 1);
  }
  kernel_unknown_ = intern("[kernel.kallsyms]");
}

namespace {
// The kernel's symbol table and where it came from. Built without touching a
// SymbolCache, so that it can be built on another thread.
struct KernelLoad {
  KallsymsTable table;
  std::string source, problem;
  bool kptr_restricted = false;
};

KernelLoad load_kallsyms(const SymbolOptions& options) {
  KernelLoad out;
  FileBytes text;
  std::string error;
  auto use = [&](const std::string& path, std::string_view text_in) {
    KallsymsTable t = KallsymsTable::parse(text_in, path);
    if (t.all_zero()) {
      out.kptr_restricted = true;
      if (!out.problem.empty()) out.problem += "; ";
      out.problem += path + ": all addresses are 0 (kernel.kptr_restrict)";
      return false;
    }
    out.table = std::move(t);
    out.source = path;
    return true;
  };
  if (!options.kallsyms_path.empty()) {
    if (!text.read(options.kallsyms_path, &error))
      throw InputError("kallsyms: " + error);
    if (use(options.kallsyms_path, text.view())) return out;
  }
  std::string cached;  // perf record's copy in the build-id cache, if the recording names one
  if (!options.kernel_build_id.empty() && !options.buildid_dir.empty())
    cached = options.buildid_dir + "/[kernel.kallsyms]/" + build_id_hex(options.kernel_build_id) + "/kallsyms";
  if (options.use_proc_kallsyms) {
    // The same kernel is running. perf record saved /proc/kallsyms into the
    // build-id cache under the recording's kernel build-id; that copy is a
    // plain file, read in a few ms, while the kernel takes ~50 ms to print
    // /proc/kallsyms, and it is what the recorder saw. Prefer it when it is
    // there (also: `fgtool info` names the file used).
    if (!cached.empty() && text.read(cached, nullptr)) {
      try {
        if (use(cached, text.view())) return out;
      } catch (const InputError& e) {
        out.problem = e.what();
      }
    }
    if (text.read("/proc/kallsyms", &error)) {
      try {
        if (use("/proc/kallsyms", text.view())) return out;
      } catch (const InputError& e) {
        out.problem = e.what();
      }
    }
  }
  if (!cached.empty()) {
    if (text.read(cached, nullptr)) {
      try {
        if (use(cached, text.view())) return out;
      } catch (const InputError& e) {
        if (!out.problem.empty()) out.problem += "; ";
        out.problem += e.what();
      }
    }
  }
  if (out.problem.empty())
    out.problem = "no kernel symbols: no --kallsyms file, /proc/kallsyms not usable for this recording, "
                  "no kallsyms in the build-id cache";
  return out;
}
}  // namespace

struct SymbolCache::KernelPreload {
  std::future<KernelLoad> result;
};

SymbolCache::~SymbolCache() {
  objects_.clear();
  for (const std::string& f : temp_files_) ::unlink(f.c_str());
}

std::string_view SymbolCache::intern(std::string_view s) {
  auto it = interned_.find(s);
  if (it != interned_.end()) return *it;
  if (arena_used_ + s.size() > arena_cap_) {
    size_t cap = std::max<size_t>(64 * 1024, s.size());
    arena_blocks_.emplace_back(new char[cap]);
    arena_used_ = 0;
    arena_cap_ = cap;
  }
  char* dst = arena_blocks_.back().get() + arena_used_;
  if (!s.empty()) std::memcpy(dst, s.data(), s.size());
  arena_used_ += s.size();
  std::string_view stored(dst, s.size());
  interned_.insert(stored);
  return stored;
}

std::string_view SymbolCache::display_name(std::string_view raw) {
  // Most names (C's, the kernel's) are shown as they are: no copy to make.
  if ((!options_.demangle || raw.substr(0, 2) != "_Z") && is_folded_safe(raw)) return intern(raw);
  std::string name = options_.demangle ? demangle_without_params(raw) : std::string(raw);
  if (!is_folded_safe(name)) name = folded_safe_name(name);
  return intern(name);
}

// The files that may hold the object, best first: perf's build-id cache
// (both layouts), then --symfs, then the recorded path itself.
std::vector<SymbolCache::ObjectCandidate> SymbolCache::candidate_files(const SymbolOptions& options_,
                                                                       const std::string& build_id,
                                                                       const std::string& path, bool vdso) {
  std::vector<ObjectCandidate> candidates;
  const std::string elf_name = vdso ? "vdso" : "elf";
  if (!build_id.empty() && !options_.buildid_dir.empty()) {
    std::string hex = build_id_hex(build_id);
    std::string link = options_.buildid_dir + "/.build-id/" + hex.substr(0, 2) + "/" + hex.substr(2);
    if (is_dir(link)) {
      candidates.push_back({link + "/" + elf_name, link + "/debug"});
    } else if (is_file(link)) {  // older perf: the link points at the file itself
      candidates.push_back({link, link + ".debug"});
    }
    std::string dir = options_.buildid_dir + (path.front() == '/' ? "" : "/") + path + "/" + hex;
    if (is_dir(dir)) candidates.push_back({dir + "/" + elf_name, dir + "/debug"});
  }
  if (is_file_backed_path(path)) {  // path is without " (deleted)" here
    if (!options_.symfs.empty()) candidates.push_back({options_.symfs + (path.front() == '/' ? "" : "/") + path, ""});
    candidates.push_back({path, ""});
  }
  return candidates;
}

// A [vdso] not in the build-id cache (perf record --no-buildid-cache): this
// machine's own vdso is the recorded one when the kernel build is the same,
// i.e. the build-ids match. Its image goes to a temporary file, kept until the
// cache goes (the unwinder opens resolved_elf_path() too).
void SymbolCache::open_live_vdso(Object& obj, const DebugSearch& search, std::string& problems) {
  std::string image = live_vdso_image();
  if (!image.empty() && build_id_of_image(image) == obj.build_id) {
    const char* tmp = std::getenv("TMPDIR");
    std::string name = std::string(tmp && *tmp ? tmp : "/tmp") + "/fgtool-vdso-XXXXXX";
    int fd = ::mkstemp(name.data());
    if (fd >= 0) {
      bool written = ::write(fd, image.data(), image.size()) == static_cast<ssize_t>(image.size());
      ::close(fd);
      std::string problem;
      if (written) obj.elf = ElfObject::open(name, obj.build_id, search, &problem);
      // Kept until the cache goes: the unwinder opens resolved_elf_path() too.
      if (obj.elf) {
        problems.clear();
        temp_files_.push_back(name);
      } else {
        ::unlink(name.c_str());
      }
    }
  } else if (!image.empty()) {
    if (!problems.empty()) problems += "; ";
    problems += "this machine's vdso has build-id " + build_id_hex(build_id_of_image(image)) +
                ", recording has " + build_id_hex(obj.build_id);
  }
}

// BUILD_ID records pad ids to 24 bytes; GNU build-ids are at most 20 (SHA-1).
static std::string trimmed_build_id(std::string id) {
  while (id.size() > 20 && id.back() == '\0') id.pop_back();
  return id;
}

// The candidate open_object tries first, when it can be read (the others
// are for when it fails).
std::optional<SymbolCache::ObjectCandidate> SymbolCache::first_readable_candidate(const SymbolOptions& options,
                                                                                const std::string& build_id,
                                                                                const std::string& path) {
  for (ObjectCandidate& c : candidate_files(options, build_id, path, false))
    if (::access(c.file.c_str(), R_OK) == 0) return std::move(c);
  return std::nullopt;
}

DebugSearch SymbolCache::debug_search(const SymbolOptions& options, const ObjectCandidate& c) {
  DebugSearch search;
  if (!options.symfs.empty()) search.debuginfo_path = ":.debug:" + options.symfs + "/usr/lib/debug:/usr/lib/debug";
  search.cached_debug_file = c.debug;
  search.demangle = options.demangle;
  return search;
}

std::unique_ptr<ElfObject> SymbolCache::open_elf(const std::string& file, const std::string& build_id,
                                                 const DebugSearch& search, std::string* problem) {
  if (preloader_)
    if (std::optional<ElfPreloader::Loaded> l = preloader_->take(ElfPreloader::Job{file, build_id, search})) {
      *problem = std::move(l->problem);
      return std::move(l->elf);
    }
  return ElfObject::open(file, build_id, search, problem);
}

std::unique_ptr<SymbolCache::Object> SymbolCache::open_object(const ObjectKey& key) {
  auto obj = std::make_unique<Object>();
  obj->path = std::string(key.path);
  obj->build_id = trimmed_build_id(std::string(key.build_id));
  std::string base(path_base_name(obj->path));
  obj->display = intern(base.empty()                                         ? std::string("[unknown]")
                        : base.front() == '[' && base.back() == ']' ? base
                                                                   : "[" + base + "]");

  // Lookup path without " (deleted)", which the kernel appends to replaced files.
  std::string path = obj->path;
  static constexpr std::string_view kDeleted = " (deleted)";
  if (path.size() > kDeleted.size() && path.compare(path.size() - kDeleted.size(), kDeleted.size(), kDeleted) == 0)
    path.resize(path.size() - kDeleted.size());

  const bool vdso = path == "[vdso]";
  const std::vector<ObjectCandidate> candidates = candidate_files(obj->build_id, path, vdso);

  DebugSearch search = debug_search(options_, ObjectCandidate{});
  std::string problems;
  std::string last_tried;
  for (const ObjectCandidate& c : candidates) {
    if (c.file == last_tried) continue;
    last_tried = c.file;
    search = debug_search(options_, c);
    std::string problem;
    obj->elf = open_elf(c.file, obj->build_id, search, &problem);
    if (obj->elf) break;
    if (!problems.empty()) problems += "; ";
    problems += problem;
  }
  if (!obj->elf && vdso && !obj->build_id.empty()) open_live_vdso(*obj, search, problems);
  if (!obj->elf) {
    if (!problems.empty())
      obj->problem = problems;
    else if (candidates.empty())
      obj->problem = vdso ? "no [vdso] image: no build-id recorded or not in the build-id cache"
                          : "no file behind this mapping";
  } else {
    if (obj->elf->real_symbol_count() == 0) obj->problem = "no function symbols (stripped; no debuginfo found)";
    else if (!problems.empty()) obj->problem = "used " + obj->elf->path() + " after: " + problems;
  }
  return obj;
}

ObjectHandle SymbolCache::object(const ObjectKey& key) {
  std::string k;
  k.reserve(key.path.size() + 1 + key.build_id.size());
  k.append(key.path).push_back('\0');
  k.append(key.build_id);
  auto it = object_index_.find(k);
  if (it != object_index_.end()) return it->second;
  auto h = static_cast<ObjectHandle>(objects_.size());
  objects_.push_back(open_object(key));
  object_index_.emplace(std::move(k), h);
  return h;
}

std::optional<uint64_t> SymbolCache::file_offset_to_vaddr(ObjectHandle h, uint64_t file_offset) {
  if (h >= objects_.size() || !objects_[h]->elf) return std::nullopt;
  return objects_[h]->elf->file_offset_to_vaddr(file_offset);
}

std::string_view SymbolCache::symbol_name(Object& obj, size_t index) {
  return obj.names.get(uint32_t(index), [&] {
    const ElfSymbol& sym = obj.elf->symbols()[index];
    std::string_view name;
    if (sym.plt) {
      name = intern(folded_safe_name((options_.demangle ? demangle_without_params(sym.name) : std::string(sym.name)) + "@plt"));
    } else {
      name = display_name(sym.name);
    }
    // Each name read faults in pages of the file's string table (the
    // kernel maps 64 KB around a fault), and they stayed: on a busy
    // recording, 23 MB of the fold's 150 MB peak (node's names alone 8 MB).
    // Names are read once (kept in `names`), so releasing the pages every
    // names_per_release names bounds them, at the cost of one madvise.
    if (options_.names_per_release && ++obj.names_since_release >= options_.names_per_release) {
      obj.names_since_release = 0;
      obj.elf->release_mapped_pages();
    }
    return name;
  });
}

SymbolCache::FrameSpan SymbolCache::store_frames(const std::vector<SymbolizedFrame>& frames) {
  FrameSpan span;
  span.head = frames.at(0);
  span.first = static_cast<uint32_t>(frames_.size());
  span.count = static_cast<uint32_t>(frames.size() - 1);
  frames_.insert(frames_.end(), frames.begin() + 1, frames.end());
  return span;
}

void SymbolCache::object_frames(Object& obj, uint64_t vaddr, bool have_vaddr) {
  scratch_.clear();
  const ElfSymbol* sym = have_vaddr && obj.elf ? obj.elf->find_symbol(vaddr) : nullptr;
  if (!sym) {
    scratch_.push_back({obj.display, false, false});
    return;
  }
  size_t index = static_cast<size_t>(sym - obj.elf->symbols().data());
  scratch_.push_back({symbol_name(obj, index), true, false});
  if (options_.inline_frames) {
    obj.elf->inline_chain(vaddr, inline_scratch_);
    for (const std::string& callee : inline_scratch_) {
      if (callee.empty()) continue;
      scratch_.push_back({display_name(callee), true, true});
    }
  }
}

SymbolCache::FrameSpan SymbolCache::compute_object_frames(Object& obj, uint64_t vaddr, bool have_vaddr) {
  object_frames(obj, vaddr, have_vaddr);
  return store_frames(scratch_);
}

bool SymbolCache::give_uncached(bool* unresolved, std::vector<SymbolizedFrame>& out) const {
  if (keep_answers_) return false;
  if (unresolved && !scratch_.at(0).resolved) *unresolved = true;
  out.insert(out.end(), scratch_.begin(), scratch_.end());
  return true;
}

void SymbolCache::symbolize(ObjectHandle h, uint64_t file_offset, bool return_address,
                            std::vector<SymbolizedFrame>& out) {
  Object& obj = *objects_.at(h);
  ++obj.lookups;
  FrameKey key{(uint64_t(h) << 3) | (uint64_t(return_address) << 2) | kKindOffset, file_offset};
  const FrameSpan* span = keep_answers_ ? frame_cache_.find(key) : nullptr;
  if (!span) {
    std::optional<uint64_t> vaddr = obj.elf ? obj.elf->file_offset_to_vaddr(file_offset) : std::nullopt;
    uint64_t lookup = vaddr ? *vaddr - (return_address && *vaddr > 0 ? 1 : 0) : 0;
    object_frames(obj, lookup, vaddr.has_value());
    bool unresolved = false;
    if (give_uncached(&unresolved, out)) {
      obj.unresolved += unresolved;
      return;
    }
    frame_cache_.insert(key, store_frames(scratch_));
    span = frame_cache_.find(key);
  }
  if (!span->head.resolved) ++obj.unresolved;
  append(*span, out);
}

void SymbolCache::symbolize_vaddr(ObjectHandle h, uint64_t vaddr, bool return_address,
                                  std::vector<SymbolizedFrame>& out) {
  Object& obj = *objects_.at(h);
  ++obj.lookups;
  FrameKey key{(uint64_t(h) << 3) | (uint64_t(return_address) << 2) | kKindVaddr, vaddr};
  const FrameSpan* span = frame_cache_.find(key);
  if (!span) {
    uint64_t lookup = vaddr - (return_address && vaddr > 0 ? 1 : 0);
    frame_cache_.insert(key, compute_object_frames(obj, lookup, true));
    span = frame_cache_.find(key);
  }
  if (!span->head.resolved) ++obj.unresolved;
  append(*span, out);
}

void SymbolCache::start_reading_ahead(const std::vector<ObjectKey>& objects) {
  if (read_ahead_) return;
  std::vector<std::pair<std::string, std::string>> keys;  // copies: the thread outlives the views
  for (const ObjectKey& k : objects)
    if (is_file_backed_path(k.path)) keys.emplace_back(std::string(k.path), std::string(k.build_id));
  read_ahead_ = std::make_unique<SymbolReadAhead>([options = options_, keys = std::move(keys)] {
    // The file each object would be opened from, and its cached debug file.
    std::vector<std::string> files;
    for (const auto& [path, build_id] : keys)
      if (std::optional<ObjectCandidate> c = first_readable_candidate(options, build_id, path)) {
        files.push_back(c->file);
        if (!c->debug.empty() && ::access(c->debug.c_str(), R_OK) == 0) files.push_back(c->debug);
      }
    return files;
  });
}

void SymbolCache::start_preloading(const std::vector<ObjectKey>& objects) {
  if (preloader_) return;
  std::vector<std::pair<std::string, std::string>> keys;  // copies: the thread outlives the views
  for (const ObjectKey& k : objects) {
    const std::string_view path = k.path;
    // Kernel modules are named from kallsyms, never opened.
    const bool module = path.find(".ko.") != std::string_view::npos ||
                        (path.size() > 3 && path.substr(path.size() - 3) == ".ko");
    if (is_file_backed_path(path) && !module)
      keys.emplace_back(std::string(path), trimmed_build_id(std::string(k.build_id)));
  }
  preloader_ = std::make_unique<ElfPreloader>([options = options_, keys = std::move(keys)] {
    std::vector<ElfPreloader::Job> jobs;
    for (const auto& [path, build_id] : keys)
      if (std::optional<ObjectCandidate> c = first_readable_candidate(options, build_id, path))
        jobs.push_back(ElfPreloader::Job{c->file, build_id, debug_search(options, *c)});
    return jobs;
  });
}

void SymbolCache::start_loading_kernel_symbols() {
  if (kernel_loaded_ || kernel_preload_) return;
  kernel_preload_ = std::make_unique<KernelPreload>();
  kernel_preload_->result = std::async(std::launch::async, load_kallsyms, options_);
}

void SymbolCache::load_kernel_symbols() {
  if (kernel_loaded_) return;
  kernel_loaded_ = true;
  // A preload's InputError (an unreadable --kallsyms) surfaces here, at the
  // first kernel lookup, as it would without the preload.
  std::unique_ptr<KernelPreload> preload = std::move(kernel_preload_);
  KernelLoad k = preload ? preload->result.get() : load_kallsyms(options_);
  kallsyms_ = std::move(k.table);
  kernel_status_.symbols = k.source.empty() ? 0 : kallsyms_.size();
  kernel_status_.source = std::move(k.source);
  kernel_status_.kptr_restricted = k.kptr_restricted;
  kernel_status_.problem = std::move(k.problem);
}

void SymbolCache::symbolize_kernel(uint64_t address, bool return_address, std::vector<SymbolizedFrame>& out) {
  ++kernel_status_.lookups;
  FrameKey key{uint64_t(return_address), address};
  const FrameSpan* span = keep_answers_ ? kernel_cache_.find(key) : nullptr;
  if (!span) {
    load_kernel_symbols();
    uint64_t lookup = address - (return_address && address > 0 ? 1 : 0);
    scratch_.clear();
    std::string_view name = ksymbols_.find(lookup);
    if (!name.empty()) {
      scratch_.push_back({display_name(name), true, false});
    } else if (const KernelSymbol* ks = kallsyms_.find(lookup)) {
      scratch_.push_back({kernel_symbol_name(*ks), true, false});
    } else {
      scratch_.push_back({kernel_unknown_, false, false});
    }
    bool unresolved = false;
    if (give_uncached(&unresolved, out)) {
      kernel_status_.unresolved += unresolved;
      return;
    }
    kernel_cache_.insert(key, store_frames(scratch_));
    span = kernel_cache_.find(key);
  }
  if (!span->head.resolved) ++kernel_status_.unresolved;
  append(*span, out);
}

std::string_view SymbolCache::kernel_symbol_name(const KernelSymbol& ks) {
  if (!kernel_names_) kernel_names_ = std::make_unique<KernelNames>();
  return kernel_names_->get(uint32_t(&ks - kallsyms_.symbols().data()), [&] { return display_name(ks.name); });
}

void SymbolCache::add_kernel_symbol(uint64_t start, uint64_t len, std::string_view name) {
  ksymbols_.add(start, len, name);
  kernel_status_.ksymbol_ranges = ksymbols_.size();
  kernel_cache_.clear();  // earlier answers may now be covered by the new range
}

void SymbolCache::symbolize_jit(int32_t pid, uint64_t address, bool return_address,
                                std::vector<SymbolizedFrame>& out) {
  FrameKey key{(uint64_t(uint32_t(pid)) << 3) | (uint64_t(return_address) << 2) | kKindJit, address};
  const FrameSpan* span = keep_answers_ ? frame_cache_.find(key) : nullptr;
  if (!span) {
    const Jit* jit = &jit_of(pid);
    uint64_t lookup = address - (return_address && address > 0 ? 1 : 0);
    std::string_view name = jit->ranges.find(lookup);
    scratch_.clear();
    if (!name.empty()) scratch_.push_back({display_name(name), true, false});
    else scratch_.push_back({jit->display, false, false});
    if (give_uncached(nullptr, out)) return;
    frame_cache_.insert(key, store_frames(scratch_));
    span = frame_cache_.find(key);
  }
  append(*span, out);
}

SymbolCache::Jit& SymbolCache::jit_of(int32_t pid) {
  auto& jit = jits_[pid];
  if (!jit) {
    jit = std::make_unique<Jit>();
    jit->path = options_.jit_map_dir + "/perf-" + std::to_string(pid) + ".map";
    jit->display = intern("[perf-" + std::to_string(pid) + ".map]");
    FileBytes text;
    std::string error;
    if (text.read(jit->path, &error)) parse_perf_map(text.view(), jit->ranges);
    else jit->problem = error;
  }
  return *jit;
}

bool SymbolCache::jit_names_nothing(int32_t pid) { return jit_of(pid).ranges.empty(); }

SymbolFreePages SymbolCache::symbol_free_pages(ObjectHandle h) const {
  const Object& o = *objects_.at(h);
  return o.elf ? o.elf->symbol_free_pages() : SymbolFreePages{nullptr, 0, true};
}

std::string_view SymbolCache::object_display_name(ObjectHandle h) const { return objects_.at(h)->display; }

std::string SymbolCache::resolved_elf_path(ObjectHandle h) const {
  const Object& o = *objects_.at(h);
  return o.elf ? o.elf->path() : std::string();
}

std::vector<ObjectStatus> SymbolCache::object_statuses() const {
  std::vector<ObjectStatus> out;
  out.reserve(objects_.size());
  for (const auto& o : objects_) {
    ObjectStatus s;
    s.path = o->path;
    s.found = o->elf != nullptr;
    if (o->elf) {
      s.opened_path = o->elf->path();
      s.debug_file = o->elf->debug_file();
      s.symtab_source = o->elf->symtab_source();
      s.has_debuginfo = o->elf->has_debuginfo();
      s.symbol_count = o->elf->real_symbol_count();
      s.has_symbols = s.symbol_count > 0;
    }
    s.build_id_hex = build_id_hex(!o->build_id.empty() || !o->elf ? o->build_id : o->elf->build_id());
    s.problem = o->problem;
    s.lookups = o->lookups;
    s.unresolved = o->unresolved;
    out.push_back(std::move(s));
  }
  return out;
}

KernelSymbolStatus SymbolCache::kernel_status() const { return kernel_status_; }

}  // namespace fg
