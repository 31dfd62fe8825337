#include "traces/json_stream.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "diagnostics/input_error.h"
#include "diagnostics/progress.h"
#include "diagnostics/utf8.h"

namespace fg {

using json_stream::is_digit;
using json_stream::NeedMore;
using json_stream::show;

namespace {

constexpr int64_t kMaxAbsNs = int64_t(4) * 1000 * 1000 * 1000 * 1000 * 1000 * 1000;  // 4e18 ns

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

// UTF-8 sequence at p (first byte >= 0x80) in the buffered bytes: its
// length, or 0 if invalid or cut by the end of the data (the callers tell
// the two apart).
inline size_t utf8_length(const char* p, const char* end) {
  return utf8_sequence_length(std::string_view(p, size_t(end - p)), 0);
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

}  // namespace

std::string json_stream::show(char c) {
  unsigned char u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f) return std::string("'") + c + "'";
  char b[8];
  std::snprintf(b, sizeof b, "0x%02x", u);
  return b;
}

JsonStream::JsonStream(InputStream& in, Progress* progress)
    : in_(in), progress_(progress), buf_(json_stream::kFirstBlock + json_stream::kPad, '\0'),
      cap_(json_stream::kFirstBlock) {}

void JsonStream::refill() {
  using namespace json_stream;
  if (pos_ > 0) {
    std::memmove(buf_.data(), buf_.data() + pos_, len_ - pos_);
    base_ += pos_;
    len_ -= pos_;
    pos_ = 0;
  }
  if (len_ == cap_) {  // one value fills the buffer: grow it, up to the limit
    if (cap_ >= kMaxValue) throw InputError::at_offset(in_.name(), base_, "a single JSON value larger than 64 MiB");
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

void JsonStream::truncated() const {
  throw InputError::at_offset(in_.name(), base_ + len_, "malformed JSON: unexpected end of input (truncated file?)");
}

void JsonStream::malformed(const char* at, const std::string& what) const {
  if (at >= end()) {
    if (!eof_) throw NeedMore{};
    truncated();
  }
  throw InputError::at_offset(in_.name(), offset_of(at), "malformed JSON: " + what);
}

std::string_view JsonStream::parse_key(const char*& p, std::string* scratch) {
  if (*p != '"') malformed(p, "expected a key (a string), got " + show(*p));
  std::string_view k = parse_string(p, scratch);
  if (peek(p) != ':') malformed(p, "expected ':' after a key, got " + show(*p));
  ++p;
  peek(p);
  return k;
}

// p at the opening quote. Returns the string's text: a view of the buffer
// when it has no escapes, else `scratch` (or an empty view when scratch is
// null: the caller only validates).
std::string_view JsonStream::parse_string(const char*& p, std::string* scratch) {
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
    size_t n = utf8_length(p, end());
    if (n == 0) {
      if (p + 4 > end() && !eof_) throw NeedMore{};
      malformed(p, "invalid UTF-8 byte " + show(char(c)) + " in a string");
    }
    if (p + n > end()) throw NeedMore{};
    p += n;
  }
}

// A string with escapes, from `start` (after the quote); p at the first '\\'.
void JsonStream::string_slow(const char*& p, const char* start, std::string* out) {
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
    size_t n = utf8_length(p, end());
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
void JsonStream::parse_number(const char*& p, TraceJsonValue* v) {
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

void JsonStream::parse_literal(const char*& p, const char* word, size_t n) {
  if (std::memcmp(p, word, n) == 0 && p + n <= end()) {
    p += n;
    return;
  }
  for (size_t i = 0; i < n; ++i)
    if (p + i >= end() || p[i] != word[i]) malformed(p + i, "invalid literal (expected " + std::string(word) + ")");
}

void JsonStream::parse_field(const char*& p, TraceJsonValue& v, std::string* scratch) {
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
TraceJsonValue::Type JsonStream::skip_value(const char*& p) {
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
        if (c == '{') parse_key(p, nullptr);
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
        peek(p);
        if (open == '{') parse_key(p, nullptr);
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

bool trace_us_to_ns(std::string_view text, int64_t& out) {
  if (text.find_first_of("eE") == std::string_view::npos) return plain_us_to_ns(text, out);
  std::string t(text);
  double v = std::strtod(t.c_str(), nullptr);
  if (!std::isfinite(v) || std::fabs(v) * 1000.0 > double(kMaxAbsNs)) return false;
  out = std::llround(v * 1000.0);
  return true;
}

}  // namespace fg
