#include "traces/span_nesting.h"

#include <algorithm>
#include <limits>
#include <queue>

namespace fg::chrome_trace {

namespace {

// Stacks are cut at the depth the folded reader accepts, so that
// pathological nesting cannot make the output quadratic in size.
constexpr size_t kMaxFrames = 4096;

struct Open {
  int64_t start, end, children;  // children: time covered by direct children
  NodeId node;
};

class SpanNester {
 public:
  SpanNester(TraceEvents& events, FoldedProfile& profile, const ChromeTraceOptions& opt, ChromeTraceStats& stats,
             SelfTimes& self, GpuLinks& links)
      : events_(events), profile_(profile), opt_(opt), stats_(stats), self_(self), links_(links),
        gpu_(opt.view == ChromeTraceOptions::View::Gpu),
        // A child ending this little after its parent is the exporter's
        // rounding (ts and dur rounded separately), not an overlap.
        tick_(events.any_fraction ? 1 : 1000) {}

  void run();

 private:
  void spans_from_marks(Thread& t);
  NodeId thread_root(const Thread& t, size_t* depth);
  void fold_thread(uint32_t ti);
  void place(Span s);
  void close_top();
  void bind_anchors_before(int64_t limit);

  TraceEvents& events_;
  FoldedProfile& profile_;
  const ChromeTraceOptions& opt_;
  ChromeTraceStats& stats_;
  SelfTimes& self_;
  GpuLinks& links_;
  const bool gpu_;
  const int64_t tick_;
  std::vector<std::vector<const Flow*>> starts_by_thread_;  // GPU view: each thread's flow starts
  std::vector<Open> stack_;

