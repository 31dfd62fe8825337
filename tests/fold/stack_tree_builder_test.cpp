// StackTreeBuilder (lib/fold/stack_tree_builder.h): SymbolisedStack records
// into the profile tree, the path memo's slots replayed as the symboliser
// decided them. The records here are written by hand; stack_symboliser_test
// covers the symboliser's own records end to end.
#include "fold/stack_tree_builder.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "folded_text.h"

namespace fg {
namespace {

struct Records {
  std::vector<uint32_t> words;
  // One stack: header, then per address its frames.
  void stack(uint32_t idx, uint32_t root, uint32_t slot, uint32_t reused, uint32_t memo_new,
             const std::vector<std::vector<FrameId>>& addresses) {
    words.insert(words.end(), {idx, root, slot, reused, memo_new, uint32_t(addresses.size())});
    for (const auto& frames : addresses) {
      words.push_back(uint32_t(frames.size()));
      words.insert(words.end(), frames.begin(), frames.end());
    }
  }
};

TEST(StackTreeBuilder, PlacesStacksAndRemembersWhereEachEnds) {
  FoldedProfile names;
  const FrameId root = names.intern("prog"), main = names.intern("main"), f = names.intern("f"),
                inl = names.intern("inlined"), g = names.intern("g");
  StackTreeBuilder tree;
  Records r;
  r.stack(0, root, 0, 0, 0, {{main}, {f, inl}});  // an address with an inline frame
  r.stack(2, root, 0, 0, 0, {{main}, {g}});
  r.stack(1, root, 0, 0, 0, {{main}});
  tree.place(r.words.data(), r.words.size());
  EXPECT_NE(tree.node_of(0), tree.node_of(2));
  EXPECT_EQ(tree.profile().node(tree.node_of(0)).frame, inl);
  EXPECT_EQ(tree.profile().node(tree.node_of(2)).parent, tree.node_of(1));
  tree.profile().add_self(tree.node_of(0), 3);
  tree.profile().add_self(tree.node_of(1), 1);
  tree.profile().add_self(tree.node_of(2), 2);
  tree.profile().take_names(names);
  EXPECT_EQ(test::folded_text(tree.profile()), "prog;main 1\nprog;main;f;inlined 3\nprog;main;g 2\n");
}

// A stack that reuses a memo slot continues from the node the slot's entry
// ended at, and the addresses it adds become the slot's next entries.
TEST(StackTreeBuilder, MemoSlotsContinueWhereTheirEntriesEnded) {
  FoldedProfile names;
  const FrameId root = names.intern("prog"), a = names.intern("a"), b = names.intern("b"), c = names.intern("c"),
                d = names.intern("d");
  StackTreeBuilder tree;
  Records r;
  r.stack(0, root, 5, 0, 2, {{a}, {b}, {c}});  // a and b become entries 0 and 1 of slot 5
  r.stack(1, root, 5, 2, 1, {{d}});           // after a;b, d becomes entry 2
  r.stack(2, root, 5, 3, 0, {});              // a;b;d, all from the memo
  r.stack(3, root, 5, 1, 0, {{c}});           // after a only
  tree.place(r.words.data(), r.words.size());
  for (uint32_t i = 0; i < 4; ++i) tree.profile().add_self(tree.node_of(i), 1);
  tree.profile().take_names(names);
  EXPECT_EQ(test::folded_text(tree.profile()), "prog;a;b;c 1\nprog;a;b;d 2\nprog;a;c 1\n");
}

// A stack KnownStacks knew (SymbolisingThread::append_known) ends at the
// node its record gives; the tree and the memo slots are left as they were.
TEST(StackTreeBuilder, AKnownStackEndsAtItsNodeWithoutAWalk) {
  FoldedProfile names;
  const FrameId root = names.intern("prog"), a = names.intern("a"), b = names.intern("b");
  StackTreeBuilder tree;
  Records r;
  r.stack(0, root, 3, 0, 2, {{a}, {b}});  // a and b become entries 0 and 1 of slot 3
  tree.place(r.words.data(), r.words.size());
  const NodeId ab = tree.node_of(0);
  const size_t nodes = tree.profile().node_count();
  Records known;
  known.stack(7, ab, SymbolisedStack::kKnownNode, 0, 0, {});  // raw stack 7 ends at prog;a;b
  known.stack(1, root, 3, 1, 0, {});                          // slot 3 still ends at a after entry 0
  tree.place(known.words.data(), known.words.size());
  EXPECT_EQ(tree.node_of(7), ab);
  EXPECT_EQ(tree.profile().node_count(), nodes);
  tree.profile().add_self(tree.node_of(7), 2);
  tree.profile().add_self(tree.node_of(1), 1);
  tree.profile().take_names(names);
  EXPECT_EQ(test::folded_text(tree.profile()), "prog;a 1\nprog;a;b 2\n");
  // A known record with frames, or at the root, is a bug.
  Records bad;
  bad.stack(2, ab, SymbolisedStack::kKnownNode, 0, 0, {{a}});
  EXPECT_THROW(tree.place(bad.words.data(), bad.words.size()), std::logic_error);
  Records at_root;
  at_root.stack(2, 0, SymbolisedStack::kKnownNode, 0, 0, {});
  EXPECT_THROW(tree.place(at_root.words.data(), at_root.words.size()), std::logic_error);
}

TEST(StackTreeBuilder, AMalformedRecordIsALogicErrorNotACrash) {
  StackTreeBuilder tree;
  std::vector<uint32_t> short_header = {0, 0, 0};
  EXPECT_THROW(tree.place(short_header.data(), short_header.size()), std::logic_error);
  Records r;
  r.stack(0, 0, 0, 0, 0, {{1, 2}});
  r.words.pop_back();  // the address's frame count says 2, one follows
  EXPECT_THROW(tree.place(r.words.data(), r.words.size()), std::logic_error);
  Records bad_slot;
  bad_slot.stack(0, 0, uint32_t(StackSymboliser::kMemoSlots), 0, 0, {});
  EXPECT_THROW(tree.place(bad_slot.words.data(), bad_slot.words.size()), std::logic_error);
}

}  // namespace
}  // namespace fg
