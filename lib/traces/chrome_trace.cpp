#include "traces/chrome_trace.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <queue>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "diagnostics/input_error.h"
#include "diagnostics/progress.h"
#include "folded/input_stream.h"

namespace fg {

namespace {

// Timestamps are kept as integer nanoseconds so self times subtract exactly
// and identical stacks add up without floating-point noise. The limit keeps
// ts + dur inside int64 and covers epoch-based microsecond clocks.
// Stacks are cut at the depth the folded reader accepts, so that pathological
// nesting cannot make the output quadratic in size.
constexpr size_t kMaxFrames = 4096;

constexpr int64_t kMaxAbsNs = int64_t(4) * 1000 * 1000 * 1000 * 1000 * 1000 * 1000;  // 4e18 ns

// ---- byte source for nlohmann's iterator input adapter -------------------
// nlohmann reads one character at a time through an iterator pair; this one
// pulls blocks from an InputStream (plain or gzip) and knows how many bytes
// were consumed, which gives event byte offsets for messages.
class ByteSource {
 public:
  ByteSource(InputStream& in, Progress& progress) : in_(in), progress_(progress), buf_(1 << 20) {}
  bool at_end() {
    if (pos_ < len_) return false;
    if (eof_) return true;
    base_ += len_;
    pos_ = 0;
    len_ = in_.read(buf_.data(), buf_.size());
    if (len_ == 0) eof_ = true;
    progress_.update(base_);
    return len_ == 0;
  }
  char current() const { return buf_[pos_]; }
  void advance() { ++pos_; }
  uint64_t consumed() const { return base_ + pos_; }

 private:
  InputStream& in_;
  Progress& progress_;
  std::vector<char> buf_;
  size_t pos_ = 0, len_ = 0;
  uint64_t base_ = 0;
  bool eof_ = false;
};

class ByteIterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = char;
  ByteIterator() = default;
  explicit ByteIterator(ByteSource* s) : src_(s) {}
  char operator*() const { return src_->current(); }
  ByteIterator& operator++() {
    src_->advance();
    return *this;
  }
  ByteIterator operator++(int) {
    ByteIterator old = *this;
    src_->advance();
    return old;
  }
  // Only ever compared against the end iterator (a null source).
  bool operator==(const ByteIterator& o) const { return ended() == o.ended(); }
  bool operator!=(const ByteIterator& o) const { return !(*this == o); }

