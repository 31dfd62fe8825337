// Differential flamegraphs: two profiles (A = before, B = after) merged into
// one tree with both sides' weights per node, drawn shaped by B (or A with
// negate) and coloured by the change in each frame's self weight. The
// DiffProfile is public so reports (e.g. a per-category table) can reuse it.
#pragma once

#include <string>
#include <vector>

#include "diagnostics/atomic_output.h"
#include "folded/folded_profile.h"
#include "folded/profile_loader.h"
#include "render/flamegraph.h"

namespace fg {

struct DiffOptions {
  bool normalize = true;  // scale A so its total equals B's
  bool negate = false;    // shape the graph by A instead of B (shows frames only in A)
  std::string name_a, name_b;  // what A and B are (file names), for the subtitle
};

struct DiffProfile {
  // Union of both sides' stacks (names shared). Its self weights are
  // self_a + self_b, so for_each_stack visits stacks present on either side.
  FoldedProfile tree;
  // Per tree node (index = NodeId); A is already multiplied by scale_a.
  std::vector<double> self_a, self_b, total_a, total_b;
  double sum_a = 0, sum_b = 0;          // totals, A scaled
  double raw_sum_a = 0, raw_sum_b = 0;  // totals as read
  double scale_a = 1;                   // B's total / A's total when normalising, else 1
  bool normalized = false;
};

DiffProfile build_diff(const FoldedProfile& a, const FoldedProfile& b, const DiffOptions& options);
// The same diff from both sides already read into one tree (load_diff_union),
// without copying either side: what `fgtool diff` uses for folded inputs.
DiffProfile build_diff(DiffUnion&& both, const DiffOptions& options);

// Colour of a frame whose self weight changed by `delta`, given the largest
// |delta| drawn: red for growth, blue for shrinkage, strength |delta|/max,
// near-white when unchanged.
std::string diff_fill(double delta, double max_abs_delta);

// The differential flamegraph (title "Differential Flame Graph" unless set;
// the default subtitle names A and B and the factor A was scaled by). Legend
// rows with an empty share (categories, from options.node_style) read
// "gemm 41.2% -> 38.0% (-3.2 pp)": each side's share of its total in frames
// of that category (self weights), B's being what a `cat:` search matches.
void render_diff_flamegraph(const DiffProfile& diff, const DiffOptions& diff_options, const SvgOptions& options,
                            std::string& out);

// difffolded.pl's three columns, "stack countA countB", in byte order of
// the stack; A as stored (scaled when normalised).
void write_diff_folded(const DiffProfile& diff, std::string& out);
void write_diff_folded(const DiffProfile& diff, AtomicOutput& out);  // streamed in 1 MiB chunks

// Per function name: self and inclusive weights on both sides (inclusive
// counted once per stack even when the name recurses). A scaled.
struct DiffFrameSummary {
  std::string name;
  double self_a = 0, self_b = 0, incl_a = 0, incl_b = 0;
};
std::vector<DiffFrameSummary> summarize_diff_by_frame(const DiffProfile& diff);

// A text table of the `n` functions that gained and lost most share of the
// total, by self and by inclusive weight.
std::string diff_top_table(const DiffProfile& diff, size_t n, const std::string& count_name);

}  // namespace fg
