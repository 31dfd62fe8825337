#include "render/xml_text.h"

#include <cstdint>

#include "diagnostics/utf8.h"

namespace fg {

namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// Length of the valid, XML-allowed UTF-8 sequence at s[i], or 0.
size_t valid_sequence(std::string_view s, size_t i) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return (c >= 0x20 || c == '\t') ? 1 : 0;
  uint32_t cp = 0;
  size_t n = utf8_sequence_length(s, i, &cp);
  if (cp == 0xFFFE || cp == 0xFFFF) return 0;  // valid UTF-8, but not XML characters
  return n;
}

template <class Emit>
void walk(std::string_view s, Emit&& emit) {
  size_t i = 0;
  while (i < s.size()) {
    size_t n = valid_sequence(s, i);
    if (n == 0) {
      emit(kReplacement, true);
      ++i;
    } else {
      emit(s.substr(i, n), false);
      i += n;
    }
  }
}

}  // namespace

std::string sanitize_xml_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  walk(s, [&](std::string_view piece, bool) { out += piece; });
  return out;
}

void append_xml_escaped(std::string& out, std::string_view s) {
  // Fast path for the common all-safe ASCII name.
  bool plain = true;
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c >= 0x7f || c == '&' || c == '<' || c == '>' || c == '"' || c == '\'') {
      plain = false;
      break;
    }
  }
  if (plain) {
    out += s;
    return;
  }
  walk(s, [&](std::string_view piece, bool) {
    if (piece.size() == 1) {
      switch (piece[0]) {
        case '&': out += "&amp;"; return;
        case '<': out += "&lt;"; return;
        case '>': out += "&gt;"; return;
        case '"': out += "&quot;"; return;
        case '\'': out += "&apos;"; return;
        default: break;
      }
    }
    out += piece;
  });
}

std::string xml_escape(std::string_view s) {
  std::string out;
  append_xml_escaped(out, s);
  return out;
}

size_t utf8_length(std::string_view s) {
  size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

std::string_view utf8_prefix(std::string_view s, size_t n) {
  size_t i = 0, count = 0;
  while (i < s.size()) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) {
      if (count == n) break;
      ++count;
    }
    ++i;
  }
  return s.substr(0, i);
}

std::string_view utf8_suffix(std::string_view s, size_t n) {
  size_t len = utf8_length(s);
  if (n >= len) return s;
  std::string_view head = utf8_prefix(s, len - n);
  return s.substr(head.size());
}

}  // namespace fg
