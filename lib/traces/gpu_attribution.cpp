#include "traces/gpu_attribution.h"

#include <algorithm>

#include "folded/folded_profile.h"
#include "symbols/symbol_names.h"

namespace fg::chrome_trace {

namespace {

// Flow ends bind to device activities: "f" at an activity's time (bp "e":
// the enclosing one, else the next to start); "t" steps likewise.
// Returns activity index -> flow id.
std::unordered_map<uint64_t, int64_t> flows_of_activities(const std::vector<Flow>& flows,
                                                          const std::vector<Activity>& acts) {
  std::unordered_map<uint64_t, int64_t> flow_of_act;
  if (flows.empty() || acts.empty()) return flow_of_act;
  std::vector<size_t> order(acts.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (acts[a].thread != acts[b].thread) return acts[a].thread < acts[b].thread;
    return acts[a].start < acts[b].start;
  });
  for (const Flow& f : flows) {
    if (f.ph == 's') continue;
    auto lo = std::lower_bound(order.begin(), order.end(), f, [&](size_t a, const Flow& fl) {
      if (acts[a].thread != fl.thread) return acts[a].thread < fl.thread;
      return acts[a].start < fl.ts;
    });
    size_t hit = SIZE_MAX;
    if (lo != order.end() && acts[*lo].thread == f.thread && acts[*lo].start == f.ts) hit = *lo;
    else if (f.enclosing && lo != order.begin() && acts[*(lo - 1)].thread == f.thread && acts[*(lo - 1)].end > f.ts)
      hit = *(lo - 1);
    else if (!f.enclosing && lo != order.end() && acts[*lo].thread == f.thread)
      hit = *lo;
    if (hit != SIZE_MAX) flow_of_act.emplace(hit, f.id);
  }
  return flow_of_act;
}

class GpuAttribution {
 public:
  GpuAttribution(const TraceEvents& events, const GpuLinks& links, FoldedProfile& profile,
                 const ChromeTraceOptions& opt, ChromeTraceStats& stats, SelfTimes& self)
      : events_(events), links_(links), acts_(links.acts), profile_(profile), opt_(opt), stats_(stats), self_(self) {}

  void run() {
    std::unordered_map<uint64_t, int64_t> flow_of_act = flows_of_activities(events_.flows, acts_);
    label_root_ = opt_.root_label.empty() ? 0 : profile_.child(0, profile_.intern_from_input(opt_.root_label));
    launcher_.assign(acts_.size(), nullptr);
    for (size_t i = 0; i < acts_.size(); ++i) attribute(i, flow_of_act);
    if (opt_.gpu_idle && !acts_.empty()) add_idle_gaps();
  }

 private:
  // The "[gpu] NAME" leaf frame of a kernel name, once per name.
  FrameId leaf_of(FrameId name) {
    auto it = short_name_.find(name);
    if (it != short_name_.end()) return it->second;
    std::string_view raw = profile_.frame_name(name);
    FrameId id = profile_.intern(clamp_frame_name(
        "[gpu] " + (opt_.full_kernel_names ? folded_safe_name(trimmed(raw)) : gpu_kernel_frame_name(raw))));
    short_name_.emplace(name, id);
    return id;
  }

  NodeId unattributed(int64_t stream) {
    NodeId n = profile_.child(label_root_, profile_.intern("[gpu] unattributed"));
    return profile_.child(n, profile_.intern(stream >= 0 ? "stream " + std::to_string(stream) : "stream ?"));
  }

  // Activity i under its launch: by correlation id, else through a flow.
  void attribute(size_t i, const std::unordered_map<uint64_t, int64_t>& flow_of_act) {
    const Activity& a = acts_[i];
    int64_t ns = a.end - a.start;
    ++stats_.gpu_activities;
    stats_.gpu_us += ns / 1000.0;
    const Launch* l = nullptr;
    if (a.corr >= 0) {
      auto it = links_.launch_of.find(a.corr);
      if (it != links_.launch_of.end()) {
        l = &it->second;
        ++stats_.gpu_by_correlation;
      }
    }
    if (!l) {
      auto f = flow_of_act.find(i);
      if (f != flow_of_act.end()) {
        auto it = links_.flow_anchor.find(f->second);
        if (it != links_.flow_anchor.end()) {
          l = &it->second;
          ++stats_.gpu_by_flow;
        }
      }
    }
    launcher_[i] = l;
    NodeId parent = l ? l->node : unattributed(a.stream);
    if (!l) {
      ++stats_.gpu_unattributed;
      stats_.gpu_unattributed_us += ns / 1000.0;
    }
    if (ns > 0) self_.add(profile_.child(parent, leaf_of(a.name)), ns);
  }

  // A stream idle over [from, to) before activity `next_act`: under the CPU
  // spans its launching thread was in meanwhile.
  void add_gap(int64_t from, int64_t to, size_t next_act) {
    stats_.gpu_idle_us += (to - from) / 1000.0;
    const Launch* l = launcher_[next_act];
    if (!l) {
      self_.add(profile_.child(unattributed(acts_[next_act].stream), idle_), to - from);
      return;
    }
    const std::vector<Segment>& sg = links_.segments[l->thread];
    auto it = std::upper_bound(sg.begin(), sg.end(), from, [](int64_t v, const Segment& s) { return v < s.end; });
    int64_t covered = 0;
    for (; it != sg.end() && it->start < to; ++it) {
      int64_t a = std::max(from, it->start), b = std::min(to, it->end);
      if (b > a) {
        self_.add(profile_.child(it->node, idle_), b - a);
        covered += b - a;
      }
    }
    if (to - from > covered) self_.add(profile_.child(links_.roots[l->thread], idle_), (to - from) - covered);
  }

  // Per stream (device thread and stream id), the gaps between its busy intervals.
  void add_idle_gaps() {
    std::vector<size_t> order(acts_.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      if (acts_[a].thread != acts_[b].thread) return acts_[a].thread < acts_[b].thread;
      if (acts_[a].stream != acts_[b].stream) return acts_[a].stream < acts_[b].stream;
      return acts_[a].start < acts_[b].start;
    });
    idle_ = profile_.intern("[gpu idle]");
    int64_t busy_end = 0;
    for (size_t k = 0; k < order.size(); ++k) {
      const Activity& a = acts_[order[k]];
      bool same = k > 0 && acts_[order[k - 1]].thread == a.thread && acts_[order[k - 1]].stream == a.stream;
      if (same && a.start > busy_end) add_gap(busy_end, a.start, order[k]);
      busy_end = same ? std::max(busy_end, a.end) : a.end;
    }
  }

  const TraceEvents& events_;
  const GpuLinks& links_;
  const std::vector<Activity>& acts_;
  FoldedProfile& profile_;
  const ChromeTraceOptions& opt_;
  ChromeTraceStats& stats_;
  SelfTimes& self_;
  NodeId label_root_ = 0;
  FrameId idle_ = 0;
  std::unordered_map<FrameId, FrameId> short_name_;
  std::vector<const Launch*> launcher_;  // per activity, null when unattributed
};

}  // namespace

void attribute_gpu_activities(const TraceEvents& events, const GpuLinks& links, FoldedProfile& profile,
                              const ChromeTraceOptions& opt, ChromeTraceStats& stats, SelfTimes& self) {
  GpuAttribution(events, links, profile, opt, stats, self).run();
}

}  // namespace fg::chrome_trace
