// The GPU half of folding a Chrome trace (the GPU view): each device activity
// as a leaf "[gpu] NAME" under the CPU span that launched it (by correlation
// id, else by flow events), or under "[gpu] unattributed;stream N"; with
// gpu_idle, each stream's idle gaps under the CPU spans running meanwhile.
#pragma once

#include "folded/folded_profile.h"
#include "traces/chrome_trace.h"
#include "traces/span_nesting.h"
#include "traces/trace_events.h"

namespace fg::chrome_trace {

// After nest_thread_spans: adds the activities of `links` to `profile` (self
// times into `self`) and counts them in `stats`.
void attribute_gpu_activities(const TraceEvents& events, const GpuLinks& links, FoldedProfile& profile,
                              const ChromeTraceOptions& opt, ChromeTraceStats& stats, SelfTimes& self);

}  // namespace fg::chrome_trace
