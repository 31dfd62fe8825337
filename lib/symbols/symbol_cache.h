// Symbolisation for the fold stage: finds each mapped object's file (perf build-id
// cache, --symfs, the recorded path; build-ids verified), its debuginfo, kernel
// symbols (kallsyms, KSYMBOL), JIT maps (/tmp/perf-PID.map), and turns addresses
// into perf-style frame names, each distinct lookup computed once.
//
// Thread-safety: a SymbolCache is not thread-safe (neither are the libdwfl handles
// inside it). Use one cache per thread, or hold one mutex around every call.
// Returned string_views stay valid until the cache is destroyed.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "folded/hash.h"        // header-only: the project's one hash family
#include "folded/open_table.h"  // and its one open-addressing table
#include "symbols/elf_object.h"
#include "symbols/kernel_symbols.h"
#include "symbols/named_ranges.h"
#include "symbols/elf_preloader.h"
#include "symbols/symbol_read_ahead.h"

namespace fg {

struct SymbolOptions {
  std::string symfs;             // like perf --symfs: tried as <symfs>/<path>
  std::string buildid_dir;       // perf's build-id cache; empty = $HOME/.debug
  bool demangle = true;          // C++/Rust names as perf prints them (no params)
  bool inline_frames = false;    // expand inlined callees from DWARF
  std::string kallsyms_path;     // explicit kallsyms file (wins over the others)
  bool use_proc_kallsyms = false;  // the recording's hostname+os release match this machine
  std::string kernel_build_id;   // raw bytes, from BUILD_ID "[kernel.kallsyms]", may be empty
  bool debuginfod = false;       // false: DEBUGINFOD_URLS is cleared (process-wide) so
                                 // libdwfl never queries a server
  std::string jit_map_dir = "/tmp";  // where perf-PID.map files are read from
  // An object's file pages are handed back to the kernel after this many
  // of its symbol names were read (each read faults in up to 64 KB of its
  // string table); 0 = never after the symbol table is built.
  uint32_t names_per_release = 32;
};

struct ObjectKey {
  std::string_view path;      // as recorded in MMAP/MMAP2 ("[vdso]" for the vdso)
  std::string_view build_id;  // raw bytes; may be empty
};

using ObjectHandle = uint32_t;

struct SymbolizedFrame {
  // Final display name: demangled without params, ';' -> ':'. When !resolved it is
  // the object's display name ("[libc.so.6]", "[kernel.kallsyms]", "[vdso]",
  // "[perf-123.map]"), the stackcollapse convention; callers may print "[unknown]".
  std::string_view name;
  bool resolved = false;
  bool inlined = false;  // an inlined callee (inline_frames on)
};

struct ObjectStatus {
  std::string path;          // recorded path
  std::string opened_path;   // file actually used; empty if none
  std::string build_id_hex;  // recorded build-id, else the opened file's
  std::string debug_file;    // separate debuginfo used, if any
  std::string symtab_source; // ".symtab", ".dynsym", ".dynsym+.gnu_debugdata", ...
  bool found = false;
  bool has_symbols = false;
  bool has_debuginfo = false;
  size_t symbol_count = 0;
  std::string problem;       // why it is (partly) unresolvable; "" if fine
  uint64_t lookups = 0, unresolved = 0;
};

struct KernelSymbolStatus {
  std::string source;        // file the symbols came from; empty if none
  size_t symbols = 0;
  size_t ksymbol_ranges = 0;
  bool kptr_restricted = false;
  std::string problem;
  uint64_t lookups = 0, unresolved = 0;
};

class SymbolCache {
 public:
  explicit SymbolCache(SymbolOptions options);
  ~SymbolCache();
  SymbolCache(const SymbolCache&) = delete;
  SymbolCache& operator=(const SymbolCache&) = delete;

  // Opens (once per distinct path + build-id) and returns a handle. Never throws for
  // bad files: they become unresolvable objects with a reason in object_statuses().
  ObjectHandle object(const ObjectKey& key);

  // §5.3: file offset (ip - map.start + map.pgoff) -> ELF vaddr over PT_LOAD.
  std::optional<uint64_t> file_offset_to_vaddr(ObjectHandle h, uint64_t file_offset);

