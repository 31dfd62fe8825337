// The SVG options shared by `fgtool svg`, `fgtool diff` (and any command
// that renders, e.g. record --svg): flamegraph.pl's option names mapped onto
// fg::SvgOptions. Header-only so that adding a user needs no CMake change.
#pragma once

#include "command.h"
#include "diagnostics/input_error.h"
#include "render/flamegraph.h"
#include "render/palette.h"

namespace fg::cli {

inline void add_svg_options(po::options_description& options, SvgOptions& o, bool with_colors = true) {
  po::options_description svg("SVG (flamegraph.pl names)");
  svg.add_options()
      ("title", po::value(&o.title), "title text (default: Flame Graph / Icicle Graph / Flame Chart)")
      ("subtitle", po::value(&o.subtitle), "second line under the title")
      ("width", po::value(&o.width)->default_value(o.width), "image width in pixels")
      ("fluid", po::bool_switch(&o.fluid), "scale with the browser window (width 100%; --width sets the layout)")
      ("height", po::value(&o.frame_height)->default_value(o.frame_height), "height of each frame in pixels")
      ("font-size", po::value(&o.font_size)->default_value(o.font_size), "font size")
      ("font-type", po::value(&o.font_type)->default_value(o.font_type), "font family")
      ("font-width", po::value(&o.font_width)->default_value(o.font_width), "average glyph width / font size")
      ("minwidth", po::value(&o.min_width)->default_value(o.min_width),
       "omit frames narrower than this: pixels, or N% of the total")
      ("countname", po::value(&o.count_name), "count unit in tooltips (default: the input's, e.g. samples, us)")
      ("nametype", po::value(&o.name_type)->default_value(o.name_type), "label before the name in the details bar")
      ("inverted", po::bool_switch(&o.inverted), "icicle graph (root at the top)")
      ("total", po::value(&o.total), "width basis: total count, when larger than the input's")
      ("factor", po::value(&o.factor)->default_value(o.factor), "multiply displayed counts by this")
      ("notes", po::value(&o.notes), "text stored in the SVG (<desc id=\"notes\">)")
      ("no-javascript", po::bool_switch(), "omit the script (static, diffable SVG)");
  if (with_colors) {
    svg.add_options()
        ("colors", po::value(&o.colors),
         "palette: hot, mem, io, wakeup, red, green, blue, aqua, yellow, purple, orange, or wall "
         "(on-CPU warm, [off-cpu...] frames blue; the default when such frames exist)")
        ("hash", po::bool_switch(&o.hash), "colour by name hash (same name, same colour)");
  }
  options.add(svg);
}

// After parsing: settings that need the variables_map.
inline void finish_svg_options(const po::variables_map& vm, SvgOptions& o) {
  if (vm.count("no-javascript") && vm["no-javascript"].as<bool>()) o.embed_script = false;
  if (!o.colors.empty() && !is_known_palette(o.colors))
    throw UsageError("--colors '" + o.colors + "': unknown palette (known: " + known_palettes() + ")");
}

}  // namespace fg::cli
