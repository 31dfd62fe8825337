// symbol_free_page_bits (lib/symbols/symbol_free_pages.h): the pages where
// no address can be named by a symbol, against its definition checked
// offset by offset.
#include "symbols/symbol_free_pages.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace fg {
namespace {

// Whether a page is symbol-free by the definition: no offset in it maps,
// through any segment that holds it, to a vaddr v with v or v - 1 (a
// return address's lookup) in a symbol as find_symbol sees one: [start,
// end), or start itself for an empty one.
std::vector<bool> symbol_free_by_definition(const std::vector<ElfSymbol>& symbols,
                                            const std::vector<LoadSegment>& segments, uint64_t file_size) {
  const uint64_t page = uint64_t(1) << SymbolFreePages::kPageShift;
  const uint64_t pages = (file_size + page - 1) / page;
  auto in_symbol = [&](uint64_t v) {
    for (const ElfSymbol& s : symbols)
      if (v >= s.start && v < std::max(s.end, s.start + 1)) return true;
    return false;
  };
  std::vector<bool> free(pages, true);
  for (uint64_t off = 0; off < pages * page; ++off)
    for (const LoadSegment& seg : segments) {
      if (off < seg.offset || off - seg.offset >= seg.filesz) continue;
      const uint64_t v = off - seg.offset + seg.vaddr;
      if (in_symbol(v) || (v > 0 && in_symbol(v - 1))) free[off / page] = false;
    }
  return free;
}

TEST(SymbolFreePageBits, AgreeWithTheDefinitionOnRandomLayouts) {
  std::mt19937_64 rng(7);
  const uint64_t page = uint64_t(1) << SymbolFreePages::kPageShift;
  for (int round = 0; round < 200; ++round) {
    SCOPED_TRACE(round);
    const uint64_t file_size = 1 + rng() % (9 * page);
    std::vector<LoadSegment> segments(1 + rng() % 3);
    for (LoadSegment& seg : segments) {
      seg.offset = rng() % file_size;
      // Some claim more than the file holds.
      seg.filesz = 1 + rng() % (round % 4 == 0 ? 12 * page : file_size - seg.offset);
      seg.vaddr = (rng() % 16) * page + rng() % 64 * (round % 3 == 0);  // p_vaddr may differ from p_offset
      seg.executable = rng() % 2;
    }
    std::vector<ElfSymbol> symbols(rng() % 12);
    for (ElfSymbol& s : symbols) {
      s.start = rng() % (24 * page);
      const uint64_t kind = rng() % 4;
      s.end = kind == 0 ? s.start : s.start + 1 + rng() % (kind == 1 ? 64 : 3 * page);  // empty, small, big
      if (rng() % 3 == 0) s.start = s.start / page * page + (rng() % 2 ? 0 : page - 1);  // at page edges
      if (kind == 3) s.end = (s.start / page + 1 + rng() % 2) * page;  // ends where a page starts
      s.end = std::max(s.end, s.start);
    }
    sort_symbols_by_start(symbols);
    const std::vector<bool> want = symbol_free_by_definition(symbols, segments, file_size);
    const std::vector<uint64_t> bits = symbol_free_page_bits(symbols, segments, file_size);
    // Worked out up to the file's end or the segments' end, whichever is first.
    uint64_t segments_end = 0;
    for (const LoadSegment& seg : segments) segments_end = std::max(segments_end, seg.offset + seg.filesz - 1);
    const uint64_t exact = std::min<uint64_t>(want.size(), segments_end / page + 1);
    ASSERT_EQ(bits.size(), (exact + 63) / 64);
    SymbolFreePages pages{bits.data(), bits.size() * 64, false};
    for (uint64_t p = 0; p < want.size() + 64; ++p)
      for (uint64_t off : {p * page, p * page + page / 2, p * page + page - 1})
        ASSERT_EQ(pages.contains(off), p < exact && want[p]) << "page " << p;
  }
}

// Symbols and segments at the top of the address space (a hostile file's)
// neither overflow nor leave a page free that a symbol reaches.
TEST(SymbolFreePageBits, EdgesOfTheAddressSpace) {
  const uint64_t page = uint64_t(1) << SymbolFreePages::kPageShift;
  ElfSymbol top;
  top.start = UINT64_MAX - 10;
  top.end = UINT64_MAX;
  ElfSymbol low;
  low.start = 0;
  low.end = 0;  // empty, at 0: offset 0 and 1 of the first segment reach it
  // Segment 1 maps offsets [page, 3 pages) to the top of the address space,
  // its last byte to 2^64 - 1; segment 2 claims far more than the file.
  std::vector<LoadSegment> segments = {{0, page, 0, true},
                                       {page, 2 * page, uint64_t(0) - 2 * page, true},
                                       {3 * page, UINT64_MAX - 6 * page, 5 * page, false}};
  std::vector<ElfSymbol> symbols = {low, top};
  const std::vector<uint64_t> bits = symbol_free_page_bits(symbols, segments, 5 * page);
  ASSERT_EQ(bits.size(), 1u);
  SymbolFreePages pages{bits.data(), 64, false};
  EXPECT_FALSE(pages.contains(0));             // the empty symbol at vaddr 0
  EXPECT_TRUE(pages.contains(page));           // maps far below `top`
  EXPECT_FALSE(pages.contains(3 * page - 1));  // vaddr 2^64 - 1: its v - 1 is in `top`
  EXPECT_TRUE(pages.contains(3 * page));       // vaddrs from 5 pages on: no symbol
  EXPECT_FALSE(pages.contains(5 * page));      // past the file
  // A segment whose vaddrs wrap past 2^64 to a symbol at 10: the page that
  // reaches it is not free.
  ElfSymbol ten;
  ten.start = 10;
  ten.end = 20;
  const std::vector<uint64_t> wrapped =
      symbol_free_page_bits({ten}, {LoadSegment{0, 2 * page, uint64_t(0) - page, true}}, 2 * page);
  ASSERT_EQ(wrapped.size(), 1u);
  EXPECT_FALSE((SymbolFreePages{wrapped.data(), 64, false}.contains(page + 15)));
  // A sparse file's claimed size gets bits for its segments' pages only,
  // and never more than 2^24 pages.
  EXPECT_EQ(symbol_free_page_bits({}, {LoadSegment{0, 3 * page, 0, true}}, uint64_t(1) << 50).size(), 1u);
  EXPECT_EQ(symbol_free_page_bits({}, {LoadSegment{0, uint64_t(1) << 50, 0, true}}, uint64_t(1) << 50).size(),
            (uint64_t(1) << 24) / 64);
  // Too many segments: nothing is worked out, so no page is free.
  std::vector<LoadSegment> many(65, LoadSegment{0, page, 0, true});
  EXPECT_TRUE(symbol_free_page_bits({}, many, page).empty());
  EXPECT_TRUE(symbol_free_page_bits({}, segments, 0).empty());
}

}  // namespace
}  // namespace fg
