// The SVG writer shared by flamegraphs, flame charts and differential
// flamegraphs: they lay out frames, pick fills and tooltip texts, and this
// writes the document (header, controls, legend, frames, script).
#pragma once

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
};

struct SvgDocument {
  std::string title, subtitle;
  std::string background_top = "#eeeeee", background_bottom = "#eeeeb0";
  double total = 0;  // width basis, weight units
  uint32_t max_depth = 0;
  std::vector<DrawFrame> frames;
};

void write_svg_document(const SvgOptions& options, const SvgDocument& doc, std::string& out);

// "1,234" for integral counts, "1,234.57" otherwise.
std::string format_display_count(double v);
// "12.34%"
std::string format_percent(double part, double whole);

// The JavaScript embedded in every interactive SVG (lib/render/flamegraph.js).
extern const char* const kFlamegraphJs;

}  // namespace fg::detail
