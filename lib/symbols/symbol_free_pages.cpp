#include "symbols/symbol_free_pages.h"

#include <algorithm>
#include <cstddef>

namespace fg {

// A page is symbol-free unless some PT_LOAD maps one of its offsets to a
// vaddr v with v or v - 1 in a symbol as find_symbol sees it ([start, end),
// or start itself): for each segment, the union of the symbols' ranges in
// file offsets, with inclusive bounds (start .. end, or start + 1 for an
// empty symbol: one more for v - 1) so that nothing overflows at 2^64. The
// symbols are sorted by start, so each segment's pages are marked once.
std::vector<uint64_t> symbol_free_page_bits(const std::vector<ElfSymbol>& symbols,
                                            const std::vector<LoadSegment>& segments, uint64_t file_size) {
  // A hostile file's thousands of segments would make this symbols x
  // segments: no page is then symbol-free (the lookups are exact anyway).
  constexpr size_t kMaxSegments = 64;
  constexpr unsigned kShift = SymbolFreePages::kPageShift;
  if (segments.size() > kMaxSegments || file_size == 0) return {};
  // At most the pages a segment holds, and 2^24 of them (64 GiB of file, 2
  // MiB of bits): a sparse file's claimed terabytes get no more. Past them
  // the lookups stay exact.
  constexpr uint64_t kMaxPages = uint64_t(1) << 24;
  uint64_t segments_end = 0;
  for (const LoadSegment& seg : segments)
    if (seg.filesz) segments_end = std::max(segments_end, seg.filesz - 1 > UINT64_MAX - seg.offset ? UINT64_MAX : seg.offset + seg.filesz - 1);
  const uint64_t pages = std::min({((file_size - 1) >> kShift) + 1, (segments_end >> kShift) + 1, kMaxPages});
  std::vector<uint64_t> covered(size_t((pages + 63) / 64), 0);
  auto mark = [&](uint64_t first_offset, uint64_t last_offset, uint64_t* next_page) {
    const uint64_t first = std::max(first_offset >> kShift, *next_page);
    const uint64_t last = std::min(last_offset >> kShift, pages - 1);
    for (uint64_t p = first; p <= last; ++p) covered[p >> 6] |= uint64_t(1) << (p & 63);
    *next_page = std::max(*next_page, last + 1);
  };
  for (const LoadSegment& seg : segments) {
    if (seg.filesz == 0 || seg.offset >= pages << kShift) continue;
    // Offsets past 2^64 do not exist: the segment holds up to last_offset.
    const uint64_t last_offset = seg.filesz - 1 > UINT64_MAX - seg.offset ? UINT64_MAX : seg.offset + seg.filesz - 1;
    uint64_t next_page = 0;  // pages below it are marked for this segment
    if (last_offset - seg.offset > UINT64_MAX - seg.vaddr) {
      // Its vaddrs wrap past 2^64 (file_offset_to_vaddr wraps too): a
      // hostile file's. Every page it holds keeps its lookups.
      mark(seg.offset, last_offset, &next_page);
      continue;
    }
    const uint64_t seg_last = seg.vaddr + (last_offset - seg.offset);
    for (const ElfSymbol& s : symbols) {
      if (s.start > seg_last) break;
      const uint64_t reach = s.end > s.start ? s.end : (s.start == UINT64_MAX ? s.start : s.start + 1);
      const uint64_t lo = std::max(s.start, seg.vaddr), hi = std::min(reach, seg_last);
      if (lo > hi) continue;
      mark(lo - seg.vaddr + seg.offset, hi - seg.vaddr + seg.offset, &next_page);
    }
  }
  for (uint64_t& w : covered) w = ~w;
  if (pages % 64) covered.back() &= (uint64_t(1) << (pages % 64)) - 1;  // past the last page: not free
  return covered;
}

}  // namespace fg
