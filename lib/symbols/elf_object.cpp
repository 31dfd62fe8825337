#include "symbols/elf_object.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "folded/prefetch.h"
#include "symbols/alias_choice.h"
#include "symbols/build_id.h"
#include "symbols/debuginfo_search.h"
#include "symbols/symbol_names.h"

namespace fg {

struct DwflCallbackState {
  Dwfl_Callbacks callbacks{};
  std::string debuginfo_path;
  char* debuginfo_path_ptr = nullptr;
  DebugSearch search;
  std::string used_debug_file;
};

namespace {

int find_debuginfo(Dwfl_Module* mod, void** userdata, const char* modname, Dwarf_Addr base,
                   const char* file_name, const char* debuglink_file, GElf_Word debuglink_crc,
                   char** debuginfo_file_name) {
  auto* state = userdata ? static_cast<DwflCallbackState*>(*userdata) : nullptr;
  if (state && !state->search.cached_debug_file.empty()) {
    const unsigned char* bits = nullptr;
    GElf_Addr vaddr = 0;
    int n = dwfl_module_build_id(mod, &bits, &vaddr);
    if (n > 0) {
      std::string want(reinterpret_cast<const char*>(bits), static_cast<size_t>(n));
      int fd = open_if_build_id(state->search.cached_debug_file, want);
      if (fd >= 0) {
        *debuginfo_file_name = strdup(state->search.cached_debug_file.c_str());
        state->used_debug_file = state->search.cached_debug_file;
        return fd;
      }
    }
  }
  int fd = find_local_debuginfo(mod, userdata, modname, base, file_name, debuglink_file, debuglink_crc,
                                debuginfo_file_name, state ? state->debuginfo_path.c_str() : nullptr);
  if (fd >= 0 && state && *debuginfo_file_name) state->used_debug_file = *debuginfo_file_name;
  return fd;
}

// perf's choose_best_symbol (compare_aliases) with the default
// arch__choose_best_symbol, for a run of symbols at one address in table
// order: the kept one meets the next and the winner stays. The name rules
// compare the names perf shows: demangled, without parameters, unless
// --no-demangle (perf demangles as it loads a table); chromium's operator
// new[] (_Znam) is kept over its alias operator new (_Znwm) as the longer
// name. A full tie keeps the earlier symbol: libc's
// pthread_sigmask@GLIBC_2.2.5 (symbol 7838 of its .symtab) over
// pthread_sigmask@@GLIBC_2.32 (8991).
//
// Names are made only where the kinds (sized, weak, global) tie, and the
// kept symbol's once per run: demangling both names of every pair was 36 ms
// of node's 64 ms table (86 K symbols, 7.7 K aliases) on a busy fold.
class AliasRun {
 public:
  explicit AliasRun(bool demangle) : demangle_(demangle) {}
  // A new run of aliases starts.
  void start() { kept_shown_.clear(); }
  // Whether `kept` stays over `next`, the next alias in table order.
  bool keeps(const ElfSymbol& kept, const ElfSymbol& next) {
    int order = compare_alias_kinds(facts(kept), facts(next));
    next_shown_.clear();
    if (order == 0 && demangle_ && ctor_dtor_variants(kept.name, next.name)) return true;  // a full tie
    if (order == 0) {
      if (kept_shown_.empty()) kept_shown_ = shown(kept);
      next_shown_ = shown(next);
      order = compare_alias_names(kept_shown_, next_shown_);
      // A full tie keeps the earlier, but syscall aliases lose.
      if (order == 0)
        order = kept_shown_.rfind("SyS", 0) != 0 && kept_shown_.rfind("compat_SyS", 0) != 0 ? 1 : -1;
    }
    if (order < 0) kept_shown_ = std::move(next_shown_);  // empty when the kinds decided: made if needed
    return order > 0;
  }

