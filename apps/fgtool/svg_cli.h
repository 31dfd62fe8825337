// The SVG options shared by `fgtool svg`, `fgtool diff` (and any command
// that renders, e.g. record --svg): flamegraph.pl's option names mapped onto
// fg::SvgOptions. Header-only so that adding a user needs no CMake change.
#pragma once

#include <sstream>
#include <string>

#include "command.h"
#include "diagnostics/input_error.h"
#include "render/flamegraph.h"
#include "render/palette.h"

namespace fg::cli {

// A double as it would be written ("0.59", not 0.58999999999999997), for
// defaults shown in help.
inline std::string written_double(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

// flamegraph.pl's --colors names for language palettes, which fgtool draws
// with the hot palette: it already gives kernel (_[k]), JIT (_[j]) and inlined
// (_[i]) frames flamegraph.pl's special hues.
inline bool is_language_palette(const std::string& name) {
  return name == "java" || name == "js" || name == "perl" || name == "python" || name == "rust";
}

inline void add_svg_options(po::options_description& options, SvgOptions& o, bool with_colors = true,
                            const char* default_title = "Flame Graph / Icicle Graph / Flame Chart") {
  po::options_description svg("SVG (flamegraph.pl names)");
  svg.add_options()
      ("title", po::value(&o.title), (std::string("title text (default: ") + default_title + ")").c_str())
      ("subtitle", po::value(&o.subtitle), "second line under the title")
      ("width", po::value(&o.width)->default_value(o.width), "image width in pixels")
      ("fluid", po::bool_switch(&o.fluid), "scale with the browser window (width 100%; --width sets the layout)")
      ("height", po::value(&o.frame_height)->default_value(o.frame_height), "height of each frame in pixels")
      ("font-size", po::value(&o.font_size)->default_value(o.font_size), "font size")
      ("font-type", po::value(&o.font_type)->default_value(o.font_type), "font family")
      ("font-width", po::value(&o.font_width)->default_value(o.font_width, written_double(o.font_width)),
       "average glyph width / font size")
      ("minwidth", po::value(&o.min_width)->default_value(o.min_width),
       "omit frames narrower than this: pixels, or N% of the total")
      ("countname", po::value(&o.count_name), "count unit in tooltips (default: the input's, e.g. samples, us)")
      ("nametype", po::value(&o.name_type)->default_value(o.name_type), "label before the name in the details bar")
      ("inverted", po::bool_switch(&o.inverted), "icicle graph (root at the top)")
      ("total", po::value(&o.total), "width basis: total count, when larger than the input's")
      ("factor", po::value(&o.factor)->default_value(o.factor), "multiply displayed counts by this")
      ("notes", po::value(&o.notes), "text stored in the SVG (<desc id=\"notes\">)")
      ("no-javascript", po::bool_switch(), "omit the script (static, diffable SVG)")
      ("bgcolors", po::value(&o.background), "background: yellow, blue, green, grey (gradients) or #rrggbb");
  if (with_colors) {
    svg.add_options()
        ("colors", po::value(&o.colors),
         "palette: category (frames by category - gemm, omp, ... - with a legend; the default for perf.data), "
         "hot, mem, io, wakeup, red, green, blue, aqua, yellow, purple, orange, or wall (hot/cold: each frame "
         "blended from warm to blue by the share of its time spent off the CPU, in stacks holding an [off-cpu...] "
         "frame, the on/off split in its tooltip; the default when such frames exist); flamegraph.pl's java, js, "
         "perl, python and rust are drawn as hot. Stacks cut short (a root-side [unknown] frame) are hatched "
         "with any palette")
        ("hash", po::bool_switch(&o.hash), "colour by name hash (same name, same colour)");
  }
  options.add(svg);
  // flamegraph.pl's own spellings, so its command lines work unchanged.
  po::options_description aliases("flamegraph.pl spellings (same as above)");
  aliases.add_options()
      ("fontsize", po::value<double>(), "= --font-size")
      ("fonttype", po::value<std::string>(), "= --font-type")
      ("fontwidth", po::value<double>(), "= --font-width");
  if (with_colors) aliases.add_options()("cp", po::bool_switch(), "= --hash (consistent colours across graphs)");
  options.add(aliases);
}

// After parsing: settings that need the variables_map.
inline void finish_svg_options(const po::variables_map& vm, SvgOptions& o) {
  // The flamegraph.pl spellings are stored apart (two options writing one
  // variable would let a default overwrite the value given) and win here.
  if (vm.count("fontsize")) o.font_size = vm["fontsize"].as<double>();
  if (vm.count("fonttype")) o.font_type = vm["fonttype"].as<std::string>();
  if (vm.count("fontwidth")) o.font_width = vm["fontwidth"].as<double>();
  if (vm.count("cp") && vm["cp"].as<bool>()) o.hash = true;
  if (vm.count("no-javascript") && vm["no-javascript"].as<bool>()) o.embed_script = false;
  if (is_language_palette(o.colors)) o.colors = "hot";
  if (!o.colors.empty() && !is_known_palette(o.colors))
    throw UsageError("--colors '" + o.colors + "': unknown palette (known: category, " + known_palettes() +
                     ", and flamegraph.pl's java, js, perl, python, rust)");
  if (!o.background.empty()) {
    std::string top, bottom;
    if (!background_colors(o.background, top, bottom))
      throw UsageError("--bgcolors '" + o.background + "': use yellow, blue, green, grey or #rrggbb");
  }
}

}  // namespace fg::cli
