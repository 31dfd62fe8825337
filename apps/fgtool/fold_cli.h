// The perf.data folding options shared by `fgtool fold`, `fgtool info` and
// every command that accepts perf.data input (svg, report, diff, record --svg).
#pragma once

#include <ostream>
#include <string>

#include "command.h"
#include "fold/fold_perf_data.h"

namespace fg::cli {

struct FoldCliOptions {
  std::string input, output;
  bool off_cpu = false, wall = false;
  bool pid = false, tid = false, kernel = false, jit = false, all = false, addrs = false;
  bool merge_jit = false;
  bool call_sites = false;
  bool inline_frames = false, no_demangle = false, count = false;
  std::string event, comm, pid_filter, tid_filter, time;
  std::string state;
  uint64_t min_block = 0;
  bool include_unfinished = false, partial = false, stats = false;
  std::string symfs, kallsyms, buildid_dir;
  std::string max_memory;  // --max-memory: "4G", "unlimited"; empty = automatic
  bool debuginfod = false;
  unsigned max_stack = 127;
  unsigned threads = 0;
};

void add_fold_options(po::options_description& options, FoldCliOptions& cli);
FoldOptions to_fold_options(const FoldCliOptions& cli, const po::variables_map& vm);
// Warnings, lost events, unwinding and off-CPU notes on stderr (always the
// important ones; everything with verbose).
void report_fold_stats(const std::string& input, const FoldOptions& options, const FoldStats& stats,
                       std::ostream& err, bool verbose);

}  // namespace fg::cli
