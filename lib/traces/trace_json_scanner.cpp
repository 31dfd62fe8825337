#include "traces/trace_json_scanner.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "diagnostics/input_error.h"
#include "diagnostics/progress.h"

namespace fg {

namespace {

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
constexpr int64_t kMaxAbsNs = int64_t(4) * 1000 * 1000 * 1000 * 1000 * 1000 * 1000;  // 4e18 ns

struct NeedMore {};  // the value continues past the buffered bytes

inline bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
inline bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool plain_us_to_ns(std::string_view text, int64_t& out);

class Scanner {
 public:
  Scanner(InputStream& in, TraceJsonEventSink& sink, Progress* progress)
      : in_(in), sink_(sink), progress_(progress), buf_(kFirstBlock + kPad, '\0'), cap_(kFirstBlock) {}

  TraceJsonScanResult run();

 private:
  // ---- buffer ----
  const char* data() const { return buf_.data(); }
  const char* end() const { return buf_.data() + len_; }
  uint64_t offset_of(const char* p) const { return base_ + uint64_t(p - data()); }

  void refill() {
    if (pos_ > 0) {
      std::memmove(buf_.data(), buf_.data() + pos_, len_ - pos_);
      base_ += pos_;
      len_ -= pos_;
      pos_ = 0;
    }
    if (len_ == cap_) {  // one value fills the buffer: grow it, up to the limit
      if (cap_ >= kMaxValue)
        throw InputError::at_offset(in_.name(), base_, "a single JSON value larger than 64 MiB");
      cap_ *= 2;
      buf_.resize(cap_ + kPad);
    } else if (cap_ < kBlock && refills_ > 0) {  // a big input: read in larger blocks
      cap_ *= 2;
      buf_.resize(cap_ + kPad);
    }
    ++refills_;
    size_t n = in_.read(buf_.data() + len_, cap_ - len_);
    if (n == 0) eof_ = true;
    len_ += n;
    std::memset(buf_.data() + len_, 0, kPad);
    if (progress_) progress_->update(base_ + len_);
  }

  [[noreturn]] void truncated() const {
    throw InputError::at_offset(in_.name(), base_ + len_, "malformed JSON: unexpected end of input (truncated file?)");
  }
  // A syntax error at `at`; past the data means the input ended early.
  [[noreturn]] void malformed(const char* at, const std::string& what) const {
    if (at >= end()) {
      if (!eof_) throw NeedMore{};
      truncated();
    }
    throw InputError::at_offset(in_.name(), offset_of(at), "malformed JSON: " + what);
  }
  static std::string show(char c) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) return std::string("'") + c + "'";
    char b[8];
    std::snprintf(b, sizeof b, "0x%02x", u);
    return b;
  }

  // Skips white space; throws NeedMore at the end of the data.
  char peek(const char*& p) const {
    while (p < end() && is_ws(*p)) ++p;
    if (p >= end()) throw NeedMore{};
    return *p;
  }

  // ---- values ----
  std::string_view parse_string(const char*& p, std::string* scratch);
  void string_slow(const char*& p, const char* start, std::string* scratch);
  void parse_number(const char*& p, TraceJsonValue* v);
  void parse_literal(const char*& p, const char* word, size_t n);
  void parse_field(const char*& p, TraceJsonValue& v, std::string* scratch);
  TraceJsonValue::Type skip_value(const char*& p);
  void parse_event(const char*& p);
  void parse_args(const char*& p);

  // Runs `f` on the bytes from pos_, refilling and retrying while it needs
  // more; commits pos_ to where `f` stopped. At the end of input, calls
  // `at_eof` (which throws or returns false to stop).
  template <class F, class G>
  bool unit(F&& f, G&& at_eof) {
    for (;;) {
      const char* p = data() + pos_;
      try {
        f(p);
        pos_ = size_t(p - data());
        return true;
      } catch (const NeedMore&) {
        if (eof_) return at_eof();
        refill();
      }
    }
  }
  void events_loop(bool bare_array);