 private:
  static AliasFacts facts(const ElfSymbol& s) {
    return AliasFacts{s.sized, s.binding == STB_WEAK, s.binding == STB_GLOBAL, {}};
  }
  std::string shown(const ElfSymbol& s) const { return demangle_ ? demangle_without_params(s.name) : std::string(s.name); }

  bool demangle_;
  std::string kept_shown_, next_shown_;
};

// Sorts a symbol table by address and keeps one symbol per address, as
// perf's symbols__fixup_duplicate does: of each address's aliases, in table
// order (perf inserts them so into its tree), the one AliasRun keeps.
void sort_keeping_perfs_aliases(std::vector<ElfSymbol>& all, bool demangle) {
  for (size_t i = 0; i < all.size(); ++i) all[i].table_index = uint32_t(i);
  sort_symbols_by_start(all);
  AliasRun run(demangle);
  size_t kept = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    if (kept && all[kept - 1].start == all[i].start) {
      if (!run.keeps(all[kept - 1], all[i])) all[kept - 1] = all[i];
      continue;
    }
    all[kept++] = all[i];
    run.start();
  }
  all.resize(kept);
  all.shrink_to_fit();
}

// Hands the pages of libelf's mapping of a file back to the kernel once the
// symbol table is built. Building it reads every symbol and name, and those
// pages stayed in the process's RSS: 70-90 MB of a busy system-wide fold
// (hundreds of objects, perf's ~/.debug copies with full .symtab). Later
// lookups fault back in only the names they use, from the page cache.
//
// Safe only for a read-only use of a private file mapping: libdwfl maps
// files MAP_PRIVATE (ELF_C_READ_MMAP_PRIVATE) and writes into the mapping
// only when it relocates an ET_REL file, which is never opened here (load()
// accepts ET_EXEC and ET_DYN only); MADV_DONTNEED then drops clean pages
// that read back the same. On anonymous memory it would zero them, so an Elf
// that is not such a mapping (an image libdwfl decompressed or read into the
// heap, e.g. .gnu_debugdata) is left alone: /proc/self/maps must show one
// file-backed mapping (non-zero inode) holding the whole image. (libelf maps
// it writable, MAP_PRIVATE, so the permissions say nothing.)
// (MADV_WILLNEED cannot tell: with CONFIG_SWAP it succeeds on anonymous memory.)
bool whole_file_mapping(uintptr_t start, uintptr_t end) {
  FILE* maps = std::fopen("/proc/self/maps", "re");
  if (!maps) return false;
  bool found = false;
  char line[512];
  while (std::fgets(line, sizeof line, maps)) {
    unsigned long lo = 0, hi = 0, inode = 0;
    // "lo-hi perms offset dev inode path"
    if (std::sscanf(line, "%lx-%lx %*s %*s %*s %lu", &lo, &hi, &inode) != 3) continue;
    if (start < lo || start >= hi) continue;
    found = end <= hi && inode != 0;
    break;
  }
  std::fclose(maps);
  return found;
}

// The Elf's whole-file mapping, rounded to pages, if it may be released;
// else {nullptr, 0}.
std::pair<char*, size_t> releasable_mapping(Elf* elf) {
  size_t size = 0;
  char* raw = elf ? elf_rawfile(elf, &size) : nullptr;
  const uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
  if (!raw || size < 16 * page || uintptr_t(raw) % page != 0) return {nullptr, 0};
  if (!whole_file_mapping(uintptr_t(raw), uintptr_t(raw) + size)) return {nullptr, 0};
  return {raw, (size + page - 1) & ~(page - 1)};
}

}  // namespace

std::unique_ptr<ElfObject> ElfObject::open(const std::string& path, std::string_view expected_build_id,
                                           const DebugSearch& search, std::string* problem) {
  static const bool libelf_ready = elf_version(EV_CURRENT) != EV_NONE;
  if (!libelf_ready) {
    if (problem) *problem = "libelf: version mismatch";
    return nullptr;
  }
  std::unique_ptr<ElfObject> obj(new ElfObject());
  obj->path_ = path;
  obj->callback_state_ = std::make_unique<DwflCallbackState>();
  obj->callback_state_->search = search;
  std::string ignored;
  if (!obj->load(expected_build_id, problem ? problem : &ignored)) return nullptr;
  return obj;
}