 private:
  bool ended() const { return !src_ || src_->at_end(); }
  ByteSource* src_ = nullptr;
};

// "12.345678" (microseconds) -> 12346 ns, exactly for plain decimals; other
// spellings (exponents) through double. False when out of range.
bool decimal_us_to_ns(const std::string& text, int64_t& out) {
  const char* p = text.c_str();
  bool neg = *p == '-';
  if (neg) ++p;
  if (text.find_first_of("eE") == std::string::npos) {
    int64_t whole = 0;
    int digits = 0;
    for (; *p >= '0' && *p <= '9'; ++p) {
      if (++digits > 16) return false;  // > 1e16 us: out of range anyway
      whole = whole * 10 + (*p - '0');
    }
    int64_t frac = 0;
    int fd = 0;
    bool round_up = false;
    if (*p == '.') {
      for (++p; *p >= '0' && *p <= '9'; ++p, ++fd) {
        if (fd < 3) frac = frac * 10 + (*p - '0');
        else if (fd == 3) round_up = *p >= '5';
      }
    }
    for (int i = fd; i < 3; ++i) frac *= 10;
    int64_t ns = whole * 1000 + frac + (round_up ? 1 : 0);
    if (ns > kMaxAbsNs) return false;
    out = neg ? -ns : ns;
    return true;
  }
  double v = std::strtod(text.c_str(), nullptr);
  if (!std::isfinite(v) || std::fabs(v) * 1000.0 > double(kMaxAbsNs)) return false;
  out = std::llround(v * 1000.0);
  return true;
}

enum class Field { None, Name, Ph, Ts, Dur, Pid, Tid, Args };

// A value as the parser saw it: its JSON type and, for the fields we use,
// its content.
struct Value {
  enum Type { Missing, Number, String, Other } type = Missing;
  const char* type_name = "missing";
  bool ns_ok = false;     // Number: fits as nanoseconds
  int64_t ns = 0;         // Number: value * 1000
  bool integral = false;  // Number: an integer (for pid/tid)
  int64_t integer = 0;
  std::string text;       // String: the text; Number: its spelling
};

struct Span {
  int64_t start, end;
  uint64_t offset;  // byte offset of the event: file order breaks ties
  FrameId name;
};

// Nesting order: by start, longer first, then file order (the earlier of two
// equal spans is the outer one).
bool span_before(const Span& a, const Span& b) {
  if (a.start != b.start) return a.start < b.start;
  if (a.end != b.end) return a.end > b.end;
  return a.offset < b.offset;
}
bool span_after(const Span& a, const Span& b) { return span_before(b, a); }

struct Mark {  // one B or E event
  int64_t ts;
  uint64_t offset;
  FrameId name;
  bool begin;
};

struct Thread {
  std::string pid_key, tid_key;  // "n:42" or "s:CPU Functions"
  std::vector<Span> spans;
  std::vector<Mark> marks;
};

std::string label_of(const std::string& key, const char* prefix) {
  if (key.compare(0, 2, "n:") == 0) return std::string(prefix) + " " + key.substr(2);
  return key.substr(2);
}

std::string quote_name(const std::string& name) {
  std::string s = name.size() > 60 ? name.substr(0, 57) + "..." : name;
  return "'" + s + "'";
}

class TraceHandler {
 public:
  TraceHandler(const std::string& file, ByteSource& src, FoldedProfile& profile, const ChromeTraceOptions& opt,
               ChromeTraceStats& stats)
      : file_(file), src_(src), profile_(profile), opt_(opt), stats_(stats) {}

