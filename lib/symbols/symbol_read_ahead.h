// Reads ahead, on a thread of its own, the parts of a recording's ELF files
// that building their symbol tables reads: on a cold page cache the
// symbolising thread otherwise stalls on each file's first pages (a busy
// system-wide fold: 0.6 s of disk waits on top of 0.9 s).
// Only page-cache hints (posix_fadvise WILLNEED): nothing is read into
// fgtool's memory, and a missing, non-ELF or damaged file is skipped.
// Owning thread: whoever starts it; its own thread only reads files.
#pragma once

#include <functional>
#include <future>
#include <string>
#include <vector>

namespace fg {

// Asks the kernel to start reading the ELF file's section headers and its
// symbol, string, PLT-relocation and MiniDebugInfo sections. Returns how
// many sections it asked for, 0 if the file is not a readable ELF.
size_t read_ahead_symbol_sections(const std::string& path);

class SymbolReadAhead {
 public:
  // Starts, on another thread, listing the files (`list_files` runs there:
  // finding them stats paths, which a cold cache makes slow too) and
  // reading them ahead in order.
  explicit SymbolReadAhead(std::function<std::vector<std::string>()> list_files);
  // Waits for the thread (it only issues hints: it is done quickly).
  ~SymbolReadAhead();
  SymbolReadAhead(const SymbolReadAhead&) = delete;
  SymbolReadAhead& operator=(const SymbolReadAhead&) = delete;

  // Waits and returns how many files were ELF files.
  size_t wait();

 private:
  std::future<size_t> done_;
  size_t elf_files_ = 0;
};

}  // namespace fg