ElfObject::~ElfObject() {
  if (dwfl_) dwfl_end(dwfl_);
}

bool ElfObject::load(std::string_view expected_build_id, std::string* problem) {
  if (!read_elf_headers(problem)) return false;
  // perf.data BUILD_ID records may carry the id zero-padded to 24 bytes.
  std::string_view want = expected_build_id;
  if (want.size() > build_id_.size() && want.substr(0, build_id_.size()) == build_id_ &&
      want.find_first_not_of('\0', build_id_.size()) == std::string_view::npos)
    want = want.substr(0, build_id_.size());
  if (!want.empty() && build_id_ != want) {
    *problem = build_id_.empty()
                   ? "build-id mismatch: " + path_ + " has no build-id, recording has " +
                         build_id_hex(expected_build_id)
                   : "build-id mismatch: " + path_ + " has " + build_id_hex(build_id_) +
                         ", recording has " + build_id_hex(expected_build_id);
    return false;
  }

  if (!report_to_dwfl(problem)) return false;
  for (Elf* e : build_symbol_table()) {
    const auto [start, size] = releasable_mapping(e);
    if (start) releasable_.push_back(MappedFile{start, size});
  }
  debug_file_ = callback_state_->used_debug_file;
  release_mapped_pages();
  symbol_free_ = symbol_free_page_bits(symbols_, segments_, file_size_);
  return true;
}

// The mappings stay valid until dwfl_end (~ElfObject): the Elfs are the
// libdwfl module's files, reported once in report_to_dwfl and freed only with
// the Dwfl. (A range unmapped and reused by anonymous memory would be zeroed.)
void ElfObject::release_mapped_pages() const {
  for (const MappedFile& m : releasable_) madvise(m.start, m.size, MADV_DONTNEED);
}

bool ElfObject::read_elf_headers(std::string* problem) {
  // Check the file before libdwfl sees it: a clear reason for missing / non-ELF
  // files, and the build-id check without building anything.
  struct stat st {};
  if (::stat(path_.c_str(), &st) != 0) {
    *problem = "cannot open " + path_ + ": " + std::strerror(errno);
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    *problem = path_ + ": not a regular file";
    return false;
  }
  int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *problem = "cannot open " + path_ + ": " + std::strerror(errno);
    return false;
  }
  // Read, not mapped: see read_ahead_symbol_sections (headers only; no unmap
  // and its TLB flush on every core at elf_end).
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  GElf_Ehdr ehdr;
  if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &ehdr)) {
    *problem = path_ + ": not an ELF file" + (elf ? "" : std::string(" (") + elf_errmsg(-1) + ")");
    if (elf) elf_end(elf);
    ::close(fd);
    return false;
  }
  build_id_ = raw_build_id_of(elf);
  file_size_ = uint64_t(st.st_size);
  is_exec_ = ehdr.e_type == ET_EXEC;
  bool type_ok = ehdr.e_type == ET_EXEC || ehdr.e_type == ET_DYN;
  size_t phnum = 0;
  if (type_ok && elf_getphdrnum(elf, &phnum) == 0) {
    for (size_t i = 0; i < phnum; ++i) {
      GElf_Phdr ph;
      if (!gelf_getphdr(elf, static_cast<int>(i), &ph) || ph.p_type != PT_LOAD) continue;
      segments_.push_back({ph.p_offset, ph.p_filesz, ph.p_vaddr, (ph.p_flags & PF_X) != 0});
    }
  }
  elf_end(elf);
  ::close(fd);
  if (!type_ok) {
    *problem = path_ + ": ELF type " + std::to_string(ehdr.e_type) + " is not an executable or shared object";
    return false;
  }
  if (segments_.empty()) {
    *problem = path_ + ": no PT_LOAD segments (truncated or corrupt ELF?)";
    return false;
  }
  return true;
}

