// Kernel symbol tables: kallsyms text (`addr type name[\t[module]]`) resolved the
// way perf 6.1 does it, plus extra ranges from KSYMBOL records (BPF programs,
// trampolines) that take precedence (NamedRanges).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace fg {

struct KernelSymbol {
  uint64_t start = 0;
  uint64_t end = 0;        // exclusive
  std::string_view name;   // without the module
  std::string_view module; // "" for the kernel image, else the module name
};

class KallsymsTable {
 public:
  KallsymsTable() = default;
  // Parses kallsyms text. Keeps types T/W/D/B in either case (perf's
  // symbol_type__filter), ends each symbol at the next one's start (a page past it
  // at a kernel/module boundary), and keeps one symbol per address chosen like
  // perf's symbols__fixup_end + symbols__fixup_duplicate (so of aliases, which all
  // lack sizes, the last one listed wins). Throws fg::InputError naming
  // `source_name` and the line for a malformed line. The table copies the names
  // it keeps: `text` may be freed after.
  static KallsymsTable parse(std::string_view text, const std::string& source_name);

  const KernelSymbol* find(uint64_t address) const;
  size_t size() const { return symbols_.size(); }
  // Every address was 0: kptr_restrict hid them (the table is then empty).
  bool all_zero() const { return all_zero_; }
  const std::vector<KernelSymbol>& symbols() const { return symbols_; }

 private:
  void keep_names();
  // The kept symbols' names and the distinct modules; the symbols point
  // into it (on the heap: a move of the table keeps it in place).
  std::unique_ptr<char[]> names_;
  std::vector<KernelSymbol> symbols_;
  bool all_zero_ = false;
};

}  // namespace fg
