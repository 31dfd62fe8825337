// Reads a text stream line by line in fixed-size chunks, with a cap on line
// length, so that a file without newlines (or binary junk) cannot make the
// reader allocate without bound.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "folded/input_stream.h"

namespace fg {

class LineReader {
 public:
  // Does not own `in`. Lines longer than max_line are reported as too long.
  explicit LineReader(InputStream& in, size_t max_line = 1 << 20);
  // Next line without its '\n' (and '\r'). Returns false at the end.
  // When a line exceeds max_line, `too_long` is set and the line is cut.
  bool next(std::string_view& line, bool& too_long);
  uint64_t line_number() const { return line_number_; }
  uint64_t bytes_read() const { return bytes_read_; }

 private:
  bool fill();
  InputStream& in_;
  size_t max_line_;
  std::string buffer_;
  size_t begin_ = 0, end_ = 0;
  std::string long_line_;
  bool eof_ = false;
  uint64_t line_number_ = 0;
  uint64_t bytes_read_ = 0;
};

}  // namespace fg
