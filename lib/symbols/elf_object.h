// One opened ELF object (executable, shared library, vdso image) with its debuginfo,
// a sorted function-symbol table built once, file-offset -> vaddr translation over
// PT_LOAD, and inline-scope lookup. Used through SymbolCache; not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <elfutils/libdw.h>

#include "symbols/elf_symbol.h"
#include "symbols/symbol_free_pages.h"

#include <unordered_map>

struct Dwfl;
struct Dwfl_Module;

namespace fg {

// Where libdwfl looks for separate debuginfo of an object.
struct DebugSearch {
  // Colon-separated, libdwfl's Dwfl_Callbacks::debuginfo_path format
  // (":.debug:/usr/lib/debug"); empty = libdwfl's default.
  std::string debuginfo_path;
  // perf's build-id cache copy of the debug file (~/.debug/<path>/<bid>/debug), tried
  // first when it exists and its build-id matches.
  std::string cached_debug_file;
  // Whether names are shown demangled: perf compares same-address aliases
  // by the names it shows (build_symbol_table).
  bool demangle = true;
};

struct DwflCallbackState;

// An out-of-line function's pc range in a CU (for the inline-chain index).
struct CuSubprogram {
  uint64_t low, high;
  Dwarf_Die die;
};

class ElfObject {
 public:
  // Opens `path` and its debuginfo. When `expected_build_id` (raw bytes) is not
  // empty, an object whose GNU build-id differs (or that has none) is rejected.
  // Returns nullptr with `*problem` set ("build-id mismatch: file has ab12..,
  // recording has cd34..", "not an ELF file", ...) on failure; never throws for bad
  // files.
  static std::unique_ptr<ElfObject> open(const std::string& path, std::string_view expected_build_id,
                                         const DebugSearch& search, std::string* problem);
  ~ElfObject();
  ElfObject(const ElfObject&) = delete;
  ElfObject& operator=(const ElfObject&) = delete;

  const std::string& path() const { return path_; }
  const std::string& build_id() const { return build_id_; }  // raw bytes; may be empty
  bool is_exec() const { return is_exec_; }                  // ET_EXEC (else ET_DYN)

  // perf notes §5.3: the PT_LOAD with p_offset <= off < p_offset + p_filesz
  // (executable segments preferred), then off - p_offset + p_vaddr.
  std::optional<uint64_t> file_offset_to_vaddr(uint64_t file_offset) const;
  const std::vector<LoadSegment>& segments() const { return segments_; }

  // The function symbol containing vaddr, or nullptr (past a sized symbol's end,
  // before the first symbol, or no symbols).
  const ElfSymbol* find_symbol(uint64_t vaddr) const;
  const std::vector<ElfSymbol>& symbols() const { return symbols_; }
  // Where no address has a symbol (built at load, from symbols() and segments()).
  SymbolFreePages symbol_free_pages() const {
    return SymbolFreePages{symbol_free_.data(), symbol_free_.size() * 64, false};  // bits past the last page are clear
  }
  // Symbols from symbol tables, i.e. not counting synthesized PLT entries.
  size_t real_symbol_count() const { return real_symbols_; }

  // Names (raw: linkage name when DWARF has one, else DW_AT_name) of the inlined
  // callees at vaddr, outermost first; empty without DWARF or inlining.
  void inline_chain(uint64_t vaddr, std::vector<std::string>& out) const;

  // Whether DWARF was found. The first call loads it (libdw then decompresses
  // the .debug_* sections, tens of ms for libc's debuginfo): plain symbol
  // lookups never need it, only inline frames and `fgtool info`.
  bool has_debuginfo() const;
  // Path of the separate debug file libdwfl used, if any (complete after
  // has_debuginfo()).
  const std::string& debug_file() const;
  // Where the symbol table came from, e.g. ".symtab", ".dynsym", ".dynsym+.gnu_debugdata".
  const std::string& symtab_source() const { return symtab_source_; }

  // Hands the file pages read since load() (symbol names, as they are
  // looked up) back to the kernel again, as load() did after building the
  // symbol table; later reads fault them back in from the page cache.
  void release_mapped_pages() const;

 private:
  ElfObject() = default;
  bool load(std::string_view expected_build_id, std::string* problem);
  // load()'s steps: the file's ELF header, build-id and PT_LOAD segments
  // (read without libdwfl), then the libdwfl module for symbols and DWARF.
  bool read_elf_headers(std::string* problem);
  bool report_to_dwfl(std::string* problem);
  // Returns the Elfs it read (load() may release their mappings).
  std::vector<Elf*> build_symbol_table();
  // The mappings of the Elfs build_symbol_table read that may be released
  // (file-backed, whole): checked once, at load.
  struct MappedFile {
    char* start;
    size_t size;
  };
  std::vector<MappedFile> releasable_;
  void note_symtab_source(Elf* main_elf, bool saw_aux);
  void add_plt_symbols(std::vector<ElfSymbol>& out);
  const std::vector<CuSubprogram>& cu_subprograms(Dwarf_Die* cu) const;

  std::string path_;
  std::string build_id_;
  std::string debug_file_;
  std::string symtab_source_;
  bool is_exec_ = false;
  mutable bool dwarf_checked_ = false, has_dwarf_ = false;
  std::vector<LoadSegment> segments_;
  std::vector<ElfSymbol> symbols_;
  size_t real_symbols_ = 0;
  std::vector<uint64_t> symbol_free_;  // SymbolFreePages::bits
  uint64_t file_size_ = 0;  // at load
  Dwfl* dwfl_ = nullptr;
  Dwfl_Module* module_ = nullptr;
  // Dwfl_Callbacks and what they read; libdwfl keeps pointers to it, so it lives on
  // the heap for the object's lifetime.
  std::unique_ptr<DwflCallbackState> callback_state_;
  // CU DIE offset -> its subprograms sorted by low pc (built on first use).
  mutable std::unordered_map<uint64_t, std::vector<CuSubprogram>> cu_index_;
};

}  // namespace fg
