// Glob patterns for category rules: '*' matches any run of bytes, '?' any one
// byte, '\' makes the next character literal; everything else is literal and
// the whole name must match. Chosen over std::regex because a glob compiles
// to a few literal pieces that match with prefix/suffix compares and
// substring searches - no backtracking, no allocation while matching.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fg {

class GlobPattern {
 public:
  // Throws std::invalid_argument with a short reason for an unusable pattern
  // (empty, or ending in a lone '\').
  explicit GlobPattern(std::string_view pattern);

  bool matches(std::string_view text) const;
  // The same, with text's byte_mask at hand: a pattern whose literal bytes
  // are not all in the text is rejected with one AND (most patterns, most
  // frames: a frame is tried against a thousand rules' globs).
  bool matches(std::string_view text, uint64_t text_mask) const {
    return (required_ & ~text_mask) == 0 && matches(text);
  }
  // Which bytes occur in text, folded onto 64 bits (byte & 63).
  static uint64_t byte_mask(std::string_view text) {
    uint64_t m = 0;
    for (unsigned char c : text) m |= uint64_t(1) << (c & 63);
    return m;
  }
  const std::string& text() const { return text_; }

 private:
  // Literal pieces between the '*'s; '?' inside a piece is a wildcard byte,
  // recorded in `any` so a literal '?' (written "\?") stays distinct.
  struct Piece {
    std::string bytes;
    std::vector<bool> any;   // empty when the piece has no '?'
  };
  static bool piece_at(const Piece& p, std::string_view text, size_t pos);
  static size_t find_piece(const Piece& p, std::string_view text, size_t from);

  std::string text_;
  std::vector<Piece> pieces_;
  bool leading_star_ = false, trailing_star_ = false;
  size_t min_length_ = 0;
  uint64_t required_ = 0;  // byte_mask of the literal (non-'?') bytes
};

}  // namespace fg
