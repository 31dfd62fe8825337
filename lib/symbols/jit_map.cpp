#include "symbols/jit_map.h"

#include <cctype>

namespace fg {
namespace {

// Reads hex digits (an optional 0x is tolerated); false if there are none or more
// than 16.
bool read_hex(std::string_view line, size_t& i, uint64_t& value) {
  if (line.substr(i, 2) == "0x" || line.substr(i, 2) == "0X") i += 2;
  value = 0;
  int digits = 0;
  while (i < line.size() && std::isxdigit(static_cast<unsigned char>(line[i]))) {
    if (++digits > 16) return false;
    char c = line[i++];
    value = value * 16 + static_cast<uint64_t>(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
  }
  return digits > 0;
}

}  // namespace

PerfMapStats parse_perf_map(std::string_view text, NamedRanges& out) {
  PerfMapStats stats;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = text.substr(pos, eol - pos);
    pos = eol + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    ++stats.lines;
    size_t i = 0;
    uint64_t start = 0, size = 0;
    if (!read_hex(line, i, start) || i >= line.size() || line[i] != ' ' ||
        !read_hex(line, ++i, size) || i >= line.size() || line[i] != ' ' || i + 1 >= line.size()) {
      ++stats.malformed;
      continue;
    }
    out.add(start, size, line.substr(i + 1));
  }
  return stats;
}

}  // namespace fg
