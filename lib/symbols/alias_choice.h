// perf's choice among symbols that start at one address (choose_best_symbol
// in tools/perf/util/symbol.c), shared by the ELF symbol tables
// (elf_object.cpp) and kallsyms (kernel_symbols.cpp).
#pragma once

#include <string_view>

namespace fg {

// What perf's rules look at in one alias; `name` as perf compares it (the
// name it shows).
struct AliasFacts {
  bool sized, weak, global;
  std::string_view name;
};

// The rules in perf's order: a symbol with a size, then not weak, then
// global (compare_alias_kinds), then fewer leading underscores, then the
// longer name (compare_alias_names). > 0: perf keeps a; < 0: b; 0: a full
// tie, which each caller settles as perf does. The kinds come first so that
// a caller can leave the names unmade (demangled) when they decide.
inline int compare_alias_kinds(const AliasFacts& a, const AliasFacts& b) {
  if (a.sized != b.sized) return a.sized ? 1 : -1;
  if (a.weak != b.weak) return a.weak ? -1 : 1;
  if (a.global != b.global) return a.global ? 1 : -1;
  return 0;
}

inline int compare_alias_names(std::string_view a, std::string_view b) {
  auto underscores = [](std::string_view s) {
    size_t n = 0;
    while (n < s.size() && s[n] == '_') ++n;
    return n;
  };
  const size_t au = underscores(a), bu = underscores(b);
  if (au != bu) return au < bu ? 1 : -1;
  if (a.size() != b.size()) return a.size() > b.size() ? 1 : -1;
  return 0;
}

inline int compare_aliases(const AliasFacts& a, const AliasFacts& b) {
  const int kinds = compare_alias_kinds(a, b);
  return kinds != 0 ? kinds : compare_alias_names(a.name, b.name);
}

}  // namespace fg
