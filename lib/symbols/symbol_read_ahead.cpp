#include "symbols/symbol_read_ahead.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <cstring>

namespace fg {

namespace {

// The sections ElfObject::build_symbol_table and add_plt_symbols read
// (libdwfl picks .symtab, else .dynsym plus .gnu_debugdata's table).
bool wanted(const GElf_Shdr& sh, const char* name) {
  if (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM || sh.sh_type == SHT_STRTAB) return true;
  return name && (std::strcmp(name, ".rela.plt") == 0 || std::strcmp(name, ".gnu_debugdata") == 0);
}

}  // namespace

size_t read_ahead_symbol_sections(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  size_t asked = 0;
  elf_version(EV_CURRENT);
  // ELF_C_READ_MMAP: only the pages of the headers it parses are touched.
  if (Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr)) {
    size_t shstrndx = 0;
    const bool names = elf_kind(elf) == ELF_K_ELF && elf_getshdrstrndx(elf, &shstrndx) == 0;
    for (Elf_Scn* scn = nullptr; elf_kind(elf) == ELF_K_ELF && (scn = elf_nextscn(elf, scn));) {
      GElf_Shdr sh;
      if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS || sh.sh_size == 0) continue;
      if (!wanted(sh, names ? elf_strptr(elf, shstrndx, sh.sh_name) : nullptr)) continue;
      // A damaged header's range is only a hint: the kernel clamps it.
      if (::posix_fadvise(fd, off_t(sh.sh_offset), off_t(sh.sh_size), POSIX_FADV_WILLNEED) == 0) ++asked;
    }
    elf_end(elf);
  }
  ::close(fd);
  return asked;
}

SymbolReadAhead::SymbolReadAhead(std::function<std::vector<std::string>()> list_files)
    : done_(std::async(std::launch::async, [list_files = std::move(list_files)] {
        size_t elf_files = 0;
        for (const std::string& f : list_files()) elf_files += read_ahead_symbol_sections(f) > 0;
        return elf_files;
      })) {}

SymbolReadAhead::~SymbolReadAhead() { wait(); }

size_t SymbolReadAhead::wait() {
  if (done_.valid()) elf_files_ = done_.get();
  return elf_files_;
}

}  // namespace fg
