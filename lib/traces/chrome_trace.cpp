#include "traces/chrome_trace.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <queue>
#include <unordered_map>

#include "diagnostics/input_error.h"
#include "diagnostics/progress.h"
#include "folded/input_stream.h"
#include "symbols/symbol_names.h"
#include "traces/trace_json_scanner.h"

namespace fg {

namespace {

// Timestamps are kept as integer nanoseconds so self times subtract exactly
// and identical stacks add up without floating-point noise.
// Stacks are cut at the depth the folded reader accepts, so that pathological
// nesting cannot make the output quadratic in size.
constexpr size_t kMaxFrames = 4096;

// What a span is, for the GPU view.
enum SpanKind : uint8_t {
  kCpu,          // an op, annotation, python function, ... on a CPU thread
  kLaunch,       // a CPU span carrying args.correlation (cudaLaunchKernel, hipMemcpyAsync, ...)
  kGpu,          // a kernel, memcpy or memset on a device stream
  kDeviceOther,  // other spans on device streams (gpu_user_annotation, cuda_sync)
};

struct Span {
  int64_t start, end;
  uint64_t offset;  // byte offset of the event: file order breaks ties
  FrameId name;
  uint8_t kind;
  int64_t corr;    // kLaunch, kGpu: the correlation id (or -1)
  int64_t stream;  // kGpu: args.stream, else the tid when numeric, else -1
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

struct Flow {  // one flow event (ph s, t or f)
  int64_t id, ts;
  uint32_t thread;
  char ph;
  bool enclosing;  // "bp":"e": binds to the enclosing slice, else to the next one
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

std::string quote_name(std::string_view name) {
  std::string s = name.size() > 60 ? std::string(name.substr(0, 57)) + "..." : std::string(name);
  return "'" + s + "'";
}

// Trailing white space removed ("stream 7 " in Kineto's thread names).
std::string trimmed(std::string_view s) {
  size_t n = s.size();
  while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t')) --n;
  size_t b = 0;
  while (b < n && (s[b] == ' ' || s[b] == '\t')) ++b;
  return std::string(s.substr(b, n - b));
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

bool ends_with_ci(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && iequals(s.substr(s.size() - suffix.size()), suffix);
}

class TraceHandler : public TraceJsonEventSink {
 public:
  TraceHandler(const std::string& file, FoldedProfile& profile, const ChromeTraceOptions& opt, ChromeTraceStats& stats)
      : file_(file), profile_(profile), opt_(opt), stats_(stats) {}

  void event(const TraceJsonEvent& e) override {
    ev_ = &e;
    ++stats_.events;
    finish_event();
  }
  void bad_element(uint64_t offset, const char* type_name) override {
    ++stats_.events;
    fail_event(offset, std::string("traceEvents element is ") + type_name + ", not an event object");
  }

  void fold(FoldedProfile& profile);

 private:
  // A per-event problem: an error, or counted and skipped when lenient.
  void fail_event(uint64_t offset, const std::string& what) {
    if (!opt_.lenient) throw InputError::at_offset(file_, offset, what + " (--lenient skips such events)");
    ++stats_.bad_events;
    if (stats_.first_bad_event.empty()) stats_.first_bad_event = "byte " + std::to_string(offset) + ": " + what;
  }
  std::string describe() const {
    std::string d = "event";
    if (ev_->name.type == TraceJsonValue::String) d += " " + quote_name(ev_->name.text);
    if (ev_->ph.type == TraceJsonValue::String) d += " (ph '" + std::string(ev_->ph.text) + "')";
    return d;
  }
  bool need_time(const TraceJsonValue& v, const char* key) {
    if (v.type == TraceJsonValue::Missing) {
      fail_event(ev_->offset, describe() + ": no \"" + key + "\"");
      return false;
    }
    if (v.type != TraceJsonValue::Number) {
      fail_event(ev_->offset, describe() + ": \"" + key + "\" is " + v.type_name() + ", expected a number");
      return false;
    }
    if (!v.ns_ok) {
      fail_event(ev_->offset,
                 describe() + ": \"" + key + "\" " + std::string(v.text.substr(0, 40)) + " is out of range");
      return false;
    }
    if (v.has_fraction) any_fraction_ = true;
    return true;
  }
  // "n:42" / "s:name" key of a pid or tid; false when mistyped.
  bool id_key(const TraceJsonValue& v, const char* key, std::string& out) {
    out.clear();
    if (v.type == TraceJsonValue::Missing) {
      out = "n:0";
      return true;
    }
    if (v.type == TraceJsonValue::String) {
      out += "s:";
      out += v.text;
      return true;
    }
    if (v.type == TraceJsonValue::Number && v.integral) {
      out += "n:";
      out += v.text;  // integral: written as digits
      if (v.text.size() > 1 && v.text[0] == '-' && v.integer == 0) out = "n:0";
      return true;
    }
    fail_event(ev_->offset, describe() + ": \"" + key + "\" is " +
                                (v.type == TraceJsonValue::Number ? "not an integer" : v.type_name()) +
                                ", expected an integer or a string");
    return false;
  }
  uint32_t thread_index() {
    key_.clear();
    key_ += pid_key_;
    key_ += '\0';
    key_ += tid_key_;
    if (last_thread_ != UINT32_MAX && key_ == last_key_) return last_thread_;
    auto it = thread_of_.find(key_);
    uint32_t id;
    if (it != thread_of_.end()) {
      id = it->second;
    } else {
      id = uint32_t(threads_.size());
      threads_.push_back(Thread{pid_key_, tid_key_, {}, {}});
      thread_of_.emplace(key_, id);
    }
    last_key_ = key_;
    last_thread_ = id;
    return id;
  }
  FrameId frame_of_name() {
    const TraceJsonValue& n = ev_->name;
    if (n.type == TraceJsonValue::String) return profile_.intern(clamp_frame_name(n.text));
    if (n.type == TraceJsonValue::Missing || n.text.empty()) return profile_.intern("[unnamed]");
    return profile_.intern(n.text);  // numbers as spelled
  }
  uint8_t kind_of() const {
    std::string_view cat = ev_->cat.type == TraceJsonValue::String ? ev_->cat.text : std::string_view();
    if (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset" || cat == "Kernel" || cat == "Memcpy" ||
        cat == "Memset")
      return kGpu;
    if (cat == "gpu_user_annotation" || cat == "cuda_sync" || cat == "gpu_instant_event") return kDeviceOther;
    // libtorch's legacy exporter: no cat, device work in pid "CUDA functions".
    if (cat.empty() && ev_->pid.type == TraceJsonValue::String && ends_with_ci(ev_->pid.text, " functions") &&
        !iequals(ev_->pid.text, "CPU functions"))
      return kGpu;
    if (ev_->args_correlation.type == TraceJsonValue::Number && ev_->args_correlation.integral) return kLaunch;
    return kCpu;
  }

  void finish_event() {
    const TraceJsonEvent& e = *ev_;
    if (e.ph.type != TraceJsonValue::String) {
      if (e.ph.type == TraceJsonValue::Missing) {
        ++stats_.unknown_phases;
        if (stats_.first_unknown_phase.empty())
          stats_.first_unknown_phase = "byte " + std::to_string(e.offset) + ": " + describe() + " has no \"ph\"";
        return;
      }
      fail_event(e.offset, describe() + ": \"ph\" is " + e.ph.type_name() + ", expected a string");
      return;
    }
    std::string_view ph = e.ph.text;
    char c = ph.size() == 1 ? ph[0] : '\0';
    if (c == 'X' || c == 'B' || c == 'E') {
      if (!need_time(e.ts, "ts")) return;
      if (!id_key(e.pid, "pid", pid_key_) || !id_key(e.tid, "tid", tid_key_)) return;
      if (e.name.type == TraceJsonValue::Container || e.name.type == TraceJsonValue::Bool ||
          e.name.type == TraceJsonValue::Null) {
        fail_event(e.offset, describe() + ": \"name\" is " + e.name.type_name() + ", expected a string");
        return;
      }
      if (c == 'X') {
        if (!need_time(e.dur, "dur")) return;
        if (e.dur.ns < 0) {
          fail_event(e.offset, describe() + ": negative \"dur\" " + std::string(e.dur.text));
          return;
        }
        if (e.cat.type == TraceJsonValue::String && e.cat.text == "Trace") {
          ++stats_.trace_spans;  // "PyTorch Profiler (0)": the profiling window, not work
          return;
        }
        uint8_t kind = kind_of();
        int64_t corr = -1, stream = -1;
        if (kind == kLaunch || kind == kGpu) {
          if (e.args_correlation.type == TraceJsonValue::Number && e.args_correlation.integral)
            corr = e.args_correlation.integer;
        }
        if (kind == kGpu) {
          if (e.args_stream.type == TraceJsonValue::Number && e.args_stream.integral) stream = e.args_stream.integer;
          else if (e.tid.type == TraceJsonValue::Number && e.tid.integral) stream = e.tid.integer;
        }
        Span s{e.ts.ns, e.ts.ns + e.dur.ns, e.offset, frame_of_name(), kind, corr, stream};
        threads_[thread_index()].spans.push_back(s);
      } else {
        Mark m{e.ts.ns, e.offset, c == 'B' ? frame_of_name() : FoldedProfile::kNoFrame, c == 'B'};
        threads_[thread_index()].marks.push_back(m);
      }
      return;
    }
    if (c == 'M') {
      ++stats_.metadata;
      if (e.name.type != TraceJsonValue::String) return;
      bool process = e.name.text == "process_name", thread = e.name.text == "thread_name";
      if (!process && !thread) return;
      if (!id_key(e.pid, "pid", pid_key_)) return;
      std::string label = e.args_name.type == TraceJsonValue::String ? trimmed(e.args_name.text) : std::string();
      if (process) {
        process_names_[pid_key_] = label;
      } else {
        if (!id_key(e.tid, "tid", tid_key_)) return;
        thread_names_[pid_key_ + '\0' + tid_key_] = label;
      }
      return;
    }
    if ((c == 's' || c == 't' || c == 'f') && opt_.view == ChromeTraceOptions::View::Gpu) {
      ++stats_.other_phases;
      int64_t id;
      if (e.id.type == TraceJsonValue::Number && e.id.integral) {
        id = e.id.integer;
      } else if (e.id.type == TraceJsonValue::String) {
        auto it = string_ids_.try_emplace(std::string(e.id.text), -2 - int64_t(string_ids_.size())).first;
        id = it->second;
      } else {
        return;
      }
      if (e.ts.type != TraceJsonValue::Number || !e.ts.ns_ok) return;
      if (!id_key(e.pid, "pid", pid_key_) || !id_key(e.tid, "tid", tid_key_)) return;
      bool enclosing = c != 'f' || (e.bp.type == TraceJsonValue::String && e.bp.text == "e");
      flows_.push_back(Flow{id, e.ts.ns, thread_index(), c, enclosing});
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
      stats_.first_unknown_phase = "byte " + std::to_string(e.offset) + ": " + describe();
  }

  void spans_from_marks(Thread& t, FoldedProfile& profile);
  NodeId thread_root(const Thread& t, FoldedProfile& profile, size_t* depth);

  const std::string& file_;
  FoldedProfile& profile_;
  const ChromeTraceOptions& opt_;
  ChromeTraceStats& stats_;
  const TraceJsonEvent* ev_ = nullptr;

  bool any_fraction_ = false;
  std::string pid_key_, tid_key_, key_, last_key_;
  uint32_t last_thread_ = UINT32_MAX;
  std::vector<Thread> threads_;
  std::vector<Flow> flows_;
  std::unordered_map<std::string, uint32_t> thread_of_;
  std::unordered_map<std::string, std::string> process_names_, thread_names_;
  std::unordered_map<std::string, int64_t> string_ids_;
};

// B/E pairs -> spans: sorted by time, file order at equal times, each E
// closing the most recent open B of its thread.
void TraceHandler::spans_from_marks(Thread& t, FoldedProfile& profile) {
  if (t.marks.empty()) return;
  std::stable_sort(t.marks.begin(), t.marks.end(),
                   [](const Mark& a, const Mark& b) { return a.ts != b.ts ? a.ts < b.ts : a.offset < b.offset; });
  std::vector<Mark> open_begins;
  for (const Mark& m : t.marks) {
    if (m.begin) {
      open_begins.push_back(m);
    } else if (open_begins.empty()) {
      if (!stats_.unmatched_ends++)
        stats_.first_unmatched_end = "byte " + std::to_string(m.offset) + ": 'E' with no open 'B' on its thread";
    } else {
      const Mark& b = open_begins.back();
      t.spans.push_back(Span{b.ts, m.ts, b.offset, b.name, kCpu, -1, -1});
      open_begins.pop_back();
    }
  }
  for (const Mark& b : open_begins)
    if (!stats_.unclosed_begins++)
      stats_.first_unclosed_begin =
          "byte " + std::to_string(b.offset) + ": 'B' " + quote_name(profile.frame_name(b.name)) + " never ended";
  std::vector<Mark>().swap(t.marks);
}

NodeId TraceHandler::thread_root(const Thread& t, FoldedProfile& profile, size_t* depth) {
  NodeId root = 0;
  size_t d = 0;
  if (!opt_.root_label.empty()) {
    root = profile.child(root, profile.intern(opt_.root_label));
    ++d;
  }
  if (opt_.roots == ChromeTraceOptions::Roots::ProcessAndThread) {
    auto p = process_names_.find(t.pid_key);
    std::string label = p != process_names_.end() && !p->second.empty() ? p->second : label_of(t.pid_key, "pid");
    root = profile.child(root, profile.intern(label));
    ++d;
  }
  if (opt_.roots != ChromeTraceOptions::Roots::None) {
    auto n = thread_names_.find(t.pid_key + '\0' + t.tid_key);
    std::string label =
        n != thread_names_.end() && !n->second.empty() ? n->second : trimmed(label_of(t.tid_key, "tid"));
    root = profile.child(root, profile.intern(label));
    ++d;
  }
  if (depth) *depth = d;
  return root;
}

void TraceHandler::fold(FoldedProfile& profile) {
  const bool gpu = opt_.view == ChromeTraceOptions::View::Gpu;
  // A child ending this little after its parent is the exporter's rounding
  // (ts and dur rounded separately), not an overlap.
  const int64_t tick = any_fraction_ ? 1 : 1000;
  std::vector<int64_t> self_ns;  // per NodeId; summed as integers, converted once
  auto add_self = [&](NodeId node, int64_t ns) {
    if (node >= self_ns.size()) self_ns.resize(std::max<size_t>(node + 1, self_ns.size() * 2), 0);
    self_ns[node] += ns;
  };
  struct Open {
    int64_t start, end, children;  // children: time covered by direct children
    NodeId node;
  };
  // GPU view state.
  struct Launch {
    NodeId node;
    uint32_t thread;
  };
  std::unordered_map<int64_t, Launch> launch_of;  // correlation -> launching CPU span
  std::unordered_map<int64_t, Launch> flow_anchor;  // flow id -> the CPU span its 's' binds to
  struct Activity {
    int64_t start, end;
    FrameId name;
    int64_t corr, stream;
    uint32_t thread;
  };
  std::vector<Activity> acts;
  struct Segment {  // [start, end): `node` is the innermost span of its thread
    int64_t start, end;
    NodeId node;
  };
  std::vector<std::vector<Segment>> segments(gpu && opt_.gpu_idle ? threads_.size() : 0);
  std::vector<NodeId> roots(threads_.size(), 0);
  std::vector<std::vector<const Flow*>> starts_by_thread(gpu ? threads_.size() : 0);
  if (gpu)
    for (const Flow& f : flows_)
      if (f.ph == 's') starts_by_thread[f.thread].push_back(&f);

  std::vector<Open> stack;
  stats_.threads = 0;
  for (uint32_t ti = 0; ti < threads_.size(); ++ti) {
    Thread& t = threads_[ti];
    spans_from_marks(t, profile);
    if (gpu) {
      // Device work leaves the thread's nesting; other device spans are dropped.
      size_t keep = 0;
      for (const Span& s : t.spans) {
        if (s.kind == kGpu) acts.push_back(Activity{s.start, s.end, s.name, s.corr, s.stream, ti});
        else if (s.kind != kDeviceOther) t.spans[keep++] = s;
      }
      t.spans.resize(keep);
    }
    if (t.spans.empty()) continue;
    ++stats_.threads;
    std::sort(t.spans.begin(), t.spans.end(), span_before);
    size_t root_depth = 0;
    NodeId root = thread_root(t, profile, &root_depth);
    roots[ti] = root;
    std::vector<const Flow*>* anchors = gpu ? &starts_by_thread[ti] : nullptr;
    if (anchors)
      std::sort(anchors->begin(), anchors->end(), [](const Flow* a, const Flow* b) { return a->ts < b->ts; });
    size_t next_anchor = 0;
    std::vector<Segment>* segs = segments.empty() ? nullptr : &segments[ti];
    int64_t seg_start = 0;
    stack.clear();
    auto close_top = [&]() {
      const Open& o = stack.back();
      if (!gpu) add_self(o.node, (o.end - o.start) - o.children);
      if (segs && o.end > seg_start) segs->push_back(Segment{seg_start, o.end, o.node});
      seg_start = o.end;
      stack.pop_back();
    };
    // Flow starts bind to the innermost span open at their time.
    auto bind_anchors_before = [&](int64_t limit) {
      while (anchors && next_anchor < anchors->size() && (*anchors)[next_anchor]->ts < limit) {
        const Flow* f = (*anchors)[next_anchor++];
        while (!stack.empty() && stack.back().end <= f->ts) close_top();
        flow_anchor.emplace(f->id, Launch{stack.empty() ? root : stack.back().node, ti});
      }
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
      // Anchors before this span's start; one exactly at it binds to it (or
      // to a deeper span starting at the same time), so waits for the next.
      bind_anchors_before(s.start);
      while (!stack.empty() && stack.back().end <= s.start) close_top();
      if (!stack.empty() && s.end > stack.back().end) {
        if (s.end - stack.back().end <= tick) {
          ++stats_.rounding;
          s.end = stack.back().end;
        } else {
          if (!stats_.overlaps++)
            stats_.first_overlap = "byte " + std::to_string(s.offset) + ": " + quote_name(profile.frame_name(s.name)) +
                                   " ends " + std::to_string((s.end - stack.back().end) / 1000.0) +
                                   " us after its parent " +
                                   quote_name(profile.frame_name(profile.node(stack.back().node).frame));
          deferred.push(Span{stack.back().end, s.end, s.offset, s.name, s.kind, s.corr, s.stream});
          s.end = stack.back().end;
        }
      }
      if (s.end == s.start) {
        ++stats_.zero_length;
        if (s.kind == kLaunch && gpu) {  // a launch still names its kernels
          NodeId parent = stack.empty() ? root : stack.back().node;
          launch_of.emplace(s.corr, Launch{profile.child(parent, s.name), ti});
          ++stats_.launches;
        }
        continue;
      }
      if (root_depth + stack.size() >= kMaxFrames) {  // its time stays with the deepest kept span
        if (!stats_.too_deep++)
          stats_.first_too_deep = "byte " + std::to_string(s.offset) + ": " + quote_name(profile.frame_name(s.name));
        if (s.kind == kLaunch && gpu) launch_of.emplace(s.corr, Launch{stack.back().node, ti});
        continue;
      }
      ++stats_.spans;
      if (!stack.empty()) stack.back().children += s.end - s.start;
      if (segs) {
        if (!stack.empty() && s.start > seg_start) segs->push_back(Segment{seg_start, s.start, stack.back().node});
        seg_start = s.start;
      }
      NodeId node = profile.child(stack.empty() ? root : stack.back().node, s.name);
      stack.push_back(Open{s.start, s.end, 0, node});
      if (s.kind == kLaunch && gpu) {
        launch_of.emplace(s.corr, Launch{node, ti});
        ++stats_.launches;
      }
    }
    bind_anchors_before(std::numeric_limits<int64_t>::max());
    while (!stack.empty()) close_top();
    std::vector<Span>().swap(t.spans);
  }

  if (gpu) {
    // Flow ends bind to device activities: "f" at an activity's time (bp "e":
    // the enclosing one, else the next to start); "t" steps likewise.
    std::unordered_map<uint64_t, int64_t> flow_of_act;  // activity index -> flow id
    if (!flows_.empty() && !acts.empty()) {
      std::vector<size_t> order(acts.size());
      for (size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        if (acts[a].thread != acts[b].thread) return acts[a].thread < acts[b].thread;
        return acts[a].start < acts[b].start;
      });
      for (const Flow& f : flows_) {
        if (f.ph == 's') continue;
        auto lo = std::lower_bound(order.begin(), order.end(), f, [&](size_t a, const Flow& fl) {
          if (acts[a].thread != fl.thread) return acts[a].thread < fl.thread;
          return acts[a].start < fl.ts;
        });
        size_t hit = SIZE_MAX;
        if (lo != order.end() && acts[*lo].thread == f.thread && acts[*lo].start == f.ts) hit = *lo;
        else if (f.enclosing && lo != order.begin() && acts[*(lo - 1)].thread == f.thread &&
                 acts[*(lo - 1)].end > f.ts)
          hit = *(lo - 1);
        else if (!f.enclosing && lo != order.end() && acts[*lo].thread == f.thread)
          hit = *lo;
        if (hit != SIZE_MAX) flow_of_act.emplace(hit, f.id);
      }
    }
    std::unordered_map<FrameId, FrameId> short_name;
    auto leaf_of = [&](FrameId name) {
      auto it = short_name.find(name);
      if (it != short_name.end()) return it->second;
      std::string_view raw = profile.frame_name(name);
      FrameId id = profile.intern(clamp_frame_name(
          "[gpu] " + (opt_.full_kernel_names ? folded_safe_name(trimmed(raw)) : gpu_kernel_frame_name(raw))));
      short_name.emplace(name, id);
      return id;
    };
    NodeId label_root = opt_.root_label.empty() ? 0 : profile.child(0, profile.intern(opt_.root_label));
    auto unattributed = [&](int64_t stream) {
      NodeId n = profile.child(label_root, profile.intern("[gpu] unattributed"));
      return profile.child(n, profile.intern(stream >= 0 ? "stream " + std::to_string(stream) : "stream ?"));
    };
    std::vector<const Launch*> launcher(acts.size(), nullptr);
    for (size_t i = 0; i < acts.size(); ++i) {
      const Activity& a = acts[i];
      int64_t ns = a.end - a.start;
      ++stats_.gpu_activities;
      stats_.gpu_us += ns / 1000.0;
      const Launch* l = nullptr;
      if (a.corr >= 0) {
        auto it = launch_of.find(a.corr);
        if (it != launch_of.end()) {
          l = &it->second;
          ++stats_.gpu_by_correlation;
        }
      }
      if (!l) {
        auto f = flow_of_act.find(i);
        if (f != flow_of_act.end()) {
          auto it = flow_anchor.find(f->second);
          if (it != flow_anchor.end()) {
            l = &it->second;
            ++stats_.gpu_by_flow;
          }
        }
      }
      launcher[i] = l;
      NodeId parent = l ? l->node : unattributed(a.stream);
      if (!l) {
        ++stats_.gpu_unattributed;
        stats_.gpu_unattributed_us += ns / 1000.0;
      }
      if (ns > 0) add_self(profile.child(parent, leaf_of(a.name)), ns);
    }
    if (opt_.gpu_idle && !acts.empty()) {
      // Per stream (device thread and stream id), the gaps between its busy intervals.
      std::vector<size_t> order(acts.size());
      for (size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        if (acts[a].thread != acts[b].thread) return acts[a].thread < acts[b].thread;
        if (acts[a].stream != acts[b].stream) return acts[a].stream < acts[b].stream;
        return acts[a].start < acts[b].start;
      });
      FrameId idle = profile.intern("[gpu idle]");
      auto add_gap = [&](int64_t from, int64_t to, size_t next_act) {
        stats_.gpu_idle_us += (to - from) / 1000.0;
        const Launch* l = launcher[next_act];
        if (!l) {
          add_self(profile.child(unattributed(acts[next_act].stream), idle), to - from);
          return;
        }
        const std::vector<Segment>& sg = segments[l->thread];
        auto it = std::upper_bound(sg.begin(), sg.end(), from, [](int64_t v, const Segment& s) { return v < s.end; });
        int64_t covered = 0;
        for (; it != sg.end() && it->start < to; ++it) {
          int64_t a = std::max(from, it->start), b = std::min(to, it->end);
          if (b > a) {
            add_self(profile.child(it->node, idle), b - a);
            covered += b - a;
          }
        }
        if (to - from > covered) add_self(profile.child(roots[l->thread], idle), (to - from) - covered);
      };
      int64_t busy_end = 0;
      for (size_t k = 0; k < order.size(); ++k) {
        const Activity& a = acts[order[k]];
        bool same = k > 0 && acts[order[k - 1]].thread == a.thread && acts[order[k - 1]].stream == a.stream;
        if (same && a.start > busy_end) add_gap(busy_end, a.start, order[k]);
        busy_end = same ? std::max(busy_end, a.end) : a.end;
      }
    }
  }
  // Division (not * 1e-3) gives the double nearest the decimal: 7281 ns -> 7.281.
  double divisor = opt_.nanoseconds ? 1.0 : 1000.0;
  for (NodeId n = 0; n < self_ns.size(); ++n)
    if (self_ns[n] > 0) profile.add_self(n, double(self_ns[n]) / divisor);
  profile.units = opt_.nanoseconds ? "ns" : "us";
}

}  // namespace

std::string gpu_kernel_frame_name(std::string_view name) {
  std::string n = trimmed(name);
  if (n.compare(0, 2, "_Z") == 0) {
    std::string d = demangle_without_params(n);
    if (!d.empty()) n = d;
  } else if (size_t open = n.find('('); open != std::string::npos && open > 0 && n[open - 1] != ' ' && n.back() == ')') {
    // A C++ signature ("void f<T>(int)"); "Memcpy HtoD (Pageable -> Device)" is not one.
    std::string s = strip_params(n);
    if (!s.empty()) n = s;
  }
  return folded_safe_name(n);
}

bool looks_like_chrome_trace(std::string_view head) {
  size_t i = 0;
  if (head.substr(0, 3) == "\xEF\xBB\xBF") i = 3;
  while (i < head.size() && (head[i] == ' ' || head[i] == '\t' || head[i] == '\n' || head[i] == '\r')) ++i;
  if (i >= head.size() || (head[i] != '{' && head[i] != '[')) return false;
  if (head.find("\"traceEvents\"") != std::string_view::npos || head.find("\"ph\"") != std::string_view::npos)
    return true;
  // Kineto writes its header first (device properties, distributed info),
  // which can fill the first 4 KB before traceEvents.
  return head[i] == '{' && (head.find("\"schemaVersion\"") != std::string_view::npos ||
                            head.find("\"deviceProperties\"") != std::string_view::npos ||
                            head.find("\"distributedInfo\"") != std::string_view::npos);
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
  if (gpu_unattributed) {
    char b[200];
    std::snprintf(b, sizeof b,
                  "%llu of %llu GPU activities (%.1f of %.1f us, %.2f%%) have no launch event: folded under "
                  "[gpu] unattributed;stream N",
                  (unsigned long long)gpu_unattributed, (unsigned long long)gpu_activities, gpu_unattributed_us, gpu_us,
                  gpu_us > 0 ? 100.0 * gpu_unattributed_us / gpu_us : 0.0);
    w.push_back(b);
  }
  return w;
}

void fold_chrome_trace_into(const std::string& path, FoldedProfile& profile, const ChromeTraceOptions& options,
                            ChromeTraceStats* stats) {
  ChromeTraceStats local;
  ChromeTraceStats& st = stats ? *stats : local;
  st = ChromeTraceStats{};
  InputStream in(path);
  Progress progress("trace", 0, options.progress);
  TraceHandler handler(in.name(), profile, options, st);
  TraceJsonScanResult r = scan_trace_json(in, handler, &progress);
  st.missing_close = r.missing_close;
  st.rank = r.rank;
  if (!r.found_events)
    throw InputError::at_offset(in.name(), 0,
                                r.root_is_object ? "no \"traceEvents\" array: not a Chrome trace"
                                                 : "not a Chrome trace (expected an object or an array)");
  handler.fold(profile);
  progress.finish(std::to_string(st.events) + " events");
}

FoldedProfile fold_chrome_trace(const std::string& path, const ChromeTraceOptions& options, ChromeTraceStats* stats) {
  FoldedProfile profile;
  fold_chrome_trace_into(path, profile, options, stats);
  return profile;
}

}  // namespace fg
