#include "categories/stack_gaps.h"

#include <vector>

namespace fg {

StackGaps find_stack_gaps(const FoldedProfile& p) {
  StackGaps g;
  const FrameId unknown = p.find_frame("[unknown]");
  const size_t n = p.node_count();
  for (NodeId id = 1; id < n; ++id) {
    const FoldedProfile::Node& node = p.node(id);
    if (node.self == 0) continue;
    g.total += node.self;
    if (unknown == FoldedProfile::kNoFrame) continue;
    // Walk up to the frame just under the root frame (depth 2).
    NodeId cur = id, parent = node.parent;
    if (parent == 0) continue;  // the root frame alone
    while (p.node(parent).parent != 0) {
      cur = parent;
      parent = p.node(cur).parent;
    }
    if (p.node(cur).frame == unknown) g.cut_short += node.self;
  }
  return g;
}

std::string stack_gap_advice() {
  return "to record whole stacks: 'fgtool record --dwarf --stack-size 65528' (a larger user-stack copy; perf "
         "record --call-graph dwarf,65528), or build with -fno-omit-frame-pointer, or 'perf record --call-graph lbr' "
         "on Intel";
}

}  // namespace fg
