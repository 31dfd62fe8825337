// Chrome trace-event JSON (chrome://tracing, Perfetto's JSON import,
// libtorch's autograd profiler) folded into stacks per thread, weighted by
// self time, streamed with a SAX parser so traces of hundreds of MB fit.
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

// Reads `path` ("-" = stdin; gzip is recognised) and folds every thread's
// duration events into stacks: each span's self time (its duration minus its
// children's) is the weight of the stack "ROOTS;outer;...;span", so a
// thread's total is the wall time covered by its top-level spans. Spans are
// nested by time per (pid, tid): sorted by start, longer first, then file
// order. Throws InputError naming the file and byte offset for malformed
// JSON, a missing traceEvents array, and (unless lenient) events with bad
// fields; unbalanced B/E, spans outliving their parent (split at its end, the rest
// nested where it falls) and unknown phases are counted
// in `stats` instead.
FoldedProfile fold_chrome_trace(const std::string& path, const ChromeTraceOptions& options = {},
                                ChromeTraceStats* stats = nullptr);

}  // namespace fg
