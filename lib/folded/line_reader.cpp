#include "folded/line_reader.h"

#include <algorithm>
#include <cstring>

namespace fg {

namespace {
constexpr size_t kChunk = 1 << 16;
}

LineReader::LineReader(InputStream& in, size_t max_line) : in_(in), max_line_(max_line) { buffer_.resize(kChunk); }

bool LineReader::fill() {
  if (eof_) return false;
  size_t got = in_.read(&buffer_[0], buffer_.size());
  if (got == 0) {
    eof_ = true;
    return false;
  }
  begin_ = 0;
  end_ = got;
  bytes_read_ += got;
  return true;
}

bool LineReader::next(std::string_view& line, bool& too_long) {
  too_long = false;
  long_line_.clear();
  bool carried = false;  // the line began in an earlier chunk; it is in long_line_
  uint64_t total = 0;    // the line's full length, kept or not
  auto keep = [&](const char* p, size_t len) {
    total += len;
    if (long_line_.size() < max_line_) long_line_.append(p, std::min(len, max_line_ - long_line_.size()));
  };
  for (;;) {
    if (begin_ == end_ && !fill()) {
      if (!carried) return false;
      break;  // last line without '\n'
    }
    const char* start = buffer_.data() + begin_;
    const void* nl = std::memchr(start, '\n', end_ - begin_);
    size_t len = nl ? size_t(static_cast<const char*>(nl) - start) : end_ - begin_;
    if (nl && !carried) {  // the common case: the whole line is in the buffer
      begin_ += len + 1;
      line = std::string_view(start, len);
      if (line.size() > max_line_) {
        too_long = true;
        line = line.substr(0, max_line_);
      }
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      line_number_++;
      return true;
    }
    keep(start, len);
    carried = true;
    begin_ += nl ? len + 1 : len;
    if (nl) break;
  }
  too_long = total > max_line_;
  line = long_line_;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  line_number_++;
  return true;
}

}  // namespace fg
