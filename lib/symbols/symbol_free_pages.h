// Which pages of an ELF file no symbol reaches: there every address gets the
// object's own name ("[chromium]"), so the fold names them all with one
// frame-cache entry instead of a lookup each (StackSymboliser).
#pragma once

#include <cstdint>
#include <vector>

#include "symbols/elf_symbol.h"

namespace fg {

// The file's pages (4 KiB of file offsets) where no address can be named by a
// symbol: neither it nor the address before it (a return address is looked up
// at pc - 1) lies in one, whichever PT_LOAD maps it. Every address there gets
// its object's name ("[chromium]"), so a fold names them all by one lookup: a
// stripped browser's code was 240 K distinct addresses of busy8.data, each
// looked up and given a frame-cache entry of its own.
struct SymbolFreePages {
  static constexpr unsigned kPageShift = 12;
  const uint64_t* bits = nullptr;  // bit p: page p is symbol-free
  uint64_t pages = 0;              // pages the bits cover; later ones are not symbol-free
  bool all = false;                // every page (no ELF file was found)

  bool contains(uint64_t file_offset) const {
    if (all) return true;
    const uint64_t p = file_offset >> kPageShift;
    return p < pages && ((bits[p >> 6] >> (p & 63)) & 1);
  }
};

// SymbolFreePages::bits for a file of file_size bytes with these PT_LOADs
// and symbols (sorted by start): one bit per 4 KiB page, up to the file's
// end, the segments' end or 2^24 pages, whichever comes first (the bits past
// it are clear). Empty where it is not worked out (no file, or over 64
// segments): then no page is symbol-free.
std::vector<uint64_t> symbol_free_page_bits(const std::vector<ElfSymbol>& symbols,
                                            const std::vector<LoadSegment>& segments, uint64_t file_size);

}  // namespace fg
