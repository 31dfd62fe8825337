// Writes a FoldedProfile as folded text, one "a;b;c COUNT" line per unique
// stack in byte order of the stack text, so the same profile always gives the
// same bytes. Integral counts print without decimals; others compactly.
#pragma once

#include <string>

#include "diagnostics/atomic_output.h"
#include "folded/folded_profile.h"

namespace fg {

// Appends a count: "42" for integral values, otherwise the shortest text
// that reads back to the same double ("0.25", "1e-07").
void append_count(std::string& out, double value);
std::string format_count(double value);

// The first line `fgtool fold -o` writes so that the unit survives the
// round trip: "# fgtool units=ns". flamegraph.pl and inferno skip it (no count
// at its end: "Ignored 1 lines with invalid format"); fgtool's reader sets
// FoldedProfile::units from it. Only letters, '/' and '_' are kept of units.
std::string units_header_line(const std::string& units);
constexpr const char* kUnitsHeaderPrefix = "# fgtool units=";

void write_folded(const FoldedProfile& profile, std::string& out);
// Streams to an AtomicOutput (the caller commits).
void write_folded(const FoldedProfile& profile, AtomicOutput& out);

}  // namespace fg
