#include "unwind/debug_file_cfi.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <cstring>
#include <mutex>
#include <unordered_map>

namespace fg {

// Unwinding reads an object's own .eh_frame first and asks libdwfl for its
// debug file only where that fails, at every stack's outermost frame; libdw
// then decompresses the debug file's sections (Debian's are zlib-compressed)
// once per process's Dwfl. A busy 15 s system-wide DWARF recording (400
// processes; libc's and ld.so's debug files) spent 2.8 of 3.8 s in inflate
// for a .debug_frame that neither file has. Answers are kept per path for
// the fold: a few hundred files.
bool debug_file_has_cfi(const std::string& path) {
  static std::mutex mutex;
  static std::unordered_map<std::string, bool> known;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = known.find(path);
  if (it != known.end()) return it->second;
  elf_version(EV_CURRENT);
  bool cfi = true;  // what cannot be read is left to libdwfl, as before
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  Elf* elf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, nullptr) : nullptr;
  size_t shstrndx = 0;
  if (elf && elf_kind(elf) == ELF_K_ELF && elf_getshdrstrndx(elf, &shstrndx) == 0) {
    cfi = false;
    for (Elf_Scn* scn = nullptr; !cfi && (scn = elf_nextscn(elf, scn));) {
      GElf_Shdr sh;
      const char* name = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : nullptr;
      cfi = name && sh.sh_type == SHT_PROGBITS &&
            (std::strcmp(name, ".debug_frame") == 0 || std::strcmp(name, ".zdebug_frame") == 0);
    }
  }
  if (elf) elf_end(elf);
  if (fd >= 0) close(fd);
  known.emplace(path, cfi);
  return cfi;
}

}  // namespace fg
