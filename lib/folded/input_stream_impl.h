// The line loop of input_stream.h, a template so the per-line call inlines.
// Included from input_stream.h only.
#pragma once

#include <cstring>
#include <string_view>
#include <type_traits>
#include <vector>

#include "diagnostics/input_error.h"

namespace fg {

namespace line_detail {

// Which byte ends a line: '\n' (Unix, and CRLF whose '\r' the readers strip)
// whenever the input has a '\n' at all, else '\r' for the CR-only files old
// Mac tools and some editors write (split on '\n' they would be one line).
// Deciding by "any '\n'" rather than by the first terminator keeps a file
// whose first frame name holds a stray '\r' (fgtool's own output of such a
// name, say) a '\n' file. Returns false while `text` cannot tell yet: no
// '\n' in it, not at the end, and less than kDecideBytes seen.
constexpr size_t kDecideBytes = size_t(64) << 10;
inline bool detect_line_end(std::string_view text, bool at_end, char& delim) {
  if (std::memchr(text.data(), '\n', text.size())) {
    delim = '\n';
    return true;
  }
  const bool cr = std::memchr(text.data(), '\r', text.size()) != nullptr;
  delim = cr ? '\r' : '\n';
  return at_end || (cr && text.size() >= kDecideBytes);
}

constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";

// fn may return void, or bool (false stops the loop early).
template <class LineFn>
bool call(LineFn& fn, std::string_view line, uint64_t no) {
  if constexpr (std::is_same_v<std::invoke_result_t<LineFn&, std::string_view, uint64_t>, bool>) {
    return fn(line, no);
  } else {
    fn(line, no);
    return true;
  }
}

}  // namespace line_detail

template <class LineFn>
uint64_t for_each_line(InputStream& in, LineFn&& fn) {
  constexpr size_t kBlock = size_t(4) << 20;
  // A line within the stack limits (4096 frames of 4096 bytes) is at most
  // 16 MiB; 64 MiB bounds the buffer a hostile single-line file can grow.
  constexpr size_t kMaxLine = size_t(64) << 20;
  std::vector<char> buf(kBlock);
  size_t have = 0, scanned = 0;  // bytes in buf; bytes known to hold no line end
  uint64_t line_no = 0, total = 0;
  bool bom_checked = false, delim_known = false;
  char delim = '\n';
  for (;;) {
    if (have == buf.size()) {
      if (buf.size() >= kMaxLine)
        throw InputError::at_line(in.name(), line_no + 1, "line longer than 64 MiB");
      buf.resize(buf.size() * 2);
    }
    size_t n = in.read(buf.data() + have, buf.size() - have);
    total += n;
    have += n;
    // A UTF-8 byte-order mark (Windows editors write one) is not part of the
    // first frame name.
    if (!bom_checked && (have >= 3 || n == 0)) {
      bom_checked = true;
      if (std::string_view(buf.data(), have).substr(0, 3) == line_detail::kUtf8Bom) {
        std::memmove(buf.data(), buf.data() + 3, have - 3);
        have -= 3;
      }
    }
    if (!delim_known) delim_known = line_detail::detect_line_end(std::string_view(buf.data(), have), n == 0, delim);
    if (n == 0) {
      // The end: the lines still in the buffer (the line end may have been
      // decided only now), then a last line without a terminator.
      size_t pos = 0;
      for (;;) {
        const void* e = std::memchr(buf.data() + pos, delim, have - pos);
        if (!e) break;
        size_t end = static_cast<const char*>(e) - buf.data();
        if (!line_detail::call(fn, std::string_view(buf.data() + pos, end - pos), ++line_no)) return total;
        pos = end + 1;
      }
      if (pos < have) line_detail::call(fn, std::string_view(buf.data() + pos, have - pos), ++line_no);
      return total;
    }
    if (!delim_known || !bom_checked) continue;
    const char* base = buf.data();
    size_t pos = 0;
    const char* scan = base + scanned;
    for (;;) {
      const char* nl = static_cast<const char*>(std::memchr(scan, delim, base + have - scan));
      if (!nl) break;
      if (!line_detail::call(fn, std::string_view(base + pos, nl - (base + pos)), ++line_no)) return total;
      pos = nl - base + 1;
      scan = nl + 1;
    }
    if (pos) std::memmove(buf.data(), buf.data() + pos, have - pos);
    have -= pos;
    scanned = have;
  }
}

}  // namespace fg
