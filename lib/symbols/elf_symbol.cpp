#include "symbols/elf_symbol.h"

#include <algorithm>
#include <cstddef>
#include <utility>

namespace fg {

// Sorts by start address, keeping table order among equal starts: a least
// significant digit radix sort of start - lowest start, 11 bits a pass,
// passes whose digit is the same for every symbol skipped. std::sort with
// the (start, table_index) comparison was 10% of the CPU time in a busy
// fold's first 100 ms, where two threads load hundreds of tables and the
// folding thread waits for them.
void sort_symbols_by_start(std::vector<ElfSymbol>& all) {
  const size_t n = all.size();
  if (n < 64) {
    std::stable_sort(all.begin(), all.end(), [](const ElfSymbol& a, const ElfSymbol& b) { return a.start < b.start; });
    return;
  }
  uint64_t lo = UINT64_MAX, hi = 0;
  for (const ElfSymbol& s : all) {
    lo = std::min(lo, s.start);
    hi = std::max(hi, s.start);
  }
  constexpr unsigned kBits = 11;
  constexpr size_t kBuckets = size_t(1) << kBits;
  std::vector<ElfSymbol> other(n);
  ElfSymbol* from = all.data();
  ElfSymbol* to = other.data();
  std::vector<size_t> at(kBuckets);
  for (unsigned shift = 0; shift < 64 && ((hi - lo) >> shift); shift += kBits) {
    std::fill(at.begin(), at.end(), size_t{0});
    for (size_t i = 0; i < n; ++i) ++at[((from[i].start - lo) >> shift) & (kBuckets - 1)];
    if (at[((from[0].start - lo) >> shift) & (kBuckets - 1)] == n) continue;  // one digit: nothing moves
    size_t sum = 0;
    for (size_t& c : at) sum += std::exchange(c, sum);
    for (size_t i = 0; i < n; ++i) to[at[((from[i].start - lo) >> shift) & (kBuckets - 1)]++] = from[i];
    std::swap(from, to);
  }
  if (from != all.data()) std::copy(from, from + n, all.data());
}

}  // namespace fg
