// Whether `perf record` can work here for a given view, and if not, why and
// how to fix it: perf missing, perf_event_open refused (perf_event_paranoid,
// containers), sched tracepoints unavailable (tracefs not mounted). Probes by
// running perf itself, then reads /proc and /sys to explain a failure.
#pragma once

#include <string>

#include "record/record_command.h"

namespace fg {

struct CapabilityReport {
  bool ok = false;
  std::string perf_path;   // resolved perf executable, when found
  std::string problem;     // one line: what is wrong
  std::string fix;         // what to do, possibly several lines
};

class PerfCapabilities {
 public:
  explicit PerfCapabilities(std::string perf = "perf") : perf_(std::move(perf)) {}
  // Runs the probes needed for `view` (a few short perf runs; about 0.1 s each).
  CapabilityReport check(RecordView view) const;

  // Explanations, separated from the probes so that each can be read alone.
  static std::string explain_missing_perf();
  static std::string explain_perf_event_open(const std::string& perf_output);
  static std::string explain_tracepoints(const std::string& perf_output);
  // /proc/sys/kernel/perf_event_paranoid, or -100 when unreadable.
  static int perf_event_paranoid();
  // The tracefs directory holding events/sched/sched_switch, or empty.
  static std::string tracefs_sched_switch_dir();

  // Where tracefs is mounted and whether this process can reach its
  // sched_switch event: "not mounted" and "mounted but unreadable" need
  // different fixes. `mounts` is /proc/self/mounts text.
  struct TracefsState {
    std::string mount_point;  // empty: no tracefs (or debugfs tracing) mount
    int error = 0;            // errno reaching MOUNT/events/sched/sched_switch; 0 = reachable
  };
  static TracefsState tracefs_state(const std::string& mounts);
  // The first lines of explain_tracepoints for that state.
  static std::string explain_tracefs(const TracefsState& state);

 private:
  std::string perf_;
};

}  // namespace fg