  // ---- nlohmann SAX interface ----
  bool null() { return scalar(Value::Other, "null"); }
  bool boolean(bool) { return scalar(Value::Other, "a boolean"); }
  bool number_integer(int64_t v) {
    if (!want_value()) return stray("a number");
    Value& x = slot();
    x = Value{};
    x.type = Value::Number;
    x.type_name = "a number";
    x.integral = true;
    x.integer = v;
    x.text = std::to_string(v);
    x.ns_ok = v >= -kMaxAbsNs / 1000 && v <= kMaxAbsNs / 1000;
    x.ns = x.ns_ok ? v * 1000 : 0;
    return true;
  }
  bool number_unsigned(uint64_t v) {
    if (!want_value()) return stray("a number");
    Value& x = slot();
    x = Value{};
    x.type = Value::Number;
    x.type_name = "a number";
    x.text = std::to_string(v);
    x.integral = v <= uint64_t(std::numeric_limits<int64_t>::max());
    x.integer = x.integral ? int64_t(v) : 0;
    x.ns_ok = v <= uint64_t(kMaxAbsNs / 1000);
    x.ns = x.ns_ok ? int64_t(v) * 1000 : 0;
    return true;
  }
  bool number_float(double, const std::string& text) {
    if (!want_value()) return stray("a number");
    Value& x = slot();
    x = Value{};
    x.type = Value::Number;
    x.type_name = "a number";
    x.text = text;
    x.ns_ok = decimal_us_to_ns(text, x.ns);
    return true;
  }
  bool string(std::string& s) {
    if (in_args_ && depth_ == event_depth_ + 1 && args_key_is_name_) args_name_ = s;
    if (!want_value()) {
      if (depth_ == events_depth_) bad_element("a string");
      return true;
    }
    Value& x = slot();
    x.type = Value::String;
    x.type_name = "a string";
    x.text = std::move(s);
    return true;
  }
  bool binary(nlohmann::json::binary_t&) { return true; }
  bool start_object(std::size_t) {
    ++depth_;
    if (depth_ == 1) {
      root_is_object_ = true;
    } else if (events_depth_ > 0 && depth_ == events_depth_ + 1) {
      begin_event();
    } else if (in_event_ && depth_ == event_depth_ + 1) {
      if (field_ == Field::Args) in_args_ = true;
      else mark_container();
    }
    return true;
  }
  bool end_object() {
    if (in_event_ && depth_ == event_depth_) finish_event();
    if (in_args_ && depth_ == event_depth_ + 1) in_args_ = false;
    --depth_;
    return true;
  }
  bool start_array(std::size_t) {
    ++depth_;
    if (depth_ == 1) {
      events_depth_ = 1;
      found_events_ = true;
    } else if (depth_ == 2 && root_is_object_ && root_key_ == "traceEvents" && !found_events_) {
      events_depth_ = 2;
      found_events_ = true;
    } else if (events_depth_ > 0 && depth_ == events_depth_ + 1) {
      bad_element("an array");
    } else if (in_event_ && depth_ == event_depth_ + 1) {
      mark_container();
    }
    return true;
  }
  bool end_array() {
    if (depth_ == events_depth_) {
      events_depth_ = -1;  // done; later arrays are not events
      events_closed_ = true;
    }
    --depth_;
    return true;
  }
  bool key(std::string& k) {
    if (depth_ == 1 && root_is_object_) {
      root_key_ = k;
    } else if (in_event_ && depth_ == event_depth_) {
      field_ = classify(k);
    } else if (in_args_ && depth_ == event_depth_ + 1) {
      args_key_is_name_ = k == "name";
    }
    return true;
  }
  bool parse_error(std::size_t position, const std::string& /*token*/, const nlohmann::detail::exception& ex) {
    // nlohmann counts the offending character (or the end of input) as read:
    // report the 0-based offset of that character, at most the input's length.
    uint64_t at = position ? position - 1 : 0;
    error_position_ = std::min<uint64_t>(at, src_.consumed());
    at_end_of_input_ = src_.at_end() && error_position_ == src_.consumed();
    // "[json.exception.parse_error.101] parse error at line 1, column 9: syntax error ..." -> "syntax error ..."
    std::string m = ex.what();
    if (!m.empty() && m[0] == '[') {
      size_t close = m.find("] ");
      if (close != std::string::npos) m = m.substr(close + 2);
    }
    if (m.compare(0, 11, "parse error") == 0) {
      size_t colon = m.find(": ");
      if (colon != std::string::npos) m = m.substr(colon + 2);
    }
    error_ = m;
    return false;
  }

  // ---- after parsing ----
  bool between_events() const { return events_depth_ == 1 && depth_ == 1 && !in_event_; }
  bool found_events() const { return found_events_; }
  bool events_closed() const { return events_closed_; }
  bool root_is_object() const { return root_is_object_; }
  uint64_t error_position() const { return error_position_; }
  bool error_at_end_of_input() const { return at_end_of_input_; }
  const std::string& error() const { return error_; }

  void fold(FoldedProfile& profile);

