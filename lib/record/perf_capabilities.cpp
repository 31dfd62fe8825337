#include "record/perf_capabilities.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "record/subprocess.h"

namespace fg {

namespace {

std::string first_lines(const std::string& text, size_t max_lines = 3) {
  std::string out;
  size_t b = 0, n = 0;
  while (b < text.size() && n < max_lines) {
    size_t e = text.find('\n', b);
    if (e == std::string::npos) e = text.size();
    std::string line = text.substr(b, e - b);
    b = e + 1;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (!out.empty()) out += " / ";
    out += line;
    n++;
  }
  return out;
}

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

bool file_mentions(const std::string& path, const std::string& needle) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);)
    if (line == needle) return true;
  return false;
}

}  // namespace

int PerfCapabilities::perf_event_paranoid() {
  std::ifstream in("/proc/sys/kernel/perf_event_paranoid");
  int v = -100;
  if (!(in >> v)) return -100;
  return v;
}

std::string PerfCapabilities::tracefs_sched_switch_dir() {
  for (const char* root : {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}) {
    std::string r = root;
    if (exists(r + "/events/sched/sched_switch") || file_mentions(r + "/available_events", "sched:sched_switch"))
      return r;
  }
  return {};
}

std::string PerfCapabilities::explain_missing_perf() {
  return "perf is not installed or not on PATH. Install it:\n"
         "  Debian:  sudo apt-get install linux-perf\n"
         "  Ubuntu:  sudo apt-get install linux-tools-common linux-tools-$(uname -r)\n"
         "  Fedora:  sudo dnf install perf\n"
         "or pass its location with --perf PATH.";
}

std::string PerfCapabilities::explain_perf_event_open(const std::string& perf_output) {
  int paranoid = perf_event_paranoid();
  std::string s = "perf could not open a cpu-clock event (perf_event_open was refused)";
  if (paranoid != -100) s += "; kernel.perf_event_paranoid is " + std::to_string(paranoid);
  s += ".\n";
  if (paranoid > 1 && geteuid() != 0)
    s += "  Allow profiling of your own processes:  sudo sysctl kernel.perf_event_paranoid=1\n"
         "  (persist it in /etc/sysctl.d/99-perf.conf), or run as root / with CAP_PERFMON.\n";
  s += "  In a container, perf_event_open is often blocked: run it with --cap-add PERFMON (or\n"
       "  --privileged) and a seccomp profile that allows perf_event_open.\n";
  std::string said = first_lines(perf_output);
  if (!said.empty()) s += "perf said: " + said;
  return s;
}

PerfCapabilities::TracefsState PerfCapabilities::tracefs_state(const std::string& mounts) {
  TracefsState st;
  std::istringstream in(mounts);
  for (std::string line; std::getline(in, line);) {
    std::istringstream f(line);
    std::string dev, dir, type;
    if (!(f >> dev >> dir >> type)) continue;
    std::string root;
    if (type == "tracefs") root = dir;
    else if (type == "debugfs") root = dir + "/tracing";
    else continue;
    // Prefer the first mount whose event is reachable; else keep the first seen.
    struct stat sb;
    int err = ::stat((root + "/events/sched/sched_switch").c_str(), &sb) == 0 ? 0 : errno;
    if (st.mount_point.empty() || (err == 0 && st.error != 0)) {
      st.mount_point = root;
      st.error = err;
    }
  }
  return st;
}

std::string PerfCapabilities::explain_tracefs(const TracefsState& state) {
  if (state.mount_point.empty())
    return ": tracefs is not mounted (no tracefs in /proc/self/mounts).\n"
           "  Mount it:  sudo mount -t tracefs nodev /sys/kernel/tracing\n"
           "  (older kernels: sudo mount -t debugfs nodev /sys/kernel/debug)\n";
  if (state.error == EACCES || state.error == EPERM)
    return ": tracefs is mounted at " + state.mount_point +
           " but this user may not read it (permission denied).\n"
           "  Allow read access:  sudo chmod -R o+rX " + state.mount_point +
           "  (or mount it with -o mode=755)\n";
  if (state.error != 0)
    return ": tracefs is mounted at " + state.mount_point + " but " + state.mount_point +
           "/events/sched/sched_switch cannot be reached (" + std::strerror(state.error) +
           "): this kernel may lack the sched tracepoints.\n";
  return " (tracefs is at " + state.mount_point + ").\n";
}

std::string PerfCapabilities::explain_tracepoints(const std::string& perf_output) {
  std::string s = "the sched:sched_switch tracepoint is not available to perf";
  std::string dir = tracefs_sched_switch_dir();
  if (dir.empty()) {
    std::ifstream in("/proc/self/mounts");
    std::stringstream mounts;
    mounts << in.rdbuf();
    TracefsState state = tracefs_state(mounts.str());
    s += explain_tracefs(state);
    if (!state.mount_point.empty()) dir = state.mount_point;
  } else {
    s += " (tracefs is at " + dir + ").\n";
  }
  if (geteuid() != 0)
    s += "  As a normal user, tracepoints also need:  sudo sysctl kernel.perf_event_paranoid=-1\n"
         "  and read access to tracefs:  sudo chmod -R o+rX " + (dir.empty() ? std::string("/sys/kernel/tracing") : dir) +
         "\n";
  s += "  On-CPU profiles need no tracepoint: run without --off-cpu/--wall.\n";
  std::string said = first_lines(perf_output);
  if (!said.empty()) s += "perf said: " + said;
  return s;
}

CapabilityReport PerfCapabilities::check(RecordView view) const {
  CapabilityReport r;
  r.perf_path = find_in_path(perf_);
  if (r.perf_path.empty()) {
    r.problem = "perf is not installed (no '" + perf_ + "' in PATH)";
    r.fix = explain_missing_perf();
    return r;
  }
  SubprocessResult version = run_captured({r.perf_path, "--version"});
  if (version.status != 0) {
    // Debian's /usr/bin/perf is a wrapper that fails when no perf matches the running kernel.
    r.problem = "perf does not run: " + first_lines(version.output, 2);
    r.fix = "Install the perf matching your kernel (Debian: sudo apt-get install linux-perf; Ubuntu: "
            "sudo apt-get install linux-tools-$(uname -r)), or pass a working one with --perf PATH.";
    return r;
  }
  SubprocessResult cpu = run_captured({r.perf_path, "record", "-q", "-e", "cpu-clock", "-o", "/dev/null", "true"});
  if (cpu.status != 0) {
    r.problem = "perf cannot record here (perf_event_open refused)";
    r.fix = explain_perf_event_open(cpu.output);
    return r;
  }
  if (view != RecordView::OnCpu) {
    SubprocessResult tp =
        run_captured({r.perf_path, "record", "-q", "-e", "sched:sched_switch", "-o", "/dev/null", "true"});
    if (tp.status != 0) {
      r.problem = std::string("the ") + view_name(view) + " view needs the sched:sched_switch tracepoint, which perf cannot open";
      r.fix = explain_tracepoints(tp.output);
      return r;
    }
  }
  r.ok = true;
  return r;
}

}  // namespace fg