bool ElfObject::report_to_dwfl(std::string* problem) {
  DwflCallbackState& cs = *callback_state_;
  cs.debuginfo_path = cs.search.debuginfo_path;
  cs.debuginfo_path_ptr = cs.debuginfo_path.empty() ? nullptr : cs.debuginfo_path.data();
  cs.callbacks.find_elf = nullptr;
  cs.callbacks.find_debuginfo = find_debuginfo;
  cs.callbacks.section_address = dwfl_offline_section_address;
  cs.callbacks.debuginfo_path = &cs.debuginfo_path_ptr;
  dwfl_ = dwfl_begin(&cs.callbacks);
  if (!dwfl_) {
    *problem = std::string("dwfl_begin: ") + dwfl_errmsg(-1);
    return false;
  }
  dwfl_report_begin(dwfl_);
  // Base 0 with add_p_vaddr: bias 0, so module addresses are ELF vaddrs (§5.3).
  module_ = dwfl_report_elf(dwfl_, path_.c_str(), path_.c_str(), -1, 0, true);
  dwfl_report_end(dwfl_, nullptr, nullptr);
  if (!module_) {
    *problem = path_ + ": " + dwfl_errmsg(-1);
    return false;
  }
  void** userdata = nullptr;
  dwfl_module_info(module_, &userdata, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
  if (userdata) *userdata = &cs;
  return true;
}

bool ElfObject::has_debuginfo() const {
  if (!dwarf_checked_) {
    dwarf_checked_ = true;
    Dwarf_Addr bias = 0;
    has_dwarf_ = module_ && dwfl_module_getdwarf(module_, &bias) != nullptr;
  }
  return has_dwarf_;
}

const std::string& ElfObject::debug_file() const {
  has_debuginfo();  // the debug file may only be found while looking for DWARF
  const std::string& used = callback_state_->used_debug_file;
  return used.empty() ? debug_file_ : used;
}

std::vector<Elf*> ElfObject::build_symbol_table() {
  int n = dwfl_module_getsymtab(module_);
  std::vector<Elf*> symbol_elves;
  if (Dwarf_Addr b; Elf* e = dwfl_module_getelf(module_, &b)) symbol_elves.push_back(e);
  bool saw_aux = false;
  Elf* main_elf = nullptr;
  {
    Dwarf_Addr b;
    main_elf = dwfl_module_getelf(module_, &b);
  }
  // Sized once and deduplicated in place into symbols_: a push_back-grown
  // table and its copy were up to three times the symbols (libtorch's
  // tables: 25 MB of a busy fold's peak).
  std::vector<ElfSymbol> all;
  all.reserve(n > 1 ? size_t(n) : 0);
  std::vector<Elf*> from;
  for (int i = 1; i < n; ++i) {
    GElf_Sym sym;
    GElf_Addr addr = 0;
    GElf_Word shndx = 0;
    Elf* elf = nullptr;
    Dwarf_Addr bias = 0;
    const char* name = dwfl_module_getsym_info(module_, i, &sym, &addr, &shndx, &elf, &bias);
    if (!name || shndx == SHN_UNDEF || shndx == SHN_ABS) continue;  // empty names: below
    int type = GELF_ST_TYPE(sym.st_info);
    if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE) continue;
    if (!elf) continue;
    Elf_Scn* scn = elf_getscn(elf, shndx);
    GElf_Shdr shdr;
    if (!scn || !gelf_getshdr(scn, &shdr) || !(shdr.sh_flags & SHF_ALLOC)) continue;
    // perf keeps untyped labels only in text sections (elf_sym__is_label + elf_sec__is_text).
    if (type == STT_NOTYPE && !(shdr.sh_flags & SHF_EXECINSTR)) continue;
    ElfSymbol s;
    // Until the table is sorted, table_index says which of `from` (the
    // files symbols came from: the main one, a debug or MiniDebugInfo one)
    // this symbol's is; only named symbols count (below).
    size_t file = std::find(from.begin(), from.end(), elf) - from.begin();
    if (file == from.size()) from.push_back(elf);
    s.table_index = uint32_t(file);
    s.start = addr;
    s.sized = sym.st_size > 0;
    s.end = addr + sym.st_size;
    s.name = name;
    s.binding = static_cast<uint8_t>(GELF_ST_BIND(sym.st_info));
    all.push_back(s);
    prefetch_for_read(name);
  }
  // Symbols without a name are dropped here, not as they are read: reading
  // each name's first byte there waited for memory (a string table read out
  // of order), 60% of this function's own time; by now the prefetched
  // lines have mostly arrived.
  all.erase(std::remove_if(all.begin(), all.end(), [](const ElfSymbol& s) { return !*s.name; }), all.end());
  std::vector<bool> file_used(from.size());
  for (const ElfSymbol& s : all) file_used[s.table_index] = true;
  for (size_t file = 0; file < from.size(); ++file) {
    if (!file_used[file]) continue;
    if (from[file] != main_elf) saw_aux = true;
    if (std::find(symbol_elves.begin(), symbol_elves.end(), from[file]) == symbol_elves.end())
      symbol_elves.push_back(from[file]);
  }
  note_symtab_source(main_elf, saw_aux);
  add_plt_symbols(all);  // after the table's own symbols: same-address ties prefer those
  sort_keeping_perfs_aliases(all, callback_state_->search.demangle);
  symbols_ = std::move(all);
  real_symbols_ = 0;
  for (const ElfSymbol& s : symbols_) real_symbols_ += !s.plt;
  // symbols__fixup_end: an unsized symbol extends to the next one's start.
  for (size_t i = 0; i < symbols_.size(); ++i) {
    ElfSymbol& s = symbols_[i];
    if (s.sized) continue;
    if (i + 1 < symbols_.size()) s.end = symbols_[i + 1].start;
    else s.end = ((s.start + 4095) & ~uint64_t(4095)) + 4096;
  }
  return symbol_elves;
}