  // Appends the frames for one address, outermost first (with inline_frames: the
  // function, then each inlined callee). return_address: look up address-1 (every
  // callchain entry but the first, non-activation unwound frames).
  void symbolize(ObjectHandle h, uint64_t file_offset, bool return_address,
                 std::vector<SymbolizedFrame>& out);
  // Same, for an address already in the object's ELF vaddr space (e.g. from libdwfl
  // with a zero bias, or after file_offset_to_vaddr).
  void symbolize_vaddr(ObjectHandle h, uint64_t vaddr, bool return_address,
                       std::vector<SymbolizedFrame>& out);
  void symbolize_kernel(uint64_t address, bool return_address, std::vector<SymbolizedFrame>& out);
  // Addresses in anonymous executable maps of pid: /tmp/perf-PID.map, read once.
  void symbolize_jit(int32_t pid, uint64_t address, bool return_address,
                     std::vector<SymbolizedFrame>& out);

  // Where no address of the object has a symbol: symbolize names every
  // address there by the object alone (unresolved). All of them when the
  // object's file was not found.
  SymbolFreePages symbol_free_pages(ObjectHandle h) const;
  // Whether pid has no perf-PID.map entries (it is read now if it was not):
  // symbolize_jit then names every address of pid by the map alone.
  bool jit_names_nothing(int32_t pid);

  // keep false: the caller keeps every answer itself, by the same key (the
  // fold's frame cache: object + file offset + return flag, kernel address,
  // JIT process + address), so symbolize, symbolize_kernel and symbolize_jit
  // compute each lookup without keeping a second copy (on a busy system-wide
  // recording that copy was 48 MB, 73 MB while its table doubled).
  // symbolize_vaddr always keeps its answers.
  void keep_answers(bool keep) { keep_answers_ = keep; }

  // KSYMBOL records (BPF programs etc.): consulted before kallsyms.
  void add_kernel_symbol(uint64_t start, uint64_t len, std::string_view name);
  // Loads kernel symbols now (otherwise on the first kernel lookup). Throws
  // fg::InputError when an explicit kallsyms_path is unreadable or malformed.
  void load_kernel_symbols();
  // Starts reading the kernel symbols on another thread (reading and parsing
  // /proc/kallsyms costs tens of ms); load_kernel_symbols() then waits for it.
  void start_loading_kernel_symbols();
  // Starts reading ahead, on another thread, the symbol tables of the files
  // these objects would be opened from (a recording's BUILD_ID list): for a
  // cold page cache (symbol_read_ahead.h). Output does not depend on it.
  void start_reading_ahead(const std::vector<ObjectKey>& objects);
  // Waits for the read-ahead; how many ELF files it covered (0 if none ran).
  size_t wait_for_read_ahead() { return read_ahead_ ? read_ahead_->wait() : 0; }
  // Starts opening these objects (the files open_object would pick first)
  // on another thread, in this order (elf_preloader.h): each is then taken
  // when first needed instead of being opened then. Output does not depend
  // on it. Only for objects the fold will need (no sample filters).
  void start_preloading(const std::vector<ObjectKey>& objects);
  // Objects opened by the preloader and taken (0 without one).
  size_t preloaded_objects() const { return preloader_ ? preloader_->taken() : 0; }

  std::string_view object_display_name(ObjectHandle h) const;  // "[libc.so.6]"
  std::string resolved_elf_path(ObjectHandle h) const;         // "" if unresolved
  std::vector<ObjectStatus> object_statuses() const;
  KernelSymbolStatus kernel_status() const;
  const SymbolOptions& options() const { return options_; }

  // Interns a string in the cache's arena (stable view, deduplicated).
  std::string_view intern(std::string_view s);

 private:
  struct Object;
  struct FrameKey {
    uint64_t a, b;
    bool operator==(const FrameKey& o) const { return a == o.a && b == o.b; }
  };
  // A cached answer: the first frame inline (most answers have one frame, so the
  // hot path touches one hash slot and nothing else), the rest in frames_.
  struct FrameSpan {
    SymbolizedFrame head;
    uint32_t first = 0, count = 0;  // frames_[first, first + count) hold frames 2..n
  };
  // Open-addressing (linear probing) map FrameKey -> FrameSpan: one cache line per
  // lookup, no node allocations; the hot path of every sample frame.
  class FrameTable {
   public:
    const FrameSpan* find(const FrameKey& k) const {
      const Slot* s = table_.find(hash(k), [&k](const Slot& x) { return x.key == k; });
      return s ? &s->value : nullptr;
    }
    void insert(const FrameKey& k, FrameSpan v) { table_.insert_new(hash(k), Slot{k, v}); }  // k must be absent
    void clear() { table_.clear(); }
    size_t size() const { return table_.size(); }

