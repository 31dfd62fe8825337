#include "categories/glob_pattern.h"

#include <stdexcept>

namespace fg {

GlobPattern::GlobPattern(std::string_view pattern) : text_(pattern) {
  if (pattern.empty()) throw std::invalid_argument("empty pattern");
  Piece cur;
  bool have_piece = false;
  auto flush = [&] {
    if (have_piece) {
      min_length_ += cur.bytes.size();
      for (size_t i = 0; i < cur.bytes.size(); ++i)
        if (cur.any.empty() || !cur.any[i]) required_ |= uint64_t(1) << (static_cast<unsigned char>(cur.bytes[i]) & 63);
      pieces_.push_back(std::move(cur));
    }
    cur = Piece{};
    have_piece = false;
  };
  for (size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if (c == '*') {
      if (i == 0) leading_star_ = true;
      trailing_star_ = true;
      flush();
      continue;
    }
    trailing_star_ = false;
    bool wildcard = false;
    if (c == '\\') {
      if (i + 1 == pattern.size()) throw std::invalid_argument("pattern '" + text_ + "' ends with a lone '\\'");
      c = pattern[++i];
    } else if (c == '?') {
      wildcard = true;
    }
    if (wildcard && cur.any.empty()) cur.any.assign(cur.bytes.size(), false);
    cur.bytes.push_back(c);
    if (!cur.any.empty()) cur.any.push_back(wildcard);
    have_piece = true;
  }
  flush();
}

bool GlobPattern::piece_at(const Piece& p, std::string_view text, size_t pos) {
  if (pos + p.bytes.size() > text.size()) return false;
  if (p.any.empty()) return text.compare(pos, p.bytes.size(), p.bytes) == 0;
  for (size_t i = 0; i < p.bytes.size(); ++i)
    if (!p.any[i] && text[pos + i] != p.bytes[i]) return false;
  return true;
}

size_t GlobPattern::find_piece(const Piece& p, std::string_view text, size_t from) {
  if (p.any.empty()) return text.find(p.bytes, from);
  for (size_t pos = from; pos + p.bytes.size() <= text.size(); ++pos)
    if (piece_at(p, text, pos)) return pos;
  return std::string_view::npos;
}

bool GlobPattern::matches(std::string_view text) const {
  if (text.size() < min_length_) return false;
  if (pieces_.empty()) return leading_star_ || text.empty();  // "*" matches anything
  size_t first = 0, last = pieces_.size();
  size_t pos = 0, end = text.size();
  if (!leading_star_) {  // the first piece is anchored at the start
    if (!piece_at(pieces_[0], text, 0)) return false;
    pos = pieces_[0].bytes.size();
    first = 1;
    if (pieces_.size() == 1 && !trailing_star_) return pos == text.size();
  }
  if (!trailing_star_ && last > first) {  // the last piece is anchored at the end
    const Piece& p = pieces_[last - 1];
    if (p.bytes.size() > end - pos) return false;
    if (!piece_at(p, text, end - p.bytes.size())) return false;
    end -= p.bytes.size();
    --last;
  }
  // Middle pieces: leftmost placement is always safe for '*'-separated pieces.
  std::string_view window = text.substr(0, end);
  for (size_t i = first; i < last; ++i) {
    size_t at = find_piece(pieces_[i], window, pos);
    if (at == std::string_view::npos) return false;
    pos = at + pieces_[i].bytes.size();
  }
  return pos <= end;
}

}  // namespace fg