  InputStream& in_;
  TraceJsonEventSink& sink_;
  Progress* progress_;
  std::vector<char> buf_;
  size_t cap_, len_ = 0, pos_ = 0, refills_ = 0;
  uint64_t base_ = 0;
  bool eof_ = false;
  TraceJsonEvent ev_;
  std::string s_name_, s_ph_, s_cat_, s_pid_, s_tid_, s_id_, s_bp_, s_args_name_, s_args_stream_, s_key_;
  std::string nest_;  // open containers of skip_value
  bool rank_key_ = false;
  TraceJsonScanResult result_;
};

// UTF-8 sequence at p (first byte >= 0x80): its length, or 0 if invalid.
// Same rules as RFC 3629 (no overlongs, surrogates or code points > U+10FFFF).
inline size_t utf8_length(const unsigned char* p) {
  unsigned char c = p[0];
  auto cont = [](unsigned char b) { return (b & 0xC0) == 0x80; };
  if (c >= 0xC2 && c <= 0xDF) return cont(p[1]) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    unsigned char lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    return p[1] >= lo && p[1] <= hi && cont(p[2]) ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    unsigned char lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    return p[1] >= lo && p[1] <= hi && cont(p[2]) && cont(p[3]) ? 4 : 0;
  }
  return 0;
}

// p at the opening quote. Returns the string's text: a view of the buffer
// when it has no escapes, else `scratch` (or an empty view when scratch is
// null: the caller only validates).
std::string_view Scanner::parse_string(const char*& p, std::string* scratch) {
  const char* start = ++p;
  for (;;) {
#if defined(__SSE2__)
    // Bytes that need a look: '"', '\\', and anything outside 0x20..0x7f
    // (control characters and UTF-8 sequences; signed compare catches both).
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'), space = _mm_set1_epi8(0x20);
    for (;;) {
      __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      int m = _mm_movemask_epi8(
          _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)), _mm_cmplt_epi8(v, space)));
      if (m) {
        p += __builtin_ctz(unsigned(m));
        break;
      }
      p += 16;
      if (p >= end()) throw NeedMore{};
    }
#else
    while (p < end()) {
      unsigned char u = static_cast<unsigned char>(*p);
      if (u == '"' || u == '\\' || u < 0x20 || u >= 0x80) break;
      ++p;
    }
#endif
    if (p >= end()) throw NeedMore{};
    unsigned char c = static_cast<unsigned char>(*p);
    if (c == '"') {
      std::string_view s(start, size_t(p - start));
      ++p;
      return s;
    }
    if (c == '\\') {
      string_slow(p, start, scratch);
      return scratch ? std::string_view(*scratch) : std::string_view();
    }
    if (c < 0x20) malformed(p, "control character " + show(char(c)) + " in a string");
    // UTF-8: the padding's zero bytes are never continuation bytes.
    size_t n = utf8_length(reinterpret_cast<const unsigned char*>(p));
    if (n == 0) {
      if (p + 4 > end() && !eof_) throw NeedMore{};
      malformed(p, "invalid UTF-8 byte " + show(char(c)) + " in a string");
    }
    if (p + n > end()) throw NeedMore{};
    p += n;
  }
}

inline int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

