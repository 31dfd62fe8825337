// The one UTF-8 validity rule of fgtool's text outputs (RFC 3629: no
// overlong forms, no surrogates, nothing past U+10FFFF), shared by terminal
// escaping (terminal_text) and SVG text (render/xml_text).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace fg {

// Length (2..4) of the valid multi-byte UTF-8 sequence starting at s[i], or 0
// when s[i] is ASCII, a stray continuation byte, or starts an invalid or cut
// sequence. With `code_point`, stores the decoded value when valid.
inline size_t utf8_sequence_length(std::string_view s, size_t i, uint32_t* code_point = nullptr) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  size_t n;
  uint32_t min;
  if (c >= 0xC2 && c <= 0xDF) n = 2, min = 0x80;
  else if (c >= 0xE0 && c <= 0xEF) n = 3, min = 0x800;
  else if (c >= 0xF0 && c <= 0xF4) n = 4, min = 0x10000;
  else return 0;
  if (i + n > s.size()) return 0;
  uint32_t cp = c & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) {
    unsigned char d = static_cast<unsigned char>(s[i + k]);
    if ((d & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (d & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  if (code_point) *code_point = cp;
  return n;
}

}  // namespace fg