 private:
  static Field classify(const std::string& k) {
    if (k.size() > 4) return k == "args" ? Field::Args : Field::None;
    if (k == "name") return Field::Name;
    if (k == "ph") return Field::Ph;
    if (k == "ts") return Field::Ts;
    if (k == "dur") return Field::Dur;
    if (k == "pid") return Field::Pid;
    if (k == "tid") return Field::Tid;
    if (k == "args") return Field::Args;
    return Field::None;
  }
  // Whether the current scalar is a direct field of the current event that we read.
  bool want_value() const { return in_event_ && depth_ == event_depth_ && field_ != Field::None && field_ != Field::Args; }
  Value& slot() {
    switch (field_) {
      case Field::Name: return name_;
      case Field::Ph: return ph_;
      case Field::Ts: return ts_;
      case Field::Dur: return dur_;
      case Field::Pid: return pid_;
      default: return tid_;
    }
  }
  bool stray(const char* type_name) {
    if (depth_ == events_depth_) bad_element(type_name);
    return true;
  }
  bool scalar(Value::Type t, const char* type_name) {
    if (want_value()) {
      Value& x = slot();
      x = Value{};
      x.type = t;
      x.type_name = type_name;
    } else if (depth_ == events_depth_) {
      bad_element(type_name);
    }
    return true;
  }
  void mark_container() {
    if (field_ == Field::None || field_ == Field::Args) return;
    Value& x = slot();
    x = Value{};
    x.type = Value::Other;
    x.type_name = "an object or array";
  }
  void bad_element(const char* what) {
    ++stats_.events;
    fail_event(src_.consumed(), std::string("traceEvents element is ") + what + ", not an event object");
  }
  void begin_event() {
    in_event_ = true;
    event_depth_ = depth_;
    event_offset_ = src_.consumed() ? src_.consumed() - 1 : 0;
    field_ = Field::None;
    name_ = ph_ = ts_ = dur_ = pid_ = tid_ = Value{};
    args_name_.clear();
    in_args_ = false;
    args_key_is_name_ = false;
  }
  // A per-event problem: an error, or counted and skipped when lenient.
  void fail_event(uint64_t offset, const std::string& what) {
    if (!opt_.lenient)
      throw InputError::at_offset(file_, offset, what + " (--lenient skips such events)");
    ++stats_.bad_events;
    if (stats_.first_bad_event.empty()) stats_.first_bad_event = "byte " + std::to_string(offset) + ": " + what;
  }
  std::string describe() const {
    std::string d = "event";
    if (name_.type == Value::String) d += " " + quote_name(name_.text);
    if (ph_.type == Value::String) d += " (ph '" + ph_.text + "')";
    return d;
  }
  bool need_time(const Value& v, const char* key) {
    if (v.type == Value::Missing) {
      fail_event(event_offset_, describe() + ": no \"" + key + "\"");
      return false;
    }
    if (v.type != Value::Number) {
      fail_event(event_offset_, describe() + ": \"" + key + "\" is " + v.type_name + ", expected a number");
      return false;
    }
    if (!v.ns_ok) {
      fail_event(event_offset_, describe() + ": \"" + key + "\" " + v.text.substr(0, 40) + " is out of range");
      return false;
    }
    return true;
  }
  // "n:42" / "s:name" key of a pid or tid; false when mistyped.
  bool id_key(const Value& v, const char* key, std::string& out) {
    if (v.type == Value::Missing) {
      out = "n:0";
      return true;
    }
    if (v.type == Value::String) {
      out = "s:" + v.text;
      return true;
    }
    if (v.type == Value::Number && v.integral) {
      out = "n:" + std::to_string(v.integer);
      return true;
    }
    fail_event(event_offset_, describe() + ": \"" + key + "\" is " +
                                  (v.type == Value::Number ? "not an integer" : v.type_name) +
                                  ", expected an integer or a string");
    return false;
  }
  uint32_t thread_index() {
    key_.clear();
    key_ += pid_key_;
    key_ += '\0';
    key_ += tid_key_;
    auto it = thread_of_.find(key_);
    if (it != thread_of_.end()) return it->second;
    uint32_t id = uint32_t(threads_.size());
    threads_.push_back(Thread{pid_key_, tid_key_, {}, {}});
    thread_of_.emplace(key_, id);
    return id;
  }
  FrameId frame_of_name() {
    if (name_.type == Value::String) return profile_.intern(name_.text);
    if (name_.type == Value::Missing) return profile_.intern("[unnamed]");
    return profile_.intern(name_.text.empty() ? "[unnamed]" : name_.text);  // numbers as spelled
  }

