// sort_symbols_by_start (lib/symbols/elf_symbol.h): the radix sort that
// orders every loaded symbol table, against std::stable_sort on random
// tables: equal starts (aliases) keep table order, and address ranges from
// a few bytes to all 64 bits sort alike.
#include "symbols/elf_symbol.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace fg {
namespace {

TEST(SortSymbolsByStart, AgreesWithAStableSortOnRandomTables) {
  std::mt19937_64 rng(11);
  const uint64_t spans[] = {1, 16, 4096, uint64_t(1) << 27, uint64_t(1) << 40, UINT64_MAX};
  for (int round = 0; round < 120; ++round) {
    SCOPED_TRACE(round);
    const uint64_t span = spans[round % 6];
    const size_t n = round % 3 == 0 ? rng() % 80 : 1000 + rng() % 20000;  // both sides of the small-table path
    const uint64_t base = round % 2 ? 0x400000 : 0xffffffff80000000ull;
    std::vector<ElfSymbol> table(n);
    for (size_t i = 0; i < n; ++i) {
      table[i].start = span == UINT64_MAX ? rng() : base + rng() % span;
      table[i].table_index = uint32_t(i);  // its place in the table: ties must keep it
    }
    std::vector<ElfSymbol> want = table;
    std::stable_sort(want.begin(), want.end(), [](const ElfSymbol& a, const ElfSymbol& b) { return a.start < b.start; });
    sort_symbols_by_start(table);
    ASSERT_EQ(table.size(), want.size());
    for (size_t i = 0; i < n; ++i) {
      ASSERT_EQ(table[i].start, want[i].start) << i;
      ASSERT_EQ(table[i].table_index, want[i].table_index) << i;
    }
  }
}

TEST(SortSymbolsByStart, EmptyAndOneSymbolTables) {
  std::vector<ElfSymbol> none;
  sort_symbols_by_start(none);
  EXPECT_TRUE(none.empty());
  std::vector<ElfSymbol> one(1);
  one[0].start = 42;
  sort_symbols_by_start(one);
  EXPECT_EQ(one[0].start, 42u);
}

}  // namespace
}  // namespace fg
