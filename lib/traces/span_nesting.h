// The CPU half of folding a Chrome trace: each thread's spans nested by time
// into stacks below the thread's root frames, with self times; in the GPU
// view it also records what gpu_attribution.h needs to hang device work under
// the CPU stacks that launched it.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "folded/folded_profile.h"
#include "traces/chrome_trace.h"
#include "traces/trace_events.h"

namespace fg::chrome_trace {

// Self time per tree node (index = NodeId), summed as integer nanoseconds
// and converted once at the end.
struct SelfTimes {
  std::vector<int64_t> ns;
  void add(NodeId node, int64_t t) {
    if (node >= ns.size()) ns.resize(std::max<size_t>(node + 1, ns.size() * 2), 0);
    ns[node] += t;
  }
};

struct Launch {  // a CPU span that launched device work
  NodeId node;
  uint32_t thread;
};
struct Activity {  // a kernel, memcpy or memset
  int64_t start, end;
  FrameId name;
  int64_t corr, stream;
  uint32_t thread;
};
struct Segment {  // [start, end): `node` is the innermost span of its thread
  int64_t start, end;
  NodeId node;
};

// Filled by nest_thread_spans in the GPU view, read by attribute_gpu_activities.
struct GpuLinks {
  std::unordered_map<int64_t, Launch> launch_of;    // correlation -> launching CPU span
  std::unordered_map<int64_t, Launch> flow_anchor;  // flow id -> the CPU span its 's' binds to
  std::vector<Activity> acts;                       // device work, taken out of the threads' nesting
  std::vector<std::vector<Segment>> segments;       // per thread, with gpu_idle only
  std::vector<NodeId> roots;                        // per thread: its root node (0 when it has no spans)
};

// Folds every thread of `events` into `profile` (CPU view: self times into
// `self`; GPU view: the CPU nodes only, and `links`). Spans outliving their
// parent are split at its end; the counts go to `stats`. Leaves the threads' spans empty.
void nest_thread_spans(TraceEvents& events, FoldedProfile& profile, const ChromeTraceOptions& opt,
                       ChromeTraceStats& stats, SelfTimes& self, GpuLinks& links);

}  // namespace fg::chrome_trace
