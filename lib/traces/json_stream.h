// The byte level of the trace JSON reader (trace_json_scanner.h): a buffer
// refilled from an InputStream in growing blocks, and validating readers of
// single JSON values (strings, numbers, literals, skipped containers) on it.
// It knows nothing of Chrome traces; the scanner decides what a value means.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "folded/input_stream.h"
#include "traces/trace_json_scanner.h"

namespace fg {

class Progress;

namespace json_stream {
// Reads start in 64 KiB blocks (small traces, tests and fuzzing stay cheap)
// and double up to 4 MiB blocks for big ones.
constexpr size_t kFirstBlock = size_t(64) << 10;
constexpr size_t kBlock = size_t(4) << 20;
// One JSON value (an event, or a top-level value other than traceEvents) must
// fit in the buffer at once; this bounds memory for hostile input.
constexpr size_t kMaxValue = size_t(64) << 20;
// Zero bytes kept after the data: vector loads may read past the end, and
// digit/literal scans stop on them without bounds checks.
constexpr size_t kPad = 64;

struct NeedMore {};  // the value continues past the buffered bytes

inline bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
inline bool is_digit(char c) { return c >= '0' && c <= '9'; }
// "'x'" for a printable character, else "0x1b".
std::string show(char c);
// A key's text compared without building it when it has no escapes.
inline bool key_is(std::string_view k, const char* lit, size_t n) {
  return k.size() == n && std::memcmp(k.data(), lit, n) == 0;
}
}  // namespace json_stream

// The reader works on a cursor `p` into the buffer: a value reader advances
// it past the value or throws json_stream::NeedMore when the value runs past
// the buffered bytes; unit() then refills and runs the reader again from the
// last committed position, so values never have to be resumed midway.
class JsonStream {
 public:
  JsonStream(InputStream& in, Progress* progress);

  // ---- buffer ----
  const char* data() const { return buf_.data(); }
  const char* end() const { return buf_.data() + len_; }
  uint64_t offset_of(const char* p) const { return base_ + uint64_t(p - data()); }
  bool at_eof() const { return eof_; }
  size_t len() const { return len_; }
  size_t pos() const { return pos_; }
  void set_pos(size_t pos) { pos_ = pos; }
  uint64_t bytes_read() const { return base_ + len_; }
  // Moves the unread bytes to the front and reads more (growing the buffer
  // for a value that fills it, up to kMaxValue).
  void refill();

  [[noreturn]] void truncated() const;
  // A syntax error at `at`; past the data means the input ended early.
  [[noreturn]] void malformed(const char* at, const std::string& what) const;

  // Skips white space; throws NeedMore at the end of the data.
  char peek(const char*& p) const {
    while (p < end() && json_stream::is_ws(*p)) ++p;
    if (p >= end()) throw json_stream::NeedMore{};
    return *p;
  }

  // ---- values (p at their first byte) ----
  // The string's text: a view of the buffer when it has no escapes, else
  // `scratch` (or an empty view when scratch is null: only validated).
  std::string_view parse_string(const char*& p, std::string* scratch);
  // With `v`, fills in the number's value.
  void parse_number(const char*& p, TraceJsonValue* v);
  void parse_literal(const char*& p, const char* word, size_t n);
  // Validates and skips one value; returns its type.
  TraceJsonValue::Type skip_value(const char*& p);
  // A string (its text), a number (its value) or anything else (its type).
  void parse_field(const char*& p, TraceJsonValue& v, std::string* scratch);
  // After '{' or ',' in an object: the key (p at its quote) and the ':'; p
  // ends at the value's first byte.
  std::string_view parse_key(const char*& p, std::string* scratch);

  // Runs `f` on the bytes from pos(), refilling and retrying while it needs
  // more; commits pos() to where `f` stopped. At the end of input, calls
  // `at_eof` (which throws or returns false to stop).
  template <class F, class G>
  bool unit(F&& f, G&& at_eof) {
    for (;;) {
      const char* p = data() + pos_;
      try {
        f(p);
        pos_ = size_t(p - data());
        return true;
      } catch (const json_stream::NeedMore&) {
        if (eof_) return at_eof();
        refill();
      }
    }
  }

 private:
  void string_slow(const char*& p, const char* start, std::string* scratch);

  InputStream& in_;
  Progress* progress_;
  std::vector<char> buf_;
  size_t cap_, len_ = 0, pos_ = 0, refills_ = 0;
  uint64_t base_ = 0;
  bool eof_ = false;
  std::string nest_;  // open containers of skip_value
};

}  // namespace fg