// Which table libdwfl picked, for `fgtool info`. saw_aux: named symbols
// came from another file than the main one.
void ElfObject::note_symtab_source(Elf* main_elf, bool saw_aux) {
  bool saw_dynsym = false, saw_symtab = false;
  if (main_elf) {
    Elf_Scn* scn = nullptr;
    while ((scn = elf_nextscn(main_elf, scn))) {
      GElf_Shdr sh;
      if (!gelf_getshdr(scn, &sh)) continue;
      if (sh.sh_type == SHT_SYMTAB) saw_symtab = true;
      if (sh.sh_type == SHT_DYNSYM) saw_dynsym = true;
    }
  }
  if (saw_symtab) symtab_source_ = ".symtab";
  else if (saw_aux) symtab_source_ = callback_state_->used_debug_file.empty() ? ".dynsym+.gnu_debugdata" : "debug file .symtab";
  else symtab_source_ = saw_dynsym ? ".dynsym" : "none";
}

// perf 6.1's dso__synthesize_plt_symbols: one `name@plt` per .rela.plt entry, in
// order, after the .plt header entry; also .plt.sec (IBT), which perf 6.3+ handles.
void ElfObject::add_plt_symbols(std::vector<ElfSymbol>& out) {
  Dwarf_Addr b;
  Elf* elf = dwfl_module_getelf(module_, &b);
  size_t shstrndx = 0;
  if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0) return;
  Elf_Scn* rel_scn = nullptr;
  GElf_Shdr rel{}, plt{}, plt_sec{};
  bool have_plt = false, have_plt_sec = false;
  for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf, scn));) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh)) continue;
    const char* name = elf_strptr(elf, shstrndx, sh.sh_name);
    if (!name) continue;
    if (std::strcmp(name, ".rela.plt") == 0 && sh.sh_type == SHT_RELA) {
      rel_scn = scn;
      rel = sh;
    } else if (std::strcmp(name, ".plt") == 0) {
      plt = sh;
      have_plt = true;
    } else if (std::strcmp(name, ".plt.sec") == 0) {
      plt_sec = sh;
      have_plt_sec = true;
    }
  }
  if (!rel_scn || !have_plt || rel.sh_entsize == 0) return;
  Elf_Scn* dynsym_scn = elf_getscn(elf, rel.sh_link);
  GElf_Shdr dynsym;
  if (!dynsym_scn || !gelf_getshdr(dynsym_scn, &dynsym) || dynsym.sh_type != SHT_DYNSYM) return;
  Elf_Data* rel_data = elf_getdata(rel_scn, nullptr);
  Elf_Data* sym_data = elf_getdata(dynsym_scn, nullptr);
  if (!rel_data || !sym_data) return;
  uint64_t entry = plt.sh_entsize ? plt.sh_entsize : 16;
  uint64_t addr = plt.sh_addr + entry;  // skip the PLT0 header
  uint64_t limit = plt.sh_addr + plt.sh_size;
  if (have_plt_sec) {
    entry = 16;
    addr = plt_sec.sh_addr;
    limit = plt_sec.sh_addr + plt_sec.sh_size;
  }
  size_t n = rel.sh_size / rel.sh_entsize;
  // At most one per relocation the file holds and per PLT slot (hostile
  // section sizes must not reserve more).
  out.reserve(out.size() + std::min<uint64_t>(std::min<uint64_t>(n, rel_data->d_size / rel.sh_entsize),
                                              limit > addr ? (limit - addr) / entry : 0));
  for (size_t i = 0; i < n && addr + entry <= limit; ++i, addr += entry) {
    GElf_Rela rela;
    GElf_Sym sym;
    if (!gelf_getrela(rel_data, static_cast<int>(i), &rela)) break;
    const char* name = "";
    if (gelf_getsym(sym_data, static_cast<int>(GELF_R_SYM(rela.r_info)), &sym)) {
      const char* s = elf_strptr(elf, dynsym.sh_link, sym.st_name);
      if (s) name = s;
    }
    ElfSymbol ps;
    ps.start = addr;
    ps.end = addr + entry;
    ps.name = name;
    ps.binding = STB_GLOBAL;
    ps.sized = true;
    ps.plt = true;
    out.push_back(ps);
  }
}

