#include "traces/chrome_trace.h"

#include <cstdio>

#include "diagnostics/input_error.h"
#include "diagnostics/progress.h"
#include "folded/folded_profile.h"
#include "folded/input_stream.h"
#include "symbols/symbol_names.h"
#include "traces/gpu_attribution.h"
#include "traces/span_nesting.h"
#include "traces/trace_events.h"
#include "traces/trace_json_scanner.h"

namespace fg {

using chrome_trace::trimmed;

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

namespace {

// The collected events into the profile: spans nested per thread (CPU view),
// or device work under its launches (GPU view); weights in us or ns.
void fold_events(chrome_trace::TraceEvents& events, FoldedProfile& profile, const ChromeTraceOptions& options,
                 ChromeTraceStats& stats) {
  chrome_trace::SelfTimes self;
  chrome_trace::GpuLinks links;
  chrome_trace::nest_thread_spans(events, profile, options, stats, self, links);
  if (options.view == ChromeTraceOptions::View::Gpu)
    chrome_trace::attribute_gpu_activities(events, links, profile, options, stats, self);
  // Division (not * 1e-3) gives the double nearest the decimal: 7281 ns -> 7.281.
  double divisor = options.nanoseconds ? 1.0 : 1000.0;
  for (NodeId n = 0; n < self.ns.size(); ++n)
    if (self.ns[n] > 0) profile.add_self(n, double(self.ns[n]) / divisor);
  profile.units = options.nanoseconds ? "ns" : "us";
}

}  // namespace

void fold_chrome_trace_into(const std::string& path, FoldedProfile& profile, const ChromeTraceOptions& options,
                            ChromeTraceStats* stats) {
  ChromeTraceStats local;
  ChromeTraceStats& st = stats ? *stats : local;
  st = ChromeTraceStats{};
  InputStream in(path);
  Progress progress("trace", 0, options.progress);
  chrome_trace::TraceEventCollector collector(in.name(), profile, options, st);
  TraceJsonScanResult r = scan_trace_json(in, collector, &progress);
  st.missing_close = r.missing_close;
  st.rank = r.rank;
  if (!r.found_events)
    throw InputError::at_offset(in.name(), 0,
                                r.root_is_object ? "no \"traceEvents\" array: not a Chrome trace"
                                                 : "not a Chrome trace (expected an object or an array)");
  fold_events(collector.events(), profile, options, st);
  progress.finish(std::to_string(st.events) + " events");
}

FoldedProfile fold_chrome_trace(const std::string& path, const ChromeTraceOptions& options, ChromeTraceStats* stats) {
  FoldedProfile profile;
  fold_chrome_trace_into(path, profile, options, stats);
  return profile;
}

}  // namespace fg
