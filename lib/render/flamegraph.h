// Interactive SVG flamegraphs (flamegraph.pl style) from a FoldedProfile:
// hover details, click-to-zoom, regex search and the view in the URL. Other
// commands (svg, record --svg, the demo) call render_flamegraph directly;
// categories plug in through SvgOptions::frame_style/node_style and legend.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "diagnostics/atomic_output.h"
#include "folded/folded_profile.h"

namespace fg {

// What a colouring hook says about one frame.
struct FrameStyle {
  std::string fill;      // CSS colour ("rgb(1,2,3)", "#aabbcc"); empty = the palette's colour
  std::string category;  // shown in the tooltip, searchable as "cat:NAME"; empty = none
};

// One row of the legend drawn under the title (e.g. a category). A row
// whose share is empty gets it from the graph: the share of the total width
// drawn by frames of that category, counting each frame's own (self) width,
// which is what a `cat:NAME` search reports as "Matched". Such rows are
// dropped when no frame of theirs is drawn; a category that is drawn but has
// no row gets one, so every colour on the graph is in the legend.
struct LegendEntry {
  std::string name;
  std::string fill;     // CSS colour of the swatch ("none": an empty box)
  std::string share;    // e.g. "42.1%", shown after the name; empty: computed
  std::string section;  // rows are grouped by section, labelled "section:"
};

struct SvgOptions {
  std::string title;             // empty: "Flame Graph" / "Icicle Graph" / "Flame Chart"
  std::string subtitle;
  int width = 1200;              // image width, px (the viewBox width with `fluid`)
  bool fluid = false;            // width="100%": the SVG scales with its window
  int frame_height = 16;         // px per stack level
  double font_size = 12;
  std::string font_type = "Verdana";
  double font_width = 0.59;      // average glyph width / font size, for truncation
  // Frames narrower than this are not drawn (with their descendants): pixels
  // ("0.1", flamegraph.pl's default) or a percentage of the total ("0.5%").
  // Positions are computed before pruning, so the rest stay where they are.
  std::string min_width = "0.1";
  std::string count_name;        // empty: the profile's units ("samples")
  std::string name_type = "Function:";
  // hot (default), mem, io, wakeup, red, green, blue, aqua, yellow, purple,
  // orange, or wall: each frame blended from warm (on-CPU) to blue by the
  // share of its time in stacks holding an "[off-cpu..." frame, the split in
  // its tooltip. Empty = wall when such frames exist, else hot.
  std::string colors;
  bool hash = false;             // colour by name (similar names, similar colours)
  std::string background;        // --bgcolors: yellow, blue, green, grey or #rrggbb; empty = by palette
  bool inverted = false;         // icicle graph: root at the top
  bool reverse = false;          // reverse every stack before merging
  double total = 0;              // width basis when larger than the profile's total
  double factor = 1;             // displayed counts are multiplied by this
  std::string notes;             // stored in the SVG's <desc id="notes">
  bool embed_script = true;      // false: no JavaScript (diffable golden files)
  // Draw stacks cut short (a root-side "[unknown]" right under the process
  // frame, the fold's marker) hatched, with a "stacks:" legend row and a
  // tooltip on why. Off for --reverse, where depth 2 is no longer root-side.
  bool mark_cut_short = true;

  // Colouring hooks, tried in this order; an empty fill falls back to the palette.
  std::function<FrameStyle(NodeId)> node_style;    // by tree node (stack-dependent)
  std::function<FrameStyle(FrameId)> frame_style;  // by frame name
  std::vector<LegendEntry> legend;
};

// Renders the profile as a complete SVG document. Same input, same bytes.
// Throws UsageError for bad options (unknown palette, bad min_width).
void render_flamegraph(const FoldedProfile& profile, const SvgOptions& options, std::string& out);
void render_flamegraph(const FoldedProfile& profile, const SvgOptions& options, AtomicOutput& out);

// A flame chart: stacks in input order, only adjacent identical frames
// merged (time goes left to right). Feed stacks with add(), then render.
class FlameChartBuilder {
 public:
  FlameChartBuilder();
  ~FlameChartBuilder();
  void add(std::string_view semicolon_joined, double weight);
  void render(const SvgOptions& options, std::string& out) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Every stack reversed (leaf first), merged: for --reverse.
FoldedProfile reverse_stacks(const FoldedProfile& profile);

// Inclusive weight of every node, from the self weights (no finalize() needed).
std::vector<double> inclusive_weights(const FoldedProfile& profile);

// The placement of drawn frames in weight units, before pixels.
struct FlameBox {
  NodeId node;
  double x;        // start, from the left edge, in weight units
  double width;    // in weight units
  uint32_t depth;  // 0 = the root ("all")
};
struct FlameLayout {
  std::vector<FlameBox> boxes;  // parents before children; boxes[0] is the root
  uint32_t max_depth = 0;
};
// Children in name order, left to right from their parent's start; a frame
// narrower than min_width (weight units) is dropped with its descendants.
// `weights` gives each node's inclusive width (inclusive_weights() if empty).
FlameLayout layout_flame(const FoldedProfile& profile, double min_width, const std::vector<double>& weights = {});

// The min_width option in weight units, for a graph of `total` weight.
double min_width_in_units(const std::string& min_width, double total, double graph_width_px);

}  // namespace fg