inline void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += char(cp);
  } else if (cp < 0x800) {
    out += char(0xC0 | (cp >> 6));
    out += char(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += char(0xE0 | (cp >> 12));
    out += char(0x80 | ((cp >> 6) & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  } else {
    out += char(0xF0 | (cp >> 18));
    out += char(0x80 | ((cp >> 12) & 0x3F));
    out += char(0x80 | ((cp >> 6) & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  }
}

// A string with escapes, from `start` (after the quote); p at the first '\\'.
void Scanner::string_slow(const char*& p, const char* start, std::string* out) {
  if (out) out->assign(start, size_t(p - start));
  auto read_hex4 = [&](const char* q) -> int {
    int v = 0;
    for (int i = 0; i < 4; ++i) {
      if (q + i >= end()) throw NeedMore{};
      int h = hex_value(q[i]);
      if (h < 0) malformed(q + i, "bad \\u escape");
      v = v * 16 + h;
    }
    return v;
  };
  for (;;) {
    if (p >= end()) throw NeedMore{};
    unsigned char c = static_cast<unsigned char>(*p);
    if (c == '"') {
      ++p;
      return;
    }
    if (c == '\\') {
      if (p + 1 >= end()) throw NeedMore{};
      char e = p[1];
      char lit = 0;
      switch (e) {
        case '"': lit = '"'; break;
        case '\\': lit = '\\'; break;
        case '/': lit = '/'; break;
        case 'b': lit = '\b'; break;
        case 'f': lit = '\f'; break;
        case 'n': lit = '\n'; break;
        case 'r': lit = '\r'; break;
        case 't': lit = '\t'; break;
        case 'u': {
          uint32_t cp = uint32_t(read_hex4(p + 2));
          const char* next = p + 6;
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (next + 1 >= end()) throw NeedMore{};
            if (next[0] != '\\' || next[1] != 'u') malformed(next, "unpaired UTF-16 surrogate in a \\u escape");
            uint32_t lo = uint32_t(read_hex4(next + 2));
            if (lo < 0xDC00 || lo > 0xDFFF) malformed(next, "unpaired UTF-16 surrogate in a \\u escape");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            next += 6;
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            malformed(p, "unpaired UTF-16 surrogate in a \\u escape");
          }
          if (out) append_utf8(*out, cp);
          p = next;
          continue;
        }
        default:
          malformed(p, "invalid escape " + show(e) + " in a string");
      }
      if (out) *out += lit;
      p += 2;
      continue;
    }
    if (c < 0x20) malformed(p, "control character " + show(char(c)) + " in a string");
    if (c < 0x80) {
      if (out) *out += char(c);
      ++p;
      continue;
    }
    size_t n = utf8_length(reinterpret_cast<const unsigned char*>(p));
    if (n == 0) {
      if (p + 4 > end() && !eof_) throw NeedMore{};
      malformed(p, "invalid UTF-8 byte " + show(char(c)) + " in a string");
    }
    if (p + n > end()) throw NeedMore{};
    if (out) out->append(p, n);
    p += n;
  }
}

// p at '-' or a digit. With `v`, fills in the number's value.
void Scanner::parse_number(const char*& p, TraceJsonValue* v) {
  const char* s = p;
  if (*p == '-') ++p;
  const char* int_start = p;
  if (*p == '0') {
    ++p;
  } else if (*p >= '1' && *p <= '9') {
    while (is_digit(*p)) ++p;
  } else {
    malformed(p, "invalid number");
  }
  size_t int_digits = size_t(p - int_start);
  bool frac = false, exp = false;
  if (*p == '.') {
    ++p;
    if (!is_digit(*p)) malformed(p, "invalid number: no digit after '.'");
    while (is_digit(*p)) ++p;
    frac = true;
  }
  if (*p == 'e' || *p == 'E') {
    ++p;
    if (*p == '+' || *p == '-') ++p;
    if (!is_digit(*p)) malformed(p, "invalid number: no digit in the exponent");
    while (is_digit(*p)) ++p;
    exp = true;
  }
  if (p >= end() && !eof_) throw NeedMore{};  // more digits may follow
  std::string_view text(s, size_t(p - s));
  if (exp || int_digits > 300) {
    std::string t(text);
    double d = std::strtod(t.c_str(), nullptr);
    if (!std::isfinite(d)) malformed(s, "number overflow: " + t.substr(0, 40));
  }
  if (!v) return;
  v->type = TraceJsonValue::Number;
  v->text = text;
  v->has_fraction = frac || exp;
  v->integral = false;
  if (!frac && !exp && int_digits <= 19) {
    uint64_t u = 0;
    for (const char* q = int_start; q < int_start + int_digits; ++q) u = u * 10 + uint64_t(*q - '0');
    bool neg = *s == '-';
    if (int_digits < 19 || u <= uint64_t(INT64_MAX)) {
      v->integral = true;
      v->integer = neg ? -int64_t(u) : int64_t(u);
    }
  }
  if (exp) {
    v->ns_ok = trace_us_to_ns(text, v->ns);
  } else {
    v->ns_ok = plain_us_to_ns(text, v->ns);
  }
}

void Scanner::parse_literal(const char*& p, const char* word, size_t n) {
  if (std::memcmp(p, word, n) == 0 && p + n <= end()) {
    p += n;
    return;
  }
  for (size_t i = 0; i < n; ++i)
    if (p + i >= end() || p[i] != word[i]) malformed(p + i, "invalid literal (expected " + std::string(word) + ")");
}

void Scanner::parse_field(const char*& p, TraceJsonValue& v, std::string* scratch) {
  char c = *p;
  if (c == '"') {
    v.type = TraceJsonValue::String;
    v.text = parse_string(p, scratch);
  } else if (c == '-' || is_digit(c)) {
    parse_number(p, &v);
  } else {
    v.type = skip_value(p);
    v.text = {};
  }
}

// Validates and skips one value (p at its first byte); returns its type.
TraceJsonValue::Type Scanner::skip_value(const char*& p) {
  char c = *p;
  switch (c) {
    case '"': parse_string(p, nullptr); return TraceJsonValue::String;
    case 't': parse_literal(p, "true", 4); return TraceJsonValue::Bool;
    case 'f': parse_literal(p, "false", 5); return TraceJsonValue::Bool;
    case 'n': parse_literal(p, "null", 4); return TraceJsonValue::Null;
    case '{': case '[': break;
    default:
      if (c == '-' || is_digit(c)) {
        parse_number(p, nullptr);
        return TraceJsonValue::Number;
      }
      malformed(p, "unexpected character " + show(c));
  }
  // Containers, iteratively (arbitrary depth without recursion).
  nest_.clear();
  for (;;) {
    // p at the start of a value.
    c = *p;
    if (c == '{' || c == '[') {
      nest_ += c;
      ++p;
      char d = peek(p);
      if ((c == '{' && d == '}') || (c == '[' && d == ']')) {
        ++p;
        nest_.pop_back();
      } else {
        if (c == '{') {
          if (d != '"') malformed(p, "expected a key (a string), got " + show(d));
          parse_string(p, nullptr);
          if (peek(p) != ':') malformed(p, "expected ':' after a key, got " + show(*p));
          ++p;
          peek(p);
        }
        continue;  // the first member's value
      }
    } else {
      skip_value(p);  // a scalar (no recursion into containers: handled above)
    }
    // After a value: close containers or move to the next member.
    for (;;) {
      if (nest_.empty()) return TraceJsonValue::Container;
      char d = peek(p);
      char open = nest_.back();
      if (d == ',') {
        ++p;
        char e = peek(p);
        if (open == '{') {
          if (e != '"') malformed(p, "expected a key (a string), got " + show(e));
          parse_string(p, nullptr);
          if (peek(p) != ':') malformed(p, "expected ':' after a key, got " + show(*p));
          ++p;
          peek(p);
        }
        break;  // next value
      }
      if ((open == '{' && d == '}') || (open == '[' && d == ']')) {
        ++p;
        nest_.pop_back();
        continue;
      }
      malformed(p, std::string("expected ',' or '") + (open == '{' ? '}' : ']') + "', got " + show(d));
    }
  }
}

// A key's text compared without building it when it has no escapes.
inline bool key_is(std::string_view k, const char* lit, size_t n) { return k.size() == n && std::memcmp(k.data(), lit, n) == 0; }

void Scanner::parse_args(const char*& p) {
  ++p;  // '{'
  char c = peek(p);
  if (c == '}') {
    ++p;
    return;
  }
  for (;;) {
    if (c != '"') malformed(p, "expected a key (a string), got " + show(c));
    std::string_view k = parse_string(p, &s_key_);
    if (peek(p) != ':') malformed(p, "expected ':' after a key, got " + show(*p));
    ++p;
    peek(p);
    if (key_is(k, "name", 4)) parse_field(p, ev_.args_name, &s_args_name_);
    else if (key_is(k, "correlation", 11) || (rank_key_ && key_is(k, "rank", 4)))
      parse_field(p, ev_.args_correlation, nullptr);
    else if (key_is(k, "stream", 6)) parse_field(p, ev_.args_stream, &s_args_stream_);
    else skip_value(p);
    c = peek(p);
    if (c == ',') {
      ++p;
      c = peek(p);
      continue;
    }
    if (c == '}') {
      ++p;
      return;
    }
    malformed(p, "expected ',' or '}', got " + show(c));
  }
}

void Scanner::parse_event(const char*& p) {
  ev_ = TraceJsonEvent{};
  ev_.offset = offset_of(p);
  ++p;  // '{'
  char c = peek(p);
  if (c == '}') {
    ++p;
    return;
  }
  for (;;) {
    if (c != '"') malformed(p, "expected a key (a string), got " + show(c));
    std::string_view k = parse_string(p, &s_key_);
    if (peek(p) != ':') malformed(p, "expected ':' after a key, got " + show(*p));
    ++p;
    peek(p);
    TraceJsonValue* v = nullptr;
    std::string* scratch = nullptr;
    switch (k.size()) {
      case 2:
        if (key_is(k, "ph", 2)) v = &ev_.ph, scratch = &s_ph_;
        else if (key_is(k, "ts", 2)) v = &ev_.ts;
        else if (key_is(k, "id", 2)) v = &ev_.id, scratch = &s_id_;
        else if (key_is(k, "bp", 2)) v = &ev_.bp, scratch = &s_bp_;
        break;
      case 3:
        if (key_is(k, "dur", 3)) v = &ev_.dur;
        else if (key_is(k, "pid", 3)) v = &ev_.pid, scratch = &s_pid_;
        else if (key_is(k, "tid", 3)) v = &ev_.tid, scratch = &s_tid_;
        else if (key_is(k, "cat", 3)) v = &ev_.cat, scratch = &s_cat_;
        break;
      case 4:
        if (key_is(k, "name", 4)) v = &ev_.name, scratch = &s_name_;
        else if (key_is(k, "args", 4) && *p == '{') {
          parse_args(p);
          goto next;
        }
        break;
      default:
        break;
    }
    if (v) parse_field(p, *v, scratch);
    else skip_value(p);
  next:
    c = peek(p);
    if (c == ',') {
      ++p;
      c = peek(p);
      continue;
    }
    if (c == '}') {
      ++p;
      return;
    }
    malformed(p, "expected ',' or '}', got " + show(c));
  }
}

void Scanner::events_loop(bool bare_array) {
  // In a bare array the format allows the input to stop between events.
  bool stop = false;
  auto at_eof_between = [&]() -> bool {
    if (!bare_array) truncated();
    result_.missing_close = true;
    stop = true;
    return false;
  };
  auto at_eof_inside = [&]() -> bool { truncated(); };
  bool first = true;
  for (;;) {
    bool closed = false, is_event = false;
    uint64_t element_offset = 0;
    TraceJsonValue::Type type = TraceJsonValue::Missing;
    // The element (or the closing ']' of an empty array).
    bool started = false;
    bool ok = unit(
        [&](const char*& p) {
          started = false;
          char c = peek(p);
          if (first && c == ']') {
            ++p;
            closed = true;
            return;
          }
          started = true;
          element_offset = offset_of(p);
          if (c == '{') {
            parse_event(p);
            is_event = true;
          } else {
            type = skip_value(p);
          }
        },
        [&]() -> bool { return started ? at_eof_inside() : at_eof_between(); });
    if (!ok || stop) return;
    if (closed) return;
    if (is_event) sink_.event(ev_);
    else {
      TraceJsonValue v;
      v.type = type;
      sink_.bad_element(element_offset, v.type_name());
    }
    first = false;
    // The separator.
    unit(
        [&](const char*& p) {
          char c = peek(p);
          if (c == ',') {
            ++p;
          } else if (c == ']') {
            ++p;
            closed = true;
          } else {
            malformed(p, "expected ',' or ']' after an event, got " + show(c));
          }
        },
        at_eof_between);
    if (stop || closed) return;
  }
}

TraceJsonScanResult Scanner::run() {
  refill();
  auto at_eof = [&]() -> bool { truncated(); };
  // BOM, then the root.
  if (len_ >= 3 && std::memcmp(data(), "\xEF\xBB\xBF", 3) == 0) pos_ = 3;
  char root = 0;
  unit([&](const char*& p) { root = peek(p); }, at_eof);
  if (root == '[') {
    ++pos_;
    result_.found_events = true;
    events_loop(true);
  } else if (root == '{') {
    result_.root_is_object = true;
    ++pos_;
    bool first = true, done = false;
    while (!done) {
      bool events = false;
      unit(
          [&](const char*& p) {
            events = false;
            rank_key_ = false;
            char c = peek(p);
            if (first && c == '}') {
              ++p;
              done = true;
              return;
            }
            if (c != '"') malformed(p, "expected a key (a string), got " + show(c));
            std::string_view k = parse_string(p, &s_key_);
            if (peek(p) != ':') malformed(p, "expected ':' after a key, got " + show(*p));
            ++p;
            char v = peek(p);
            if (!result_.found_events && v == '[' && key_is(k, "traceEvents", 11)) {
              ++p;
              events = true;
              return;
            }
            if (v == '{' && key_is(k, "distributedInfo", 15)) {
              ev_ = TraceJsonEvent{};
              rank_key_ = true;  // "rank" lands where args.correlation would
              parse_args(p);
              rank_key_ = false;
              if (ev_.args_correlation.type == TraceJsonValue::Number && ev_.args_correlation.integral)
                result_.rank = ev_.args_correlation.integer;
              ev_ = TraceJsonEvent{};
              return;
            }
            skip_value(p);
          },
          at_eof);
      if (done) break;
      first = false;
      if (events) {
        result_.found_events = true;
        events_loop(false);
      }
      unit(
          [&](const char*& p) {
            char c = peek(p);
            if (c == ',') {
              ++p;
            } else if (c == '}') {
              ++p;
              done = true;
            } else {
              malformed(p, "expected ',' or '}', got " + show(c));
            }
          },
          at_eof);
    }
  } else {
    unit([&](const char*& p) { skip_value(p); }, at_eof);
  }
  if (!result_.missing_close) {
    // Nothing but white space may follow the root.
    for (;;) {
      const char* p = data() + pos_;
      while (p < end() && is_ws(*p)) ++p;
      pos_ = size_t(p - data());
      if (p < end()) malformed(p, "unexpected " + show(*p) + " after the end of the JSON document");
      if (eof_) break;
      refill();
    }
  }
  result_.bytes = base_ + len_;
  return result_;
}

}  // namespace

const char* TraceJsonValue::type_name() const {
  switch (type) {
    case Number: return "a number";
    case String: return "a string";
    case Null: return "null";
    case Bool: return "a boolean";
    case Container: return "an object or array";
    default: return "missing";
  }
}

namespace {
// A number without exponent: exact decimal arithmetic.
bool plain_us_to_ns(std::string_view text, int64_t& out) {
  const char* p = text.data();
  const char* e = p + text.size();
  bool neg = p < e && *p == '-';
  if (neg) ++p;
  {
    int64_t whole = 0;
    int digits = 0;
    for (; p < e && is_digit(*p); ++p) {
      if (++digits > 16) return false;  // > 1e16 us: out of range anyway
      whole = whole * 10 + (*p - '0');
    }
    int64_t frac = 0;
    int fd = 0;
    bool round_up = false;
    if (p < e && *p == '.') {
      for (++p; p < e && is_digit(*p); ++p, ++fd) {
        if (fd < 3) frac = frac * 10 + (*p - '0');
        else if (fd == 3) round_up = *p >= '5';
      }
    }
    for (int i = fd; i < 3; ++i) frac *= 10;
    if (whole > kMaxAbsNs / 1000) return false;  // before multiplying: 16 digits can overflow int64
    int64_t ns = whole * 1000 + frac + (round_up ? 1 : 0);
    if (ns > kMaxAbsNs) return false;
    out = neg ? -ns : ns;
    return true;
  }
}
}  // namespace

bool trace_us_to_ns(std::string_view text, int64_t& out) {
  if (text.find_first_of("eE") == std::string_view::npos) return plain_us_to_ns(text, out);
  std::string t(text);
  double v = std::strtod(t.c_str(), nullptr);
  if (!std::isfinite(v) || std::fabs(v) * 1000.0 > double(kMaxAbsNs)) return false;
  out = std::llround(v * 1000.0);
  return true;
}

TraceJsonScanResult scan_trace_json(InputStream& in, TraceJsonEventSink& sink, Progress* progress) {
  Scanner s(in, sink, progress);
  return s.run();
}

}  // namespace fg
