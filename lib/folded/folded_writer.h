// Writes a FoldedProfile as folded text, one "a;b;c COUNT" line per unique
// stack in byte order of the stack text, so the same profile always gives the
// same bytes. Integral counts print without decimals; others compactly.
#pragma once

#include <string>
#include <string_view>
#include <vector>

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

// The "a;b;c" text of stacks visited one after another (for_each_stack
// order), reusing the previous stack's text up to the frames both share:
// neighbours in that order share long prefixes, so most frame names are
// neither looked up nor copied again. The view lasts until the next call.
class StackText {
 public:
  explicit StackText(const FoldedProfile& profile) : profile_(profile) {}
  std::string_view of(const std::vector<FrameId>& frames);

 private:
  const FoldedProfile& profile_;
  std::vector<FrameId> frames_;
  std::vector<size_t> ends_;  // text_ size after each frame
  std::string text_;
};

}  // namespace fg
