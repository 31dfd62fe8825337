// The SVG writer shared by flamegraphs, flame charts and differential
// flamegraphs: they lay out frames, pick fills and tooltip texts, and this
// writes the document (header, controls, legend, frames, script).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "render/flamegraph.h"

namespace fg::detail {

struct DrawFrame {
  std::string_view name;  // raw (escaped when written)
  double x = 0, width = 0;  // weight units
  uint32_t depth = 0;
  std::string fill;
  std::string info;       // tooltip text after the name, inside "( )"
  std::string category;
  // The frame's own drawn width (width less its drawn children), weight
  // units; written as fg:s for frames with a category (legend shares and
  // `cat:` searches sum it). Negative: not computed.
  double self = -1;
};

struct SvgDocument {
  std::string title, subtitle;
  std::string background_top = "#eeeeee", background_bottom = "#eeeeb0";
  double total = 0;  // width basis, weight units
  uint32_t max_depth = 0;
  std::vector<DrawFrame> frames;
  std::vector<LegendEntry> legend;  // as drawn (see complete_legend)
};

// Sets each frame's `self` from the frames drawn inside it; `parent` gives
// the index in `frames` of each frame's parent (-1 for the root).
void set_drawn_self(std::vector<DrawFrame>& frames, const std::vector<int32_t>& parent);

// `rows` completed as LegendEntry describes: empty shares computed from the
// frames' drawn self widths (by `share_text` when given, else "12.3%"),
// undrawn computed rows dropped, drawn categories without a row added, and
// rows sorted by share (or by `order`, largest first) within each section
// (sections keep their order).
std::vector<LegendEntry> complete_legend(
    const std::vector<LegendEntry>& rows, const std::vector<DrawFrame>& frames, double total,
    const std::function<std::string(const std::string& category, double drawn_self)>& share_text = {},
    const std::function<double(const std::string& category, double drawn_self)>& order = {});

// A share with one decimal as the legend and the script's "Matched" print
// it: "12.3%", "<0.1%" for a non-zero share that rounds to 0.
std::string format_share1(double part, double whole);

void write_svg_document(const SvgOptions& options, const SvgDocument& doc, std::string& out);

// "1,234" for integral counts, "1,234.57" otherwise.
std::string format_display_count(double v);
// "12.34%"
std::string format_percent(double part, double whole);

// The JavaScript embedded in every interactive SVG (lib/render/flamegraph.js).
extern const char* const kFlamegraphJs;

}  // namespace fg::detail
