#include "folded/folded_reader.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <iostream>
#include <memory>
#include <stdexcept>

#include "diagnostics/input_error.h"
#include "diagnostics/terminal_text.h"
#include "folded/folded_writer.h"
#include "folded/input_stream.h"
#include "folded/stack_record_queue.h"
#include "folded/stream_head.h"

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

// The text side of adding a stack: how many root-most frames it shares with
// the previous stack of the same profile (whose nodes are reused: sorted
// folded files share long prefixes line to line, so most frames are neither
// hashed nor looked up), and the ids of the others, interned. Touches only
// the profile's names, so a tree can be built from its output on another
// thread (StackPlacer) while it goes on.
class StackSplitter {
 public:
  explicit StackSplitter(FoldedProfile& p) : p_(p) {}

  uint64_t truncated_stacks = 0, truncated_names = 0;

  // Returns the frames s shares with the previous stack; ids() are the rest.
  size_t split(std::string_view s) {
    size_t common = common_prefix(s, prev_);
    size_t k = 0;
    while (k < ends_.size() && ends_[k] < common) ++k;
    if (k < ends_.size() && ends_[k] == common && (common == s.size() || s[common] == ';')) ++k;
    ends_.resize(k);
    const size_t shared = k;
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
    ids_.resize(names_.size());
    if (!names_.empty()) p_.intern_all(names_.data(), names_.size(), ids_.data());
    prev_.assign(s.data(), s.size());
    return shared;
  }
  const std::vector<FrameId>& ids() const { return ids_; }

 private:
  FoldedProfile& p_;
  std::string prev_;
  std::vector<size_t> ends_;
  std::vector<std::string_view> names_;
  std::vector<FrameId> ids_;
};

// The tree side: the nodes of the previous stack placed in one profile.
// Touches only the profile's tree (never its names).
class StackPlacer {
 public:
  // Stacks go below `base` (the root, or FoldedReadOptions::root_frame's node).
  StackPlacer(FoldedProfile& p, NodeId base) : p_(p), base_(base) {}

  void place(size_t shared, const FrameId* ids, size_t n, double weight) {
    if (shared > nodes_.size()) throw std::logic_error("folded reader: a stack shares more frames than the last had");
    nodes_.resize(shared + n);
    if (n) p_.add_path(shared ? nodes_[shared - 1] : base_, ids, n, nodes_.data() + shared);
    p_.add_self(nodes_.empty() ? base_ : nodes_.back(), weight);
  }

 private:
  FoldedProfile& p_;
  const NodeId base_;
  std::vector<NodeId> nodes_;
};

// Stacks into one or two profiles (a three-column file's two), in input
// order. Small inputs are placed as they are split, on the reading thread.
// Past thread_after stacks the tree walk (about half the work on shuffled
// input, where every frame is looked up from the root) moves to a worker
// thread: the reading thread splits and interns, and hands the frame ids
// over in batches of records; the same profile in the end, as the records
// are placed in order and the names interned in order.
class StackInserter {
 public:
  StackInserter(FoldedProfile& a, FoldedProfile* b, uint64_t thread_after, NodeId base_a)
      : split_a_(a), place_a_(a, base_a), thread_after_(thread_after) {
    if (b) {
      split_b_ = std::make_unique<StackSplitter>(*b);
      place_b_ = std::make_unique<StackPlacer>(*b, 0);
    }
  }

  // profile: 0 = a, 1 = b.
  void insert(int profile, std::string_view s, double weight) {
    StackSplitter& split = profile ? *split_b_ : split_a_;
    const size_t shared = split.split(s);
    const std::vector<FrameId>& ids = split.ids();
    if (!records_) {
      placer(profile).place(shared, ids.data(), ids.size(), weight);
      if (++stacks_ == thread_after_)
        records_ = std::make_unique<StackRecordQueue>(
            [this](uint32_t tag, const FrameId* frames, size_t n, uint64_t bits) {
              double w;
              std::memcpy(&w, &bits, sizeof w);
              placer(tag & kProfileB ? 1 : 0).place(tag & ~kProfileB, frames, n, w);
            });
      return;
    }
    uint64_t bits;
    std::memcpy(&bits, &weight, sizeof bits);
    records_->add(uint32_t(shared) | (profile ? kProfileB : 0), ids.data(), ids.size(), bits);
  }

  // Every stack placed (and the worker's error, if any, rethrown).
  void finish() {
    if (records_) records_->finish();
  }

  uint64_t truncated_stacks() const { return std::max(split_a_.truncated_stacks, split_b_ ? split_b_->truncated_stacks : 0); }
  uint64_t truncated_names() const { return std::max(split_a_.truncated_names, split_b_ ? split_b_->truncated_names : 0); }

 private:
  // A record's tag: the frames shared with the stack before, and which
  // profile in the top bit (kMaxStackDepth keeps the count far below it).
  static constexpr uint32_t kProfileB = uint32_t(1) << 31;

  StackPlacer& placer(int profile) { return profile ? *place_b_ : place_a_; }

  StackSplitter split_a_;
  std::unique_ptr<StackSplitter> split_b_;
  StackPlacer place_a_;
  std::unique_ptr<StackPlacer> place_b_;
  const uint64_t thread_after_;
  uint64_t stacks_ = 0;
  std::unique_ptr<StackRecordQueue> records_;  // last: stopped before the placers go
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
      : name_(std::move(name)), options_(options), stacks_(a, b, options.tree_thread_after, base_node(a, b, options)), diff_(b != nullptr), units_(&a.units) {}

  // The node stacks go below: the root, or the options' root frame.
  static NodeId base_node(FoldedProfile& a, const FoldedProfile* b, const FoldedReadOptions& options) {
    if (options.root_frame.empty()) return 0;
    if (b) throw std::logic_error("folded reader: a root frame for three-column input");
    return a.child(0, a.intern(clamp_frame_name(options.root_frame)));
  }

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
    if (diff_) {
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
    } else if (!diff_) {
      stacks_.insert(0, stack, count);
    } else {
      if (count != 0) stacks_.insert(0, stack, count);
      if (count_b != 0) stacks_.insert(1, stack, count_b);
    }
  }

  void finish() {
    stacks_.finish();
    // Three-column lines go to both profiles: count each line once.
    stats.truncated_stacks = std::max(stats.truncated_stacks, stacks_.truncated_stacks());
    stats.truncated_names = std::max(stats.truncated_names, stacks_.truncated_names());
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
        ++stats.truncated_stacks;
        break;
      }
      std::string_view name = stack.substr(start, end - start);
      if (name.size() > kMaxFrameNameBytes) {
        name = clamp_frame_name(name);
        ++stats.truncated_names;
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
  StackInserter stacks_;
  const bool diff_;  // three columns, into a and b
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
  if (path == "-" || is_unpeekable_stream(path)) return false;
  // A pipe (process substitution) cannot be scanned ahead of its reader:
  // its head's whole lines decide.
  constexpr size_t kHead = 4096;
  if (std::optional<std::string> head = stream_head(path, kHead)) {
    std::string_view text = *head;
    const size_t last = text.find_last_of('\n');
    if (head->size() == kHead) text = text.substr(0, last == std::string_view::npos ? 0 : last);
    return looks_like_diff_folded_text(text);
  }
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
