// Exports a FoldedProfile to other viewers' formats: speedscope's file format
// (https://www.speedscope.app), d3-flame-graph's JSON tree, and a top-down
// text tree in the style of `perf report --children` (self and total %).
// See docs/exports.md.
#pragma once

#include <string>
#include <string_view>

#include "folded/folded_profile.h"

namespace fg {

enum class ExportFormat { Speedscope, D3, TextTree };

// "speedscope", "d3" (or "d3-flamegraph"), "pprof-text" (or "text"). False if unknown.
bool parse_export_format(std::string_view name, ExportFormat& out);

struct ExportOptions {
  std::string name = "profile";  // speedscope profile name / d3 root name
  // Text tree: frames whose total is below this percentage of the whole are
  // left out (and counted in a last line). 0 keeps everything.
  double min_percent = 0;
};

// Each writer calls profile.finalize() and appends to `out`. Frame names are
// written as valid UTF-8 JSON strings (invalid bytes become U+FFFD).
void export_speedscope(FoldedProfile& profile, const ExportOptions& options, std::string& out);
void export_d3_json(FoldedProfile& profile, const ExportOptions& options, std::string& out);
void export_text_tree(FoldedProfile& profile, const ExportOptions& options, std::string& out);
void export_profile(FoldedProfile& profile, ExportFormat format, const ExportOptions& options, std::string& out);

// speedscope's "unit" for fgtool's units ("us" -> "microseconds", "samples" -> "none", ...).
std::string speedscope_unit(const std::string& units);
// Appends `s` as a JSON string literal (quoted, escaped, invalid UTF-8 replaced).
void append_json_string(std::string& out, std::string_view s);

}  // namespace fg
