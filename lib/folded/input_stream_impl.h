// The line loop of input_stream.h, a template so the per-line call inlines.
// Included from input_stream.h only.
#pragma once

#include <cstring>
#include <string_view>
#include <vector>

#include "diagnostics/input_error.h"

namespace fg {

template <class LineFn>
uint64_t for_each_line(InputStream& in, LineFn&& fn) {
  constexpr size_t kBlock = size_t(4) << 20;
  // A line within the stack limits (4096 frames of 4096 bytes) is at most
  // 16 MiB; 64 MiB bounds the buffer a hostile single-line file can grow.
  constexpr size_t kMaxLine = size_t(64) << 20;
  std::vector<char> buf(kBlock);
  size_t have = 0, scanned = 0;  // bytes in buf; bytes known to hold no '\n'
  uint64_t line_no = 0, total = 0;
  for (;;) {
    if (have == buf.size()) {
      if (buf.size() >= kMaxLine)
        throw InputError::at_line(in.name(), line_no + 1, "line longer than 64 MiB");
      buf.resize(buf.size() * 2);
    }
    size_t n = in.read(buf.data() + have, buf.size() - have);
    total += n;
    if (n == 0) {
      if (have) fn(std::string_view(buf.data(), have), ++line_no);
      return total;
    }
    have += n;
    const char* base = buf.data();
    size_t pos = 0;
    const char* scan = base + scanned;
    for (;;) {
      const char* nl = static_cast<const char*>(std::memchr(scan, '\n', base + have - scan));
      if (!nl) break;
      fn(std::string_view(base + pos, nl - (base + pos)), ++line_no);
      pos = nl - base + 1;
      scan = nl + 1;
    }
    if (pos) std::memmove(buf.data(), buf.data() + pos, have - pos);
    have -= pos;
    scanned = have;
  }
}

}  // namespace fg
