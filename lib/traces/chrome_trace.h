// Chrome trace-event JSON (chrome://tracing, Perfetto's JSON import, the
// PyTorch profiler's Kineto traces, libtorch's legacy exporter, MXNet's
// profiler) folded into stacks per thread weighted by self time (the CPU
// view), or GPU kernels folded under the CPU stacks that launched them (the
// GPU view). Streamed (trace_json_scanner.h) so traces of GBs fit.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "folded/folded_profile.h"

namespace fg {

struct ChromeTraceOptions {
  // Root frames of every stack: "PROCESS;THREAD" (default), "THREAD" or none.
  // PROCESS is the process_name metadata, else the pid as written ("pid 42",
  // or the string itself when pid is a string such as "CPU Functions");
  // THREAD is the thread_name metadata, else "tid 7" (or the string).
  enum class Roots { ProcessAndThread, Thread, None };
  Roots roots = Roots::ProcessAndThread;
  // Weights in microseconds (the trace's unit) or integer nanoseconds.
  bool nanoseconds = false;
  // Skip events with missing or mistyped fields (counted in the stats)
  // instead of failing. Malformed JSON always fails.
  bool lenient = false;
  bool progress = false;
  // Cpu: every thread's spans (GPU streams as threads of their own).
  // Gpu: GPU activities (kernels, memcpy, memset) as leaves "[gpu] NAME"
  // under the CPU stack of the runtime call that launched them (matched by
  // args.correlation, else by flow events), weight = device time; activities
  // with no launch found go under "[gpu] unattributed;stream N".
  enum class View { Cpu, Gpu };
  View view = View::Cpu;
  // Gpu view: also each stream's idle gaps (between its activities), as
  // "[gpu idle]" under the CPU spans running at the time on the thread that
  // launched the activity after the gap.
  bool gpu_idle = false;
  // Gpu view: kernel names as written (only ';' and line breaks replaced)
  // instead of shortened by gpu_kernel_frame_name.
  bool full_kernel_names = false;
  // A frame above everything (e.g. "rank 1"), empty for none.
  std::string root_label;
};

struct ChromeTraceStats {
  uint64_t events = 0;           // elements of traceEvents
  uint64_t spans = 0;            // X events and matched B/E pairs folded
  uint64_t metadata = 0;         // M events
  uint64_t other_phases = 0;     // instant, counter, async, flow, ... (not durations; ignored)
  uint64_t unknown_phases = 0;   // a "ph" the format does not define (ignored)
  uint64_t bad_events = 0;       // skipped in lenient mode
  uint64_t unmatched_ends = 0;   // E with no open B on its thread (ignored)
  uint64_t unclosed_begins = 0;  // B never ended (ignored)
  uint64_t overlaps = 0;         // spans ending after their parent: split there, the rest a sibling
  uint64_t too_deep = 0;         // spans below 4096 frames: their time stays with the span above
  uint64_t zero_length = 0;      // spans of zero duration (nothing to weigh)
  uint64_t threads = 0;
  uint64_t trace_spans = 0;      // whole-profile spans (cat "Trace") not folded as frames
  uint64_t rounding = 0;         // children ending within one tick after their parent (clamped silently)
  // Gpu view:
  uint64_t gpu_activities = 0, gpu_by_correlation = 0, gpu_by_flow = 0, gpu_unattributed = 0;
  double gpu_us = 0, gpu_unattributed_us = 0, gpu_idle_us = 0;
  uint64_t launches = 0;         // CPU spans carrying a correlation id
  int64_t rank = -1;             // distributedInfo.rank when the trace has it
  bool missing_close = false;    // array format cut after a complete event (allowed by the format)
  // The first example of each problem, "byte N: ..." (empty when none).
  std::string first_unknown_phase, first_bad_event, first_unmatched_end, first_unclosed_begin, first_overlap,
      first_too_deep;
  // One line per kind of problem seen, for the CLI to print.
  std::vector<std::string> warnings() const;
};

// Whether a file's first bytes look like Chrome trace JSON: the first
// non-space byte (after a UTF-8 BOM) is '{' or '[' and the head mentions
// "traceEvents" or a "ph" key.
bool looks_like_chrome_trace(std::string_view head);

// Reads `path` ("-" = stdin; gzip is recognised by its magic bytes) and folds every thread's
// duration events into stacks: each span's self time (its duration minus its
// children's) is the weight of the stack "ROOTS;outer;...;span", so a
// thread's total is the wall time covered by its top-level spans. Spans are
// nested by time per (pid, tid): sorted by start, longer first, then file
// order. Throws InputError naming the file and byte offset for malformed
// JSON, a missing traceEvents array, and (unless lenient) events with bad
// fields; unbalanced B/E, spans outliving their parent (split at its end, the rest
// nested where it falls) and unknown phases are counted
// in `stats` instead; a child ending within one tick (1 us for traces written
// in whole microseconds, else 1 ns) after its parent is the exporter's
// rounding and is clamped silently. Whole-profile spans (cat "Trace", e.g.
// "PyTorch Profiler (0)") are not folded.
FoldedProfile fold_chrome_trace(const std::string& path, const ChromeTraceOptions& options = {},
                                ChromeTraceStats* stats = nullptr);
// The same, adding to `into` (several traces in one profile).
void fold_chrome_trace_into(const std::string& path, FoldedProfile& into, const ChromeTraceOptions& options = {},
                            ChromeTraceStats* stats = nullptr);

// A GPU kernel name as a frame: demangled if mangled, return type and the
// outermost argument list dropped, template arguments kept:
// "void at::native::vectorized_elementwise_kernel<4, F>(int, F)" ->
// "at::native::vectorized_elementwise_kernel<4, F>".
std::string gpu_kernel_frame_name(std::string_view name);

}  // namespace fg