  void finish_event() {
    in_event_ = false;
    in_args_ = false;
    ++stats_.events;
    if (ph_.type != Value::String) {
      if (ph_.type == Value::Missing) {
        ++stats_.unknown_phases;
        if (stats_.first_unknown_phase.empty())
          stats_.first_unknown_phase = "byte " + std::to_string(event_offset_) + ": " + describe() + " has no \"ph\"";
        return;
      }
      fail_event(event_offset_, describe() + ": \"ph\" is " + ph_.type_name + ", expected a string");
      return;
    }
    const std::string& ph = ph_.text;
    char c = ph.size() == 1 ? ph[0] : '\0';
    if (c == 'X' || c == 'B' || c == 'E') {
      if (!need_time(ts_, "ts")) return;
      if (!id_key(pid_, "pid", pid_key_) || !id_key(tid_, "tid", tid_key_)) return;
      if (name_.type == Value::Other) {
        fail_event(event_offset_, describe() + ": \"name\" is " + name_.type_name + ", expected a string");
        return;
      }
      if (c == 'X') {
        if (!need_time(dur_, "dur")) return;
        if (dur_.ns < 0) {
          fail_event(event_offset_, describe() + ": negative \"dur\" " + dur_.text);
          return;
        }
        Span s{ts_.ns, ts_.ns + dur_.ns, event_offset_, frame_of_name()};
        threads_[thread_index()].spans.push_back(s);
      } else {
        Mark m{ts_.ns, event_offset_, c == 'B' ? frame_of_name() : FoldedProfile::kNoFrame, c == 'B'};
        threads_[thread_index()].marks.push_back(m);
      }
      return;
    }
    if (c == 'M') {
      ++stats_.metadata;
      if (name_.type != Value::String) return;
      bool process = name_.text == "process_name", thread = name_.text == "thread_name";
      if (!process && !thread) return;
      if (!id_key(pid_, "pid", pid_key_)) return;
      if (process) {
        process_names_[pid_key_] = args_name_;
      } else {
        if (!id_key(tid_, "tid", tid_key_)) return;
        thread_names_[pid_key_ + '\0' + tid_key_] = args_name_;
      }
      return;
    }
    // Phases of the trace event format that are not durations.
    static const char kOther[] = "iIPCbenSTpFstfONDRc()vV=";
    if (c != '\0' && std::strchr(kOther, c)) {
      ++stats_.other_phases;
      return;
    }
    ++stats_.unknown_phases;
    if (stats_.first_unknown_phase.empty())
      stats_.first_unknown_phase = "byte " + std::to_string(event_offset_) + ": " + describe();
  }

  const std::string& file_;
  ByteSource& src_;
  FoldedProfile& profile_;
  const ChromeTraceOptions& opt_;
  ChromeTraceStats& stats_;

  int64_t depth_ = 0, events_depth_ = -1, event_depth_ = -1;  // events_depth_: depth of the traceEvents array
  bool root_is_object_ = false, found_events_ = false, events_closed_ = false;
  std::string root_key_;
  bool in_event_ = false, in_args_ = false, args_key_is_name_ = false;
  uint64_t event_offset_ = 0;
  Field field_ = Field::None;
  Value name_, ph_, ts_, dur_, pid_, tid_;
  std::string args_name_;
  std::string pid_key_, tid_key_, key_;

  std::vector<Thread> threads_;
  std::unordered_map<std::string, uint32_t> thread_of_;
  std::unordered_map<std::string, std::string> process_names_, thread_names_;

