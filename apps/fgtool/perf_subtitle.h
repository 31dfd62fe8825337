// The subtitle of a graph made from perf.data ("cpu-clock at 999 Hz;
// command: ./train --threads 2; 12.3 s sampled"), from the file's header:
// shared by `fgtool svg perf.data` and `fgtool record --svg`. Header-only.
#pragma once

#include <cstdio>
#include <string>

#include "folded/stream_head.h"
#include "perf/perf_data_reader.h"

namespace fg::cli {

// "cpu-clock at 999 Hz; ./train --threads 2; 12.3 s": what a graph made from
// perf.data was recorded with, from the file's header (no samples are read).
inline std::string perf_data_subtitle(const std::string& path) {
  // A pipe (`fgtool svg <(perf record -o - ...)`) is read once, by the fold.
  if (fg::is_stream_path(path)) return "";
  try {
    fg::PerfDataReader reader(path);
    const fg::PerfFileInfo& info = reader.info();
    std::string s;
    for (const auto& a : info.attrs) {
      if (a.name.empty() || s.find(a.name) != std::string::npos) continue;
      if (!s.empty()) s += ", ";
      s += a.name;
      if (a.freq() && a.sample_period) s += " at " + std::to_string(a.sample_period) + " Hz";
      else if (a.sample_period > 1) s += " every " + std::to_string(a.sample_period);
    }
    // The profiled command: what follows "--" in perf's command line, else
    // the first word after `perf record` and its options (those below take a value).
    static const char* const kValued[] = {"-o", "--output", "-e", "--event", "-F", "--freq", "-c", "--count",
                                          "-p", "--pid", "-t", "--tid", "-C", "--cpu", "-m", "--mmap-pages",
                                          "--call-graph", "-u", "--uid", "-G", "--cgroup", "-j", "--branch-filter",
                                          "-k", "--clockid", "--filter", "-r", "--realtime", "-D", "--delay",
                                          "--user-regs", "--intr-regs", "--max-size", "--switch-output", "--affinity"};
    const auto& cmd = info.cmdline;
    size_t from = cmd.size();
    for (size_t i = 0; i < cmd.size(); ++i)
      if (cmd[i] == "--") from = i + 1;
    if (from == cmd.size()) {
      size_t i = 0;
      while (i < cmd.size() && cmd[i] != "record") ++i;
      for (++i; i < cmd.size(); ++i) {
        if (cmd[i].empty() || cmd[i][0] != '-') break;
        for (const char* v : kValued)
          if (cmd[i] == v) ++i;
      }
      from = i < cmd.size() ? i : 0;
    }
    std::string command;
    for (size_t i = from; i < cmd.size(); ++i) command += (command.empty() ? "" : " ") + cmd[i];
    if (!command.empty()) s += (s.empty() ? "" : "; ") + std::string("command: ") + command;
    if (info.last_sample_time > info.first_sample_time) {
      char buf[48];
      std::snprintf(buf, sizeof buf, "%.1f s sampled", double(info.last_sample_time - info.first_sample_time) / 1e9);
      s += (s.empty() ? "" : "; ") + std::string(buf);
    }
    return s;
  } catch (const std::exception&) {
    return "";  // the subtitle is a courtesy; the load itself reports a damaged file
  }
}

}  // namespace fg::cli
