#include "fold/stack_tree_builder.h"

#include <stdexcept>

namespace fg {

StackTreeBuilder::StackTreeBuilder()
    : memo_nodes_(std::make_unique<NodeId[]>(StackSymboliser::kMemoSlots * StackSymboliser::kMemoDepth)) {}

size_t StackTreeBuilder::place(const uint32_t* records, size_t words) {
  const uint32_t* p = records;
  const uint32_t* end = p + words;
  size_t stacks = 0;
  for (; p < end; ++stacks) p = place_one(p, end);
  return stacks;
}

// One record: the path starts at the memo's node or below the root frame,
// then walks each address's frames; the first memo_new addresses' end nodes
// go to the memo slot, as the symboliser's memo took their addresses.
const uint32_t* StackTreeBuilder::place_one(const uint32_t* r, const uint32_t* end) {
  // Records come from StackSymboliser in this process: a short or
  // inconsistent one is a bug, never input.
  if (end - r < ptrdiff_t(SymbolisedStack::kWords)) throw std::logic_error("StackTreeBuilder: short record");
  using W = SymbolisedStack;
  const uint32_t idx = r[W::kIdx], root_frame = r[W::kRootFrame], slot = r[W::kMemoSlot], reused = r[W::kReused],
                 memo_new = r[W::kMemoNew], addresses = r[W::kAddresses];
  if (slot == W::kKnownNode) {
    if (reused || memo_new || addresses || root_frame == 0) throw std::logic_error("StackTreeBuilder: bad known stack");
    if (stack_nodes_.size() <= idx) stack_nodes_.resize(size_t(idx) + 1);
    stack_nodes_[idx] = root_frame;
    return r + W::kWords;
  }
  if (slot >= StackSymboliser::kMemoSlots || reused + memo_new > StackSymboliser::kMemoDepth)
    throw std::logic_error("StackTreeBuilder: bad memo slot");
  NodeId* memo = &memo_nodes_[size_t(slot) * StackSymboliser::kMemoDepth];
  NodeId node = reused ? memo[reused - 1] : tree_.child(0, root_frame);
  const uint32_t* p = r + SymbolisedStack::kWords;
  for (uint32_t a = 0; a < addresses; ++a) {
    if (p >= end || uint32_t(end - p) <= *p) throw std::logic_error("StackTreeBuilder: short record");
    const uint32_t count = *p++;
    for (uint32_t i = 0; i < count; ++i) node = tree_.child(node, *p++);
    if (a < memo_new) memo[reused + a] = node;
  }
  if (stack_nodes_.size() <= idx) stack_nodes_.resize(size_t(idx) + 1);
  stack_nodes_[idx] = node;
  return p;
}

}  // namespace fg