std::optional<uint64_t> ElfObject::file_offset_to_vaddr(uint64_t off) const {
  const LoadSegment* hit = nullptr;
  for (const LoadSegment& seg : segments_) {
    if (off >= seg.offset && off - seg.offset < seg.filesz) {
      if (seg.executable) return off - seg.offset + seg.vaddr;
      if (!hit) hit = &seg;
    }
  }
  if (hit) return off - hit->offset + hit->vaddr;
  return std::nullopt;
}

const ElfSymbol* ElfObject::find_symbol(uint64_t vaddr) const {
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), vaddr,
                             [](uint64_t v, const ElfSymbol& s) { return v < s.start; });
  if (it == symbols_.begin()) return nullptr;
  const ElfSymbol& s = *(it - 1);
  if (vaddr < s.end || vaddr == s.start) return &s;
  // A sized symbol may nest inside a bigger one that starts earlier (hand-written
  // asm, PLT entries): look back a little for a symbol that still contains vaddr.
  for (int back = 2; back <= 8 && it - back >= symbols_.begin(); ++back) {
    const ElfSymbol& o = *(it - back);
    if (vaddr < o.end) return &o;
  }
  return nullptr;
}

namespace {

const char* die_function_name(Dwarf_Die* die) {
  Dwarf_Attribute attr;
  for (int at : {DW_AT_linkage_name, DW_AT_MIPS_linkage_name, DW_AT_name}) {
    if (dwarf_attr_integrate(die, at, &attr)) {
      if (const char* name = dwarf_formstring(&attr)) return name;
    }
  }
  return "";
}

// Out-of-line subprograms of a CU, also inside namespaces and classes.
void collect_subprograms(Dwarf_Die* parent, std::vector<CuSubprogram>& out, int depth) {
  Dwarf_Die child;
  if (depth > 16 || dwarf_child(parent, &child) != 0) return;
  do {
    int tag = dwarf_tag(&child);
    if (tag == DW_TAG_subprogram) {
      Dwarf_Addr base, start, end;
      ptrdiff_t off = 0;
      while ((off = dwarf_ranges(&child, off, &base, &start, &end)) > 0)
        if (end > start) out.push_back({start, end, child});
    } else if (tag == DW_TAG_namespace || tag == DW_TAG_class_type || tag == DW_TAG_structure_type ||
               tag == DW_TAG_union_type) {
      collect_subprograms(&child, out, depth + 1);
    }
  } while (dwarf_siblingof(&child, &child) == 0);
}

}  // namespace

