// Stacks whose root side is missing: DWARF unwinding cut short by a too-small
// copy of the user stack, or a frame-pointer chain that left every mapping.
// Both fold with one "[unknown]" frame right under the thread's root frame
// (as `perf script` shows them); `info` and `report` give their share and the fix.
#pragma once

#include <string>

#include "folded/folded_profile.h"

namespace fg {

struct StackGaps {
  double cut_short = 0;  // weight of stacks whose first frame under the root is "[unknown]"
  double total = 0;
  double share() const { return total > 0 ? cut_short / total : 0; }
};

StackGaps find_stack_gaps(const FoldedProfile& profile);

// One line on how to record whole stacks, for `info`, `fold` and `report`.
std::string stack_gap_advice();

}  // namespace fg