  // The thread being folded.
  uint32_t ti_ = 0;
  NodeId root_ = 0;
  size_t root_depth_ = 0;
  std::vector<const Flow*>* anchors_ = nullptr;
  size_t next_anchor_ = 0;
  std::vector<Segment>* segs_ = nullptr;
  int64_t seg_start_ = 0;
  // The part of a span that outlives its parent, split off to come back as
  // a span of its own starting at the parent's end.
  std::priority_queue<Span, std::vector<Span>, decltype(&span_after)> deferred_{&span_after};
};

void SpanNester::run() {
  std::vector<Thread>& threads = events_.threads;
  links_.segments.assign(gpu_ && opt_.gpu_idle ? threads.size() : 0, {});
  links_.roots.assign(threads.size(), 0);
  starts_by_thread_.assign(gpu_ ? threads.size() : 0, {});
  if (gpu_)
    for (const Flow& f : events_.flows)
      if (f.ph == 's') starts_by_thread_[f.thread].push_back(&f);
  stats_.threads = 0;
  for (uint32_t ti = 0; ti < threads.size(); ++ti) fold_thread(ti);
}

// B/E pairs -> spans: sorted by time, file order at equal times, each E
// closing the most recent open B of its thread.
void SpanNester::spans_from_marks(Thread& t) {
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
          "byte " + std::to_string(b.offset) + ": 'B' " + quote_name(profile_.frame_name(b.name)) + " never ended";
  std::vector<Mark>().swap(t.marks);
}

NodeId SpanNester::thread_root(const Thread& t, size_t* depth) {
  NodeId root = 0;
  size_t d = 0;
  if (!opt_.root_label.empty()) {
    root = profile_.child(root, profile_.intern_from_input(opt_.root_label));
    ++d;
  }
  if (opt_.roots == ChromeTraceOptions::Roots::ProcessAndThread) {
    auto p = events_.process_names.find(t.pid_key);
    std::string label = p != events_.process_names.end() && !p->second.empty() ? p->second : label_of(t.pid_key, "pid");
    root = profile_.child(root, profile_.intern_from_input(label));
    ++d;
  }
  if (opt_.roots != ChromeTraceOptions::Roots::None) {
    auto n = events_.thread_names.find(t.pid_key + '\0' + t.tid_key);
    std::string label =
        n != events_.thread_names.end() && !n->second.empty() ? n->second : trimmed(label_of(t.tid_key, "tid"));
    root = profile_.child(root, profile_.intern_from_input(label));
    ++d;
  }
  if (depth) *depth = d;
  return root;
}

void SpanNester::close_top() {
  const Open& o = stack_.back();
  if (!gpu_) self_.add(o.node, (o.end - o.start) - o.children);
  if (segs_ && o.end > seg_start_) segs_->push_back(Segment{seg_start_, o.end, o.node});
  seg_start_ = o.end;
  stack_.pop_back();
}

// Flow starts bind to the innermost span open at their time.
void SpanNester::bind_anchors_before(int64_t limit) {
  while (anchors_ && next_anchor_ < anchors_->size() && (*anchors_)[next_anchor_]->ts < limit) {
    const Flow* f = (*anchors_)[next_anchor_++];
    while (!stack_.empty() && stack_.back().end <= f->ts) close_top();
    links_.flow_anchor.emplace(f->id, Launch{stack_.empty() ? root_ : stack_.back().node, ti_});
  }
}

void SpanNester::fold_thread(uint32_t ti) {
  Thread& t = events_.threads[ti];
  spans_from_marks(t);
  if (gpu_) {
    // Device work leaves the thread's nesting; other device spans are dropped.
    size_t keep = 0;
    for (const Span& s : t.spans) {
      if (s.kind == kGpu) links_.acts.push_back(Activity{s.start, s.end, s.name, s.corr, s.stream, ti});
      else if (s.kind != kDeviceOther) t.spans[keep++] = s;
    }
    t.spans.resize(keep);
  }
  if (t.spans.empty()) return;
  ++stats_.threads;
  std::sort(t.spans.begin(), t.spans.end(), span_before);
  ti_ = ti;
  root_ = thread_root(t, &root_depth_);
  links_.roots[ti] = root_;
  anchors_ = gpu_ ? &starts_by_thread_[ti] : nullptr;
  if (anchors_)
    std::sort(anchors_->begin(), anchors_->end(), [](const Flow* a, const Flow* b) { return a->ts < b->ts; });
  next_anchor_ = 0;
  segs_ = links_.segments.empty() ? nullptr : &links_.segments[ti];
  seg_start_ = 0;
  stack_.clear();
  // Spans in order, the split-off parts (deferred_) merged in, so every
  // thread's total stays the time it covered.
  size_t next = 0;
  while (next < t.spans.size() || !deferred_.empty()) {
    if (deferred_.empty() || (next < t.spans.size() && span_before(t.spans[next], deferred_.top()))) {
      place(t.spans[next++]);
    } else {
      Span s = deferred_.top();
      deferred_.pop();
      place(s);
    }
  }
  bind_anchors_before(std::numeric_limits<int64_t>::max());
  while (!stack_.empty()) close_top();
  std::vector<Span>().swap(t.spans);
}

// One span (in nesting order) onto the thread's stack of open spans.
void SpanNester::place(Span s) {
  // Anchors before this span's start; one exactly at it binds to it (or
  // to a deeper span starting at the same time), so waits for the next.
  bind_anchors_before(s.start);
  while (!stack_.empty() && stack_.back().end <= s.start) close_top();
  if (!stack_.empty() && s.end > stack_.back().end) {
    if (s.end - stack_.back().end <= tick_) {
      ++stats_.rounding;
      s.end = stack_.back().end;
    } else {
      if (!stats_.overlaps++)
        stats_.first_overlap = "byte " + std::to_string(s.offset) + ": " + quote_name(profile_.frame_name(s.name)) +
                               " ends " + std::to_string((s.end - stack_.back().end) / 1000.0) +
                               " us after its parent " +
                               quote_name(profile_.frame_name(profile_.node(stack_.back().node).frame));
      deferred_.push(Span{stack_.back().end, s.end, s.offset, s.name, s.kind, s.corr, s.stream});
      s.end = stack_.back().end;
    }
  }
  if (s.end == s.start) {
    ++stats_.zero_length;
    if (s.kind == kLaunch && gpu_) {  // a launch still names its kernels
      NodeId parent = stack_.empty() ? root_ : stack_.back().node;
      links_.launch_of.emplace(s.corr, Launch{profile_.child(parent, s.name), ti_});
      ++stats_.launches;
    }
    return;
  }
  if (root_depth_ + stack_.size() >= kMaxFrames) {  // its time stays with the deepest kept span
    if (!stats_.too_deep++)
      stats_.first_too_deep = "byte " + std::to_string(s.offset) + ": " + quote_name(profile_.frame_name(s.name));
    if (s.kind == kLaunch && gpu_) links_.launch_of.emplace(s.corr, Launch{stack_.back().node, ti_});
    return;
  }
  ++stats_.spans;
  if (!stack_.empty()) stack_.back().children += s.end - s.start;
  if (segs_) {
    if (!stack_.empty() && s.start > seg_start_) segs_->push_back(Segment{seg_start_, s.start, stack_.back().node});
    seg_start_ = s.start;
  }
  NodeId node = profile_.child(stack_.empty() ? root_ : stack_.back().node, s.name);
  stack_.push_back(Open{s.start, s.end, 0, node});
  if (s.kind == kLaunch && gpu_) {
    links_.launch_of.emplace(s.corr, Launch{node, ti_});
    ++stats_.launches;
  }
}

}  // namespace

void nest_thread_spans(TraceEvents& events, FoldedProfile& profile, const ChromeTraceOptions& opt,
                       ChromeTraceStats& stats, SelfTimes& self, GpuLinks& links) {
  SpanNester(events, profile, opt, stats, self, links).run();
}

}  // namespace fg::chrome_trace
