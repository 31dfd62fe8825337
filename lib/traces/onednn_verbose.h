// oneDNN (formerly DNNL, MKL-DNN) verbose logs - the lines ONEDNN_VERBOSE=1,
// DNNL_VERBOSE=1 or MKLDNN_VERBOSE=1 print per primitive execution - folded
// as "primitive;implementation;shape" stacks weighted by execution time, and
// summarised per primitive kind and implementation for `fgtool report`.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "folded/folded_profile.h"

namespace fg {

// One "exec" line. Views point into the line being parsed.
struct OnednnExec {
  std::string_view marker;          // "onednn_verbose", "dnnl_verbose" or "mkldnn_verbose"
  std::string_view engine;          // "cpu", "gpu"; empty in mkldnn 0.x lines
  std::string_view primitive;       // "convolution", "reorder", "matmul", ...
  std::string_view implementation;  // "jit:avx512_core", "gemm:jit", "ref:any", ...
  std::string_view prop_kind;       // "forward_training", "backward_data", "undef", ...
  std::string_view problem;         // benchdnn-style shape: "mb2_ic3oc8_ih16oh16kh3...", "2x16x7x7"
  double time_ms = 0;
};

// Line-at-a-time parser. Understands the layouts
//   mkldnn_verbose,exec,PRIM,IMPL,PROP,FORMATS,AUX,PROBLEM,TIME               (MKL-DNN 0.x)
//   dnnl_verbose,exec,ENGINE,PRIM,IMPL,PROP,MDS,ATTRS,AUX,PROBLEM,TIME        (DNNL 1.x, oneDNN 2.x)
//   onednn_verbose,TIMESTAMP,exec,ENGINE,...                                  (ONEDNN_VERBOSE_TIMESTAMP=1)
//   onednn_verbose[,v1][,TIMESTAMP],primitive,exec,ENGINE,...                 (oneDNN 3.x)
// and follows a "prim_template:"/"template:" info line when the log has one.
class OnednnVerboseParser {
 public:
  enum class Kind {
    NotVerbose,  // no verbose marker: the program's own output
    Exec,        // a primitive execution; `out` is filled
    Other,       // info, create, exec:check, graph, ... lines
    Malformed,   // an exec line whose fields do not parse; see error()
  };
  Kind parse(std::string_view line, OnednnExec& out);
  const std::string& error() const { return error_; }

 private:
  // A template line ("...,info,prim_template:operation,engine,..."): learns
  // the field offsets and returns true; false for any other line.
  bool read_template();
  // The fields of an exec line, "exec" at fields_[exec].
  Kind read_exec(size_t exec, OnednnExec& out);

  // Offsets from the "exec" field, from a template line (-1 = unknown).
  int engine_ = -1, primitive_ = -1, implementation_ = -1, prop_kind_ = -1, problem_ = -1, time_ = -1;
  bool have_template_ = false;
  std::vector<std::string_view> fields_;
  std::string error_;
};

struct OnednnVerboseOptions {
  // Malformed exec lines are counted and skipped either way (a log mixes
  // many oneDNN versions' lines). Strict (the default) still fails when the
  // log has exec lines and not one of them parses: that is not a profile of
  // nothing, it is a log fgtool cannot read. Lenient accepts it, empty.
  bool lenient = false;
};

struct OnednnVerboseStats {
  uint64_t lines = 0, exec_lines = 0, other_verbose = 0, not_verbose = 0, malformed = 0;
  std::string first_malformed;  // "FILE:LINE: reason"
  double total_ms = 0;
  std::vector<std::string> warnings() const;
};

// Calls fn for every exec line of `path` ("-" = stdin; gzip is recognised).
// Throws InputError when the file has no verbose lines at all, and (unless
// lenient) when every exec line in it is malformed.
void read_onednn_verbose(const std::string& path, const std::function<void(const OnednnExec&)>& fn,
                         OnednnVerboseStats* stats = nullptr, const OnednnVerboseOptions& options = {});

// "primitive;implementation;problem" stacks, weights in microseconds.
FoldedProfile fold_onednn_verbose(const std::string& path, OnednnVerboseStats* stats = nullptr,
                                  const OnednnVerboseOptions& options = {});

// Time per primitive kind and per implementation of each kind.
struct OnednnSummary {
  struct Row {
    std::string primitive, implementation;  // implementation empty in per-primitive rows
    uint64_t count = 0;
    double us = 0;
  };
  std::string source;
  double total_us = 0;
  uint64_t count = 0;
  std::vector<Row> primitives;       // by time, largest first
  std::vector<Row> implementations;  // by primitive (in the order above), then time
};
OnednnSummary summarize_onednn_verbose(const std::vector<std::string>& paths, OnednnVerboseStats* stats = nullptr,
                                       const OnednnVerboseOptions& options = {});
std::string format_onednn_summary_text(const OnednnSummary& s);
std::string format_onednn_summary_json(const OnednnSummary& s);
std::string format_onednn_summary_csv(const OnednnSummary& s);

// Whether a file's first bytes contain a verbose line at the start of a line.
bool looks_like_onednn_verbose(std::string_view head);

}  // namespace fg
