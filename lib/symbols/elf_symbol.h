// An ELF object's function symbols as perf sees them (sizes fixed up, one
// kept per address) and its PT_LOAD segments: the table ElfObject builds and
// SymbolFreePages reads, sorted by start address here.
#pragma once

#include <cstdint>
#include <vector>

namespace fg {

// A function symbol after perf's alias resolution; `end` is exclusive (for unsized
// symbols, the next symbol's start, as perf's symbols__fixup_end does).
struct ElfSymbol {
  uint64_t start = 0;
  uint64_t end = 0;
  const char* name = nullptr;  // raw (mangled) name, owned by the object's Elf
  uint8_t binding = 0;         // STB_*
  bool sized = false;
  bool plt = false;            // synthesized PLT entry: display as "<name>@plt"
  // Position in the symbol table (PLT entries after it): of aliases that
  // tie on perf's rules, perf keeps the earlier (build_symbol_table).
  uint32_t table_index = 0;
};

// Sorts a table by start address, stably: equal starts keep their order
// (perf's tie rule among aliases keeps the earlier symbol).
void sort_symbols_by_start(std::vector<ElfSymbol>& symbols);

// A PT_LOAD segment: file offset, size in the file, vaddr.
struct LoadSegment {
  uint64_t offset, filesz, vaddr;
  bool executable;
};

}  // namespace fg