  uint64_t error_position_ = 0;
  bool at_end_of_input_ = false;
  std::string error_;
};

void TraceHandler::fold(FoldedProfile& profile) {
  std::vector<int64_t> self_ns;  // per NodeId; summed as integers, converted once
  auto add_self = [&](NodeId node, int64_t ns) {
    if (node >= self_ns.size()) self_ns.resize(std::max<size_t>(node + 1, self_ns.size() * 2), 0);
    self_ns[node] += ns;
  };
  struct Open {
    int64_t start, end, children;  // children: time covered by direct children
    NodeId node;
  };
  std::vector<Open> stack;
  std::vector<Mark> open_begins;
  stats_.threads = 0;
  for (Thread& t : threads_) {
    // B/E pairs -> spans: sorted by time, file order at equal times, each E
    // closing the most recent open B of its thread.
    if (!t.marks.empty()) {
      std::stable_sort(t.marks.begin(), t.marks.end(), [](const Mark& a, const Mark& b) {
        return a.ts != b.ts ? a.ts < b.ts : a.offset < b.offset;
      });
      open_begins.clear();
      for (const Mark& m : t.marks) {
        if (m.begin) {
          open_begins.push_back(m);
        } else if (open_begins.empty()) {
          if (!stats_.unmatched_ends++)
            stats_.first_unmatched_end = "byte " + std::to_string(m.offset) + ": 'E' with no open 'B' on its thread";
        } else {
          const Mark& b = open_begins.back();
          t.spans.push_back(Span{b.ts, m.ts, b.offset, b.name});
          open_begins.pop_back();
        }
      }
      for (const Mark& b : open_begins)
        if (!stats_.unclosed_begins++)
          stats_.first_unclosed_begin = "byte " + std::to_string(b.offset) + ": 'B' " +
                                        quote_name(std::string(profile.frame_name(b.name))) + " never ended";
      std::vector<Mark>().swap(t.marks);
    }
    if (t.spans.empty()) continue;
    ++stats_.threads;
    std::sort(t.spans.begin(), t.spans.end(), span_before);
    // Root frames for the thread.
    NodeId root = 0;
    size_t root_depth = 0;
    if (opt_.roots == ChromeTraceOptions::Roots::ProcessAndThread) {
      auto p = process_names_.find(t.pid_key);
      std::string label = p != process_names_.end() && !p->second.empty() ? p->second : label_of(t.pid_key, "pid");
      root = profile.child(root, profile.intern(label));
      ++root_depth;
    }
    if (opt_.roots != ChromeTraceOptions::Roots::None) {
      auto n = thread_names_.find(t.pid_key + '\0' + t.tid_key);
      std::string label = n != thread_names_.end() && !n->second.empty() ? n->second : label_of(t.tid_key, "tid");
      root = profile.child(root, profile.intern(label));
      ++root_depth;
    }
    stack.clear();
    auto close_top = [&]() {
      const Open& o = stack.back();
      add_self(o.node, (o.end - o.start) - o.children);
      stack.pop_back();
    };
    // Spans in order; the part of a span that outlives its parent is split
    // off and comes back (from `deferred`) as a span of its own starting at
    // the parent's end, so every thread's total stays the time it covered.
    std::priority_queue<Span, std::vector<Span>, decltype(&span_after)> deferred(&span_after);
    size_t next = 0;
    while (next < t.spans.size() || !deferred.empty()) {
      Span s;
      if (deferred.empty() || (next < t.spans.size() && span_before(t.spans[next], deferred.top()))) {
        s = t.spans[next++];
      } else {
        s = deferred.top();
        deferred.pop();
      }
      while (!stack.empty() && stack.back().end <= s.start) close_top();
      if (!stack.empty() && s.end > stack.back().end) {
        if (!stats_.overlaps++)
          stats_.first_overlap = "byte " + std::to_string(s.offset) + ": " +
                                 quote_name(std::string(profile.frame_name(s.name))) + " ends " +
                                 std::to_string((s.end - stack.back().end) / 1000.0) + " us after its parent " +
                                 quote_name(std::string(profile.frame_name(profile.node(stack.back().node).frame)));
        deferred.push(Span{stack.back().end, s.end, s.offset, s.name});
        s.end = stack.back().end;
      }
      if (s.end == s.start) {
        ++stats_.zero_length;
        continue;
      }
      if (root_depth + stack.size() >= kMaxFrames) {  // its time stays with the deepest kept span
        if (!stats_.too_deep++)
          stats_.first_too_deep = "byte " + std::to_string(s.offset) + ": " + quote_name(std::string(profile.frame_name(s.name)));
        continue;
      }
      ++stats_.spans;
      if (!stack.empty()) stack.back().children += s.end - s.start;
      NodeId node = profile.child(stack.empty() ? root : stack.back().node, s.name);
      stack.push_back(Open{s.start, s.end, 0, node});
    }
    while (!stack.empty()) close_top();
    std::vector<Span>().swap(t.spans);
  }
  // Division (not * 1e-3) gives the double nearest the decimal: 7281 ns -> 7.281.
  double divisor = opt_.nanoseconds ? 1.0 : 1000.0;
  for (NodeId n = 0; n < self_ns.size(); ++n)
    if (self_ns[n] > 0) profile.add_self(n, double(self_ns[n]) / divisor);
  profile.units = opt_.nanoseconds ? "ns" : "us";
}

}  // namespace

