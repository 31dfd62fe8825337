// The trace inputs as fgtool's commands see them: which kind a file is, one
// call that folds it (used by `fgtool fold`), and the profile loaders that let
// svg, report, diff and export read trace JSON and oneDNN verbose logs.
#pragma once

#include <functional>
#include <string>

#include "folded/folded_profile.h"

namespace fg {

enum class TraceInputKind { None, ChromeTrace, OnednnVerbose };

// From the file's first bytes ("-" and unreadable files: None).
TraceInputKind detect_trace_input(const std::string& path);

struct TraceFoldOptions {
  bool lenient = false;   // Chrome trace: skip events with bad fields instead of failing
  bool progress = false;
};

// Folds a Chrome trace or a oneDNN verbose log; warnings (counted problems)
// are passed to `warn` one line each.
FoldedProfile fold_trace_input(const std::string& path, TraceInputKind kind, const TraceFoldOptions& options,
                               const std::function<void(const std::string&)>& warn);

// Registers the Chrome trace and oneDNN verbose loaders with
// fg::register_profile_loader (once; later calls do nothing).
void register_trace_loaders();

}  // namespace fg
