// Builds the fold's profile tree from StackSymboliser's records (the frame
// names of each new raw stack) and remembers where each raw stack's path
// ends; a fold's observer is told of each stack as it is placed. It is the
// second half of symbolising, split off so that the tree walk, a chain of
// cache misses, runs on the folding thread while the symbolising thread
// names the next stacks (busy.data: see bench/README.md).
// Owning thread: the folding thread, or during a fold whichever thread
// holds SymbolisingThread's placing mutex.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "fold/stack_symboliser.h"
#include "folded/folded_profile.h"

namespace fg {

class StackTreeBuilder {
 public:
  StackTreeBuilder();

  // Places every SymbolisedStack record in `records`, in the order
  // StackSymboliser made them (the path memo's slots are replayed).
  // Returns how many.
  size_t place(const uint32_t* records, size_t words);
  // The same for symbolise's output; then tells `observer` (if any) of the
  // stacks, in the same order, on this thread.
  size_t place(NamedStacks& named, FoldObserver* observer) {
    const size_t stacks = place(named.records.data(), named.records.size());
    if (observer) named.tell(*observer);
    return stacks;
  }
  // Where raw stack idx's path ends (after place() got its record).
  NodeId node_of(uint32_t idx) const { return stack_nodes_[idx]; }

  // The tree; its frame names are the symboliser's until
  // profile().take_names(symboliser.names()) at the end of the fold.
  FoldedProfile& profile() { return tree_; }

 private:
  const uint32_t* place_one(const uint32_t* record, const uint32_t* end);

  FoldedProfile tree_;
  std::vector<NodeId> stack_nodes_;  // per raw stack
  // Per memo slot and depth: the node where the path ends after that entry.
  std::unique_ptr<NodeId[]> memo_nodes_;
};

}  // namespace fg