bool looks_like_chrome_trace(std::string_view head) {
  size_t i = 0;
  if (head.substr(0, 3) == "\xEF\xBB\xBF") i = 3;
  while (i < head.size() && (head[i] == ' ' || head[i] == '\t' || head[i] == '\n' || head[i] == '\r')) ++i;
  if (i >= head.size() || (head[i] != '{' && head[i] != '[')) return false;
  return head.find("\"traceEvents\"") != std::string_view::npos || head.find("\"ph\"") != std::string_view::npos;
}

std::vector<std::string> ChromeTraceStats::warnings() const {
  std::vector<std::string> w;
  auto add = [&](uint64_t n, const std::string& what, const std::string& first) {
    if (n) w.push_back(std::to_string(n) + " " + what + (first.empty() ? "" : " (first: " + first + ")"));
  };
  add(bad_events, "events with bad fields skipped", first_bad_event);
  add(unknown_phases, "events of unknown phase ignored", first_unknown_phase);
  add(unmatched_ends, "'E' events without a 'B' ignored", first_unmatched_end);
  add(unclosed_begins, "'B' events never ended ignored", first_unclosed_begin);
  add(overlaps, "spans outliving their parent split at the parent's end", first_overlap);
  add(too_deep, "spans nested deeper than 4096 frames counted in their deepest kept ancestor", first_too_deep);
  if (missing_close) w.push_back("the traceEvents array is not closed (the trace was cut after a complete event)");
  return w;
}

FoldedProfile fold_chrome_trace(const std::string& path, const ChromeTraceOptions& options, ChromeTraceStats* stats) {
  ChromeTraceStats local;
  ChromeTraceStats& st = stats ? *stats : local;
  st = ChromeTraceStats{};
  FoldedProfile profile;
  InputStream in(path);
  Progress progress("trace", 0, options.progress);
  ByteSource src(in, progress);
  TraceHandler handler(in.name(), src, profile, options, st);
  bool ok = nlohmann::json::sax_parse(ByteIterator(&src), ByteIterator(), &handler);
  if (!ok) {
    // The array format may end without its ']' (the format allows it for
    // traces written by a process that was killed): accept a cut after a
    // complete event.
    if (handler.between_events() && src.at_end()) {
      st.missing_close = true;
    } else {
      std::string what = "malformed JSON: " + handler.error();
      if (handler.error_at_end_of_input()) what += " (truncated file?)";
      throw InputError::at_offset(in.name(), handler.error_position(), what);
    }
  }
  if (!handler.found_events())
    throw InputError::at_offset(in.name(), 0,
                                handler.root_is_object() ? "no \"traceEvents\" array: not a Chrome trace"
                                                         : "not a Chrome trace (expected an object or an array)");
  handler.fold(profile);
  progress.finish(std::to_string(st.events) + " events");
  return profile;
}

}  // namespace fg
