#include "folded/folded_reader.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <iostream>

#include "diagnostics/input_error.h"
#include "diagnostics/terminal_text.h"
#include "folded/folded_writer.h"
#include "folded/input_stream.h"

namespace fg {

bool parse_count(std::string_view t, double& value) {
  if (t.empty()) return false;
  // Fast path: plain digits.
  if (t.size() <= 18) {
    uint64_t v = 0;
    size_t i = 0;
    for (; i < t.size(); ++i) {
      unsigned d = static_cast<unsigned char>(t[i]) - '0';
      if (d > 9) break;
      v = v * 10 + d;
    }
    if (i == t.size()) {
      value = static_cast<double>(v);
      return true;
    }
  }
  char c0 = t[0];
  if (!((c0 >= '0' && c0 <= '9') || c0 == '.')) return false;
  for (char c : t)
    if (!((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-')) return false;
  double v = 0;
  auto r = std::from_chars(t.data(), t.data() + t.size(), v, std::chars_format::general);
  if (r.ec != std::errc() || r.ptr != t.data() + t.size() || !std::isfinite(v) || v < 0) return false;
  value = v;
  return true;
}

namespace {

bool is_space(char c) { return c == ' ' || c == '\t'; }

size_t common_prefix(std::string_view a, std::string_view b) {
  size_t n = std::min(a.size(), b.size()), i = 0;
  while (i + 8 <= n) {
    uint64_t x, y;
    std::memcpy(&x, a.data() + i, 8);
    std::memcpy(&y, b.data() + i, 8);
    if (x != y) break;
    i += 8;
  }
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

// Inserts stacks into a profile, reusing the nodes of the previous stack's
// common prefix: sorted folded files share long prefixes line to line, so
// most frames are neither hashed nor looked up.
class PathInserter {
 public:
  explicit PathInserter(FoldedProfile& p) : p_(p) {}

  uint64_t truncated_stacks = 0, truncated_names = 0;

  void insert(std::string_view s, double weight) {
    size_t common = common_prefix(s, prev_);
    size_t k = 0;
    while (k < ends_.size() && ends_[k] < common) ++k;
    if (k < ends_.size() && ends_[k] == common && (common == s.size() || s[common] == ';')) ++k;
    ends_.resize(k);
    nodes_.resize(k);
    NodeId n = k ? nodes_[k - 1] : 0;
    size_t start = k ? ends_[k - 1] + 1 : 0;
    names_.clear();
    // At most kMaxStackDepth frames (the root-most ones); the prefix reuse
    // above stays valid because truncation depends only on the text.
    while (start <= s.size() && k + names_.size() < kMaxStackDepth) {
      const void* semi = std::memchr(s.data() + start, ';', s.size() - start);
      size_t end = semi ? static_cast<const char*>(semi) - s.data() : s.size();
      std::string_view name = s.substr(start, end - start);
      if (name.size() > kMaxFrameNameBytes) {
        name = clamp_frame_name(name);
        ++truncated_names;
      }
      names_.push_back(name);
      ends_.push_back(end);
      start = end + 1;
    }
    if (start <= s.size()) ++truncated_stacks;
    if (!names_.empty()) {
      ids_.resize(names_.size());
      p_.intern_all(names_.data(), names_.size(), ids_.data());
      nodes_.resize(k + names_.size());
      p_.add_path(n, ids_.data(), ids_.size(), nodes_.data() + k);
      n = nodes_.back();
    }
    p_.add_self(n, weight);
    prev_.assign(s.data(), s.size());
  }

 private:
  FoldedProfile& p_;
  std::string prev_;
  std::vector<size_t> ends_;
  std::vector<NodeId> nodes_;
  std::vector<std::string_view> names_;
  std::vector<FrameId> ids_;
};

std::string printable(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 40)) out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
  if (s.size() > 40) out += "...";
  return out;
}

class LineParser {
 public:
  LineParser(std::string name, const FoldedReadOptions& options, FoldedProfile& a, FoldedProfile* b)
      : name_(std::move(name)), options_(options), a_(a), b_(b ? new PathInserter(*b) : nullptr), units_(&a.units) {}

  void line(std::string_view s, uint64_t line_no) {
    ++stats.lines;
    if (!s.empty() && s.back() == '\r') s.remove_suffix(1);
    while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
    size_t first = 0;
    while (first < s.size() && is_space(s[first])) ++first;
    if (first == s.size()) return;  // blank
    // "# fgtool units=ns" (folded_writer.h): what the counts mean.
    if (line_no == 1 && s.substr(first).rfind(kUnitsHeaderPrefix, 0) == 0) {
      std::string_view u = s.substr(first + std::char_traits<char>::length(kUnitsHeaderPrefix));
      if (!u.empty() && u.find_first_of(" \t;") == std::string_view::npos) *units_ = std::string(u);
      return;
    }
    double count = 0, count_b = 0;
    std::string_view stack;
    if (!split_count(s, line_no, stack, count)) return;
    if (b_) {
      double count_a = 0;
      std::string_view stack_a;
      if (!split_count(stack, line_no, stack_a, count_a, "expected 'STACK COUNT_A COUNT_B' (three columns)")) return;
      count_b = count;
      count = count_a;
      stack = stack_a;
    }
    if (stack.size() == 0) return malformed(line_no, "empty stack before the count");
    // Each count is finite, but their sum can pass the largest double and
    // turn every total and share into inf and NaN: refuse at the line that does it.
    if (!std::isfinite(sum_a_ + count) || !std::isfinite(sum_b_ + count_b))
      return malformed(line_no, "the counts up to this line sum past the largest number fgtool can hold (about 1.8e308)");
    sum_a_ += count;
    sum_b_ += count_b;
    ++stats.stacks;
    if (sink) {
      (*sink)(clamp_for_sink(stack), count);
    } else if (!b_) {
      a_.insert(stack, count);
    } else {
      if (count != 0) a_.insert(stack, count);
      if (count_b != 0) b_->insert(stack, count_b);
    }
  }

  void finish() {
    // Three-column lines go to both profiles: count each line once.
    stats.truncated_stacks = std::max(a_.truncated_stacks, b_ ? b_->truncated_stacks : 0);
    stats.truncated_names = std::max(a_.truncated_names, b_ ? b_->truncated_names : 0);
    if (stats.truncated_stacks)
      warn(name_ + ": " + std::to_string(stats.truncated_stacks) + " stack" + (stats.truncated_stacks == 1 ? "" : "s") +
           " deeper than " + std::to_string(kMaxStackDepth) + " frames cut to their " +
           std::to_string(kMaxStackDepth) + " root-most frames");
    if (stats.truncated_names)
      warn(name_ + ": " + std::to_string(stats.truncated_names) + " frame name" + (stats.truncated_names == 1 ? "" : "s") +
           " longer than " + std::to_string(kMaxFrameNameBytes) + " bytes truncated");
    if (stats.skipped == 0) return;
    warn(name_ + ": skipped " + std::to_string(stats.skipped) + " malformed line" + (stats.skipped == 1 ? "" : "s") +
         " (first at line " + std::to_string(stats.first_skipped_line) + ": " + stats.first_skipped_reason + ")");
  }

  // The stack text within the limits (the flame-chart path gets text, not a
  // profile): itself when within them, else a cut copy.
  std::string_view clamp_for_sink(std::string_view stack) {
    size_t depth = 0, start = 0;
    bool fits = true;
    while (start <= stack.size()) {
      size_t end = stack.find(';', start);
      if (end == std::string_view::npos) end = stack.size();
      if (++depth > kMaxStackDepth || end - start > kMaxFrameNameBytes) {
        fits = false;
        break;
      }
      start = end + 1;
    }
    if (fits) return stack;
    clamped_.clear();
    depth = 0;
    start = 0;
    while (start <= stack.size()) {
      size_t end = stack.find(';', start);
      if (end == std::string_view::npos) end = stack.size();
      if (depth == kMaxStackDepth) {
        ++a_.truncated_stacks;
        break;
      }
      std::string_view name = stack.substr(start, end - start);
      if (name.size() > kMaxFrameNameBytes) {
        name = clamp_frame_name(name);
        ++a_.truncated_names;
      }
      if (depth++) clamped_ += ';';
      clamped_.append(name);
      start = end + 1;
    }
    return clamped_;
  }

  void warn(const std::string& msg) {
    if (options_.warn) options_.warn(msg);
    else std::cerr << "fgtool: warning: " << terminal_safe(msg) << "\n";
  }

  FoldedReadStats stats;
  const std::function<void(std::string_view, double)>* sink = nullptr;  // instead of a profile

 private:
  // Splits "STACK COUNT" at the last run of blanks.
  bool split_count(std::string_view s, uint64_t line_no, std::string_view& stack, double& count,
                   const char* expected = "expected 'frame;frame;... COUNT'") {
    size_t p = s.size();
    while (p > 0 && !is_space(s[p - 1])) --p;
    if (p == 0) {
      malformed(line_no, std::string("no count at the end of the line (") + expected + ")");
      return false;
    }
    std::string_view token = s.substr(p);
    if (!parse_count(token, count)) {
      malformed(line_no, "'" + printable(token) + "' is not a count (" + expected + ")");
      return false;
    }
    while (p > 0 && is_space(s[p - 1])) --p;
    stack = s.substr(0, p);
    return true;
  }

  void malformed(uint64_t line_no, const std::string& why) {
    if (!options_.lenient) throw InputError::at_line(name_, line_no, why);
    if (stats.skipped++ == 0) {
      stats.first_skipped_line = line_no;
      stats.first_skipped_reason = why;
    }
  }

  std::string name_;
  std::string clamped_;
  double sum_a_ = 0, sum_b_ = 0;
  const FoldedReadOptions& options_;
  PathInserter a_;
  std::unique_ptr<PathInserter> b_;
  std::string* units_;  // a's units, set by a header line
};

FoldedReadStats read_stream(const std::string& path, const FoldedReadOptions& options, FoldedProfile& a,
                            FoldedProfile* b,
                            const std::function<void(std::string_view, double)>* sink = nullptr) {
  InputStream in(path);
  LineParser parser(in.name(), options, a, b);
  parser.sink = sink;
  parser.stats.bytes = for_each_line(in, [&](std::string_view line, uint64_t no) { parser.line(line, no); });
  parser.finish();
  return parser.stats;
}

FoldedReadStats read_text(std::string_view text, const std::string& name, const FoldedReadOptions& options,
                          FoldedProfile& a, FoldedProfile* b) {
  LineParser parser(name, options, a, b);
  parser.stats.bytes = text.size();
  // The same line rules as for_each_line: a leading BOM dropped, CR-only files split at '\r'.
  if (text.substr(0, 3) == line_detail::kUtf8Bom) text.remove_prefix(3);
  char delim = '\n';
  line_detail::detect_line_end(text, true, delim);
  uint64_t no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find(delim, pos);
    if (nl == std::string_view::npos) nl = text.size();
    parser.line(text.substr(pos, nl - pos), ++no);
    pos = nl + 1;
  }
  parser.finish();
  return parser.stats;
}

}  // namespace

FoldedReadStats read_folded(const std::string& path, FoldedProfile& into, const FoldedReadOptions& options) {
  return read_stream(path, options, into, nullptr);
}

FoldedReadStats read_folded_text(std::string_view text, const std::string& name, FoldedProfile& into,
                                 const FoldedReadOptions& options) {
  return read_text(text, name, options, into, nullptr);
}

FoldedReadStats for_each_folded_line(const std::string& path,
                                     const std::function<void(std::string_view stack, double count)>& fn,
                                     const FoldedReadOptions& options) {
  FoldedProfile unused;
  return read_stream(path, options, unused, nullptr, &fn);
}

FoldedReadStats read_diff_folded(const std::string& path, FoldedProfile& a, FoldedProfile& b,
                                 const FoldedReadOptions& options) {
  return read_stream(path, options, a, &b);
}

FoldedReadStats read_diff_folded_text(std::string_view text, const std::string& name, FoldedProfile& a,
                                      FoldedProfile& b, const FoldedReadOptions& options) {
  return read_text(text, name, options, a, &b);
}

namespace {

// 1 if the line is "STACK COUNT COUNT", 0 if it is anything else, -1 if blank.
int three_column_line(std::string_view s) {
  if (!s.empty() && s.back() == '\r') s.remove_suffix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  size_t first = 0;
  while (first < s.size() && is_space(s[first])) ++first;
  if (first == s.size()) return -1;
  double v;
  for (int col = 0; col < 2; ++col) {
    size_t p = s.size();
    while (p > 0 && !is_space(s[p - 1])) --p;
    if (p == 0 || !parse_count(s.substr(p), v)) return 0;
    while (p > 0 && is_space(s[p - 1])) --p;
    s = s.substr(0, p);
  }
  return s.empty() ? 0 : 1;
}

}  // namespace

bool looks_like_diff_folded_text(std::string_view text) {
  if (text.substr(0, 3) == line_detail::kUtf8Bom) text.remove_prefix(3);
  char delim = '\n';
  line_detail::detect_line_end(text, true, delim);
  bool any = false;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find(delim, pos);
    if (nl == std::string_view::npos) nl = text.size();
    int kind = three_column_line(text.substr(pos, nl - pos));
    pos = nl + 1;
    if (kind == 0) return false;
    any = any || kind == 1;
  }
  return any;
}

bool looks_like_diff_folded(const std::string& path) {
  if (path == "-") return false;
  try {
    // The whole file, stopping at the first line that is not three-column:
    // ordinary folded files stop at once, and a folded file whose first
    // stack happens to end in a number ("train;epoch 1 100") is not
    // mistaken for difffolded output by its first line.
    InputStream in(path);
    bool any = false, all = true;
    for_each_line(in, [&](std::string_view line, uint64_t) {
      int kind = three_column_line(line);
      if (kind == 0) all = false;
      any = any || kind == 1;
      return all;
    });
    return any && all;
  } catch (const InputError&) {
    return false;
  }
}

}  // namespace fg
