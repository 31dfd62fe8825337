// pprof on the command line: the --sample-index/--tag options every command
// that reads profiles takes (pprof input), and `fgtool export -f pprof`.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "command.h"
#include "folded/profile_loader.h"
#include "pprof/pprof_export.h"

namespace fg::cli {

struct PprofInputCli {
  std::string sample_index;
  std::vector<std::string> tags;
  // Copies the options into a ProfileLoadOptions (throws UsageError on a bad --tag).
  void apply(ProfileLoadOptions& lo) const;
};
void add_pprof_input_options(po::options_description& options, PprofInputCli& cli);

// The pprof output options merge and export share: each KEY=VALUE in
// `labels` added to every sample (throws UsageError on a bad one) and, with
// `categories`, the category rules (built-in plus rules_file). The returned
// matcher (null without categories) must outlive the use of `eo`.
std::unique_ptr<CategoryMatcher> set_pprof_output_options(PprofExportOptions& eo,
                                                          const std::vector<std::string>& labels,
                                                          const std::string& rules_file, bool categories);

// Whether `fgtool export` was asked for -f pprof (handled by run_export_pprof).
bool wants_pprof_export(const std::vector<std::string>& args);
int run_export_pprof(const std::vector<std::string>& args);

}  // namespace fg::cli
