// pprof on the command line: the --sample-index/--tag options every command
// that reads profiles takes (pprof input), and `fgtool export -f pprof`.
#pragma once

#include <string>
#include <vector>

#include "command.h"
#include "folded/profile_loader.h"

namespace fg::cli {

struct PprofInputCli {
  std::string sample_index;
  std::vector<std::string> tags;
  // Copies the options into a ProfileLoadOptions (throws UsageError on a bad --tag).
  void apply(ProfileLoadOptions& lo) const;
};
void add_pprof_input_options(po::options_description& options, PprofInputCli& cli);

// Whether `fgtool export` was asked for -f pprof (handled by run_export_pprof).
bool wants_pprof_export(const std::vector<std::string>& args);
int run_export_pprof(const std::vector<std::string>& args);

}  // namespace fg::cli