   private:
    struct Slot {
      FrameKey key;
      FrameSpan value;
    };
    static constexpr uint64_t kEmpty = ~uint64_t(0);
    static uint64_t hash(const FrameKey& k) { return detail::hash_pair(k.a, k.b); }
    struct Policy {
      static bool empty(const Slot& s) { return s.key.a == kEmpty && s.key.b == kEmpty; }
      static Slot empty_slot() { return Slot{{kEmpty, kEmpty}, FrameSpan{}}; }
      static uint64_t rehash(const Slot& s) { return hash(s.key); }
    };
    OpenTable<Slot, Policy> table_;
  };
  struct Jit;
  Jit& jit_of(int32_t pid);  // read on first use

  void append(const FrameSpan& span, std::vector<SymbolizedFrame>& out) const {
    out.push_back(span.head);
    if (span.count)
      out.insert(out.end(), frames_.begin() + span.first, frames_.begin() + span.first + span.count);
  }
  FrameSpan store_frames(const std::vector<SymbolizedFrame>& frames);
  FrameSpan compute_object_frames(Object& obj, uint64_t vaddr_or_none, bool have_vaddr);
  void object_frames(Object& obj, uint64_t vaddr_or_none, bool have_vaddr);  // into scratch_
  // Without keep_answers: appends scratch_ to out (and says whether its
  // first frame is unresolved) and returns true.
  bool give_uncached(bool* unresolved, std::vector<SymbolizedFrame>& out) const;
  std::string_view symbol_name(Object& obj, size_t index);
  std::string_view display_name(std::string_view raw_name);
  std::string_view kernel_symbol_name(const KernelSymbol& ks);  // display_name, once per symbol
  std::unique_ptr<Object> open_object(const ObjectKey& key);
  struct ObjectCandidate {
    std::string file, debug;  // the ELF, and a cached debug file beside it ("" = search)
  };
  std::vector<ObjectCandidate> candidate_files(const std::string& build_id, const std::string& path, bool vdso) const {
    return candidate_files(options_, build_id, path, vdso);
  }
  static std::vector<ObjectCandidate> candidate_files(const SymbolOptions& options, const std::string& build_id,
                                                      const std::string& path, bool vdso);
  void open_live_vdso(Object& obj, const DebugSearch& search, std::string& problems);
  static std::optional<ObjectCandidate> first_readable_candidate(const SymbolOptions& options,
                                                                const std::string& build_id, const std::string& path);
  // What libdwfl searches for candidate c's debuginfo.
  static DebugSearch debug_search(const SymbolOptions& options, const ObjectCandidate& c);
  // ElfObject::open, or the preloader's object for the same arguments.
  std::unique_ptr<ElfObject> open_elf(const std::string& file, const std::string& build_id, const DebugSearch& search,
                                      std::string* problem);

  SymbolOptions options_;
  bool keep_answers_ = true;
  std::vector<std::unique_ptr<Object>> objects_;
  std::unordered_map<std::string, ObjectHandle> object_index_;

  std::vector<SymbolizedFrame> frames_;  // all cached frame lists, back to back
  FrameTable frame_cache_;
  FrameTable kernel_cache_;  // cleared by KSYMBOL

  // Interning arena.
  std::vector<std::unique_ptr<char[]>> arena_blocks_;
  size_t arena_used_ = 0, arena_cap_ = 0;
  std::unordered_set<std::string_view> interned_;

  // Kernel.
  bool kernel_loaded_ = false;
  struct KernelPreload;
  std::unique_ptr<KernelPreload> kernel_preload_;
  std::unique_ptr<SymbolReadAhead> read_ahead_;
  std::unique_ptr<ElfPreloader> preloader_;
  KallsymsTable kallsyms_;
  struct KernelNames;  // kallsyms symbols' display names, by index
  std::unique_ptr<KernelNames> kernel_names_;
  NamedRanges ksymbols_;
  KernelSymbolStatus kernel_status_;
  std::string_view kernel_unknown_;

  std::unordered_map<int32_t, std::unique_ptr<Jit>> jits_;
  std::vector<std::string> temp_files_;  // live vdso copies, removed by the destructor
  std::vector<SymbolizedFrame> scratch_;
  std::vector<std::string> inline_scratch_;
};

}  // namespace fg