const std::vector<CuSubprogram>& ElfObject::cu_subprograms(Dwarf_Die* cu) const {
  auto key = static_cast<uint64_t>(dwarf_dieoffset(cu));
  auto it = cu_index_.find(key);
  if (it != cu_index_.end()) return it->second;
  std::vector<CuSubprogram> subs;
  collect_subprograms(cu, subs, 0);
  std::sort(subs.begin(), subs.end(), [](const CuSubprogram& a, const CuSubprogram& b) { return a.low < b.low; });
  return cu_index_.emplace(key, std::move(subs)).first->second;
}

void ElfObject::inline_chain(uint64_t vaddr, std::vector<std::string>& out) const {
  out.clear();
  if (!has_debuginfo()) return;
  Dwarf_Addr bias = 0;
  Dwarf_Die* cu = dwfl_module_addrdie(module_, vaddr, &bias);
  if (!cu) return;
  Dwarf_Addr pc = vaddr - bias;
  // The subprogram containing pc, from a per-CU index (dwarf_getscopes would walk
  // the whole CU for every address).
  const std::vector<CuSubprogram>& subs = cu_subprograms(cu);
  auto it = std::upper_bound(subs.begin(), subs.end(), pc,
                             [](Dwarf_Addr v, const CuSubprogram& s) { return v < s.low; });
  const CuSubprogram* sub = nullptr;
  // By index: with no subprograms in the CU, `it - back` would step before
  // an empty vector's null begin() and pass the comparison (a crash).
  for (size_t i = size_t(it - subs.begin()), back = 1; back <= 4 && back <= i; ++back) {
    if (pc < subs[i - back].high) {
      sub = &subs[i - back];
      break;
    }
  }
  if (!sub) return;
  // Descend through the scopes containing pc; each inlined_subroutine on the way
  // is a frame, outermost first.
  Dwarf_Die scope = sub->die;
  for (int depth = 0; depth < 64; ++depth) {
    Dwarf_Die child;
    bool descended = false;
    if (dwarf_child(&scope, &child) == 0) {
      do {
        int tag = dwarf_tag(&child);
        if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_lexical_block && tag != DW_TAG_try_block &&
            tag != DW_TAG_catch_block)
          continue;
        if (dwarf_haspc(&child, pc) != 1) continue;
        if (tag == DW_TAG_inlined_subroutine) out.emplace_back(die_function_name(&child));
        scope = child;
        descended = true;
        break;
      } while (dwarf_siblingof(&child, &child) == 0);
    }
    if (!descended) break;
  }
}

}  // namespace fg
