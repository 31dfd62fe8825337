// The trace inputs as fgtool's commands see them: which kind a file is (by
// content, gzip or not), one call that folds it (used by `fgtool fold`), and
// the profile loaders that let svg, report, diff and export read trace JSON
// and oneDNN verbose logs.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "folded/folded_profile.h"

namespace fg {

enum class TraceInputKind { None, ChromeTrace, OnednnVerbose };

// From the file's first bytes, decompressed when gzip ("-" and unreadable files: None).
TraceInputKind detect_trace_input(const std::string& path);
// The same from bytes already read (raw: gzip is inflated here).
TraceInputKind detect_trace_input_head(std::string_view raw_head);
// Up to 4096 bytes of the decompressed start of a gzip stream whose first
// bytes are `raw` (as much as they give), or `raw` itself when not gzip.
std::string decompressed_head(std::string_view raw);

struct TraceFoldOptions {
  bool lenient = false;   // Chrome trace: skip events with bad fields instead of failing
  bool progress = false;
  bool gpu = false;       // Chrome trace: the GPU view (kernels under their launching CPU stacks)
  bool gpu_idle = false;  // with gpu: idle gaps per stream as [gpu idle]
  bool full_kernel_names = false;  // with gpu: kernel names as written, not shortened
  // Several inputs: "" (merged), "rank" (a root frame "rank N" per input, N
  // from the trace's distributedInfo, else the input's position; a rank
  // seen twice gets the file name added) or "file" (the file name).
  std::string label;
};

// Folds a Chrome trace or a oneDNN verbose log; warnings (counted problems)
// are passed to `warn` one line each.
FoldedProfile fold_trace_input(const std::string& path, TraceInputKind kind, const TraceFoldOptions& options,
                               const std::function<void(const std::string&)>& warn);
// Several inputs into one profile; kinds[i] is the kind of paths[i] (None:
// detected from the file; "-" is then read as a Chrome trace).
FoldedProfile fold_trace_inputs(const std::vector<std::string>& paths, const std::vector<TraceInputKind>& kinds,
                                const TraceFoldOptions& options,
                                const std::function<void(const std::string& path, const std::string& warning)>& warn);

// The Chrome trace and oneDNN verbose log loaders (plain or gzip), for
// fg::register_profile_loader's list (apps/fgtool/input_formats.cpp orders them).
void register_chrome_trace_loader();
void register_onednn_verbose_loader();

}  // namespace fg
