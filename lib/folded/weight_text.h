// Weights written for people: time units (ns, us, ms, s) as "12.3 ms" or
// "4.56 s", counts with thousands separators ("12,345"). Shared by
// `fgtool report`, SVG tooltips and the `diff --top` table so that one
// profile's numbers read the same everywhere.
#pragma once

#include <string>

namespace fg {

// "1234567.5" -> "1,234,567.5": digits grouped in threes before the point.
std::string group_thousands(std::string s);

// A count grouped in threes: "12,345", fractional counts with three
// decimals ("1,234.500").
std::string count_text(double w);

// Time in ms or s for time units; for other units the count grouped in
// threes ("12,345", fractional counts with three decimals), without the unit.
std::string human_weight(double w, const std::string& units);

// As human_weight, with the unit after counts ("12.3 ms", "12,345 samples";
// two decimals for fractional counts, as flamegraph tooltips had), and times
// under a millisecond in us or ns ("58.0 us") rather than "0.1 ms".
std::string human_weight_with_unit(double w, const std::string& units);

}  // namespace fg
