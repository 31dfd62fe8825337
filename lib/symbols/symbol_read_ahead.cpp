#include "symbols/symbol_read_ahead.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace fg {

namespace {

// The sections ElfObject::build_symbol_table and add_plt_symbols read
// (libdwfl picks .symtab, else .dynsym plus .gnu_debugdata's table).
bool wanted(const GElf_Shdr& sh, const char* name) {
  if (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM || sh.sh_type == SHT_STRTAB) return true;
  return name && (std::strcmp(name, ".rela.plt") == 0 || std::strcmp(name, ".gnu_debugdata") == 0);
}

constexpr off_t kEndBytes = 1 << 20;

}  // namespace

size_t read_ahead_symbol_sections(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  size_t asked = 0;
  elf_version(EV_CURRENT);
  // ELF_C_READ: libelf preads only the headers and the section names it
  // parses, and maps nothing. (With ELF_C_READ_MMAP, each elf_end unmapped
  // the file: a TLB flush on every core the fold's threads run on. Here and
  // in ElfObject's header check, that was 1-2% of a busy-machine fold's CPU.)
  if (Elf* elf = elf_begin(fd, ELF_C_READ, nullptr)) {
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

// The first and last kEndBytes of a file, without waiting for them.
static void read_ahead_ends(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    const off_t end = std::min<off_t>(st.st_size, kEndBytes);
    ::posix_fadvise(fd, 0, end, POSIX_FADV_WILLNEED);
    ::posix_fadvise(fd, st.st_size - end, end, POSIX_FADV_WILLNEED);
  }
  ::close(fd);
}

// Two passes: first every file's two ends without waiting (the ELF and
// program headers; the section header table and, as GNU ld lays files out,
// .symtab and .strtab just before it), so that the disk works on all files
// at once; then each file's headers are parsed (now mostly cached) for the
// exact symbol sections.
SymbolReadAhead::SymbolReadAhead(std::function<std::vector<std::string>()> list_files)
    : done_(std::async(std::launch::async, [list_files = std::move(list_files)] {
        const std::vector<std::string> files = list_files();
        for (const std::string& f : files) read_ahead_ends(f);
        size_t elf_files = 0;
        for (const std::string& f : files) elf_files += read_ahead_symbol_sections(f) > 0;
        return elf_files;
      })) {}

SymbolReadAhead::~SymbolReadAhead() { wait(); }

size_t SymbolReadAhead::wait() {
  if (done_.valid()) elf_files_ = done_.get();
  return elf_files_;
}

}  // namespace fg
