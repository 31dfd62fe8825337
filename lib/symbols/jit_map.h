// perf's JIT symbol files, /tmp/perf-PID.map: text lines `START SIZE name` (hex
// without 0x, the name runs to the end of the line and may contain spaces; later
// lines override earlier ones for the addresses they cover).
#pragma once

#include <cstddef>
#include <string_view>

#include "symbols/named_ranges.h"

namespace fg {

struct PerfMapStats {
  size_t lines = 0;       // non-empty lines
  size_t malformed = 0;   // skipped: no START SIZE name triple
};

// Adds every line of `text` to `out`. Malformed lines are skipped and counted, as
// perf does, because JIT writers append while running and may leave a torn line.
PerfMapStats parse_perf_map(std::string_view text, NamedRanges& out);

}  // namespace fg
