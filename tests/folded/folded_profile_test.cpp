// The folded model: interning, merging, byte-ordered iteration, totals.
#include <gtest/gtest.h>

#include <stdexcept>

#include <algorithm>
#include <map>
#include <random>

#include "folded/folded_profile.h"
#include "folded/folded_reader.h"
#include "folded/folded_writer.h"

namespace fg {
namespace {

std::vector<std::pair<std::string, double>> stacks_of(const FoldedProfile& p) {
  std::vector<std::pair<std::string, double>> out;
  p.for_each_stack([&](const std::vector<FrameId>& frames, double w) {
    std::string s;
    for (size_t i = 0; i < frames.size(); ++i) {
      if (i) s += ';';
      s += p.frame_name(frames[i]);
    }
    out.emplace_back(s, w);
  });
  return out;
}

// Names from input: ';' and line breaks would split a frame or a stack.
TEST(FoldedProfile, InternFromInputMakesNamesSafe) {
  EXPECT_TRUE(is_folded_safe("std::function<void (int)>::operator()"));
  EXPECT_FALSE(is_folded_safe("a;b"));
  EXPECT_FALSE(is_folded_safe("a\nb"));
  EXPECT_FALSE(is_folded_safe("a\rb"));
  EXPECT_EQ(folded_safe_name("a;b\nc\rd\te"), "a:b c d\te");
  FoldedProfile p;
  FrameId f = p.intern_from_input("op;x\ny");
  EXPECT_EQ(p.frame_name(f), "op:x y");
  EXPECT_EQ(p.intern_from_input("op:x y"), f);
  EXPECT_EQ(p.intern_from_input(std::string(kMaxFrameNameBytes + 10, 'n')), p.intern(std::string(kMaxFrameNameBytes, 'n')));
}

TEST(FoldedProfile, InternIsStable) {
  FoldedProfile p;
  FrameId a = p.intern("main"), b = p.intern("foo"), a2 = p.intern("main");
  EXPECT_EQ(a, a2);
  EXPECT_NE(a, b);
  EXPECT_EQ(p.frame_name(b), "foo");
  EXPECT_EQ(p.frame_count(), 2u);
  EXPECT_EQ(p.find_frame("foo"), b);
  EXPECT_EQ(p.find_frame("bar"), FoldedProfile::kNoFrame);
  // Many names force the table to grow; all stay findable.
  for (int i = 0; i < 5000; ++i) p.intern("fn_" + std::to_string(i));
  for (int i = 0; i < 5000; ++i) EXPECT_EQ(p.frame_name(p.find_frame("fn_" + std::to_string(i))), "fn_" + std::to_string(i));
}

TEST(FoldedProfile, DuplicatesMergeAndTotalsAdd) {
  FoldedProfile p;
  p.add_stack("main;a;b", 2);
  p.add_stack("main;a;b", 3);
  p.add_stack("main;a", 1.5);
  p.add_stack("main;c", 4);
  p.finalize();
  EXPECT_DOUBLE_EQ(p.total(), 10.5);
  EXPECT_EQ(p.stack_count(), 3u);
  EXPECT_DOUBLE_EQ(p.node(0).total, 10.5);
  auto kids = p.children(0);
  ASSERT_EQ(kids.size(), 1u);
  EXPECT_EQ(p.frame_name(p.node(kids[0]).frame), "main");
  auto main_kids = p.children(kids[0]);
  ASSERT_EQ(main_kids.size(), 2u);
  EXPECT_EQ(p.frame_name(p.node(main_kids[0]).frame), "a");
  EXPECT_DOUBLE_EQ(p.node(main_kids[0]).total, 6.5);
  EXPECT_DOUBLE_EQ(p.node(main_kids[0]).self, 1.5);
  EXPECT_DOUBLE_EQ(p.node(main_kids[1]).total, 4);
}

TEST(FoldedProfile, ForEachStackIsByteOrderOfJoinedText) {
  // "b!" sorts between "b" and "b;c" in the joined text ('!' < ';'), which a
  // plain depth-first walk by child name would get wrong.
  std::vector<std::string> stacks = {"a;b;c", "a;b", "a;b!", "a;bc", "a;b;c;d", "a", "a;b:x", "b", "a;B", "a;b;"};
  FoldedProfile p;
  for (size_t i = 0; i < stacks.size(); ++i) p.add_stack(stacks[i], double(i + 1));
  auto got = stacks_of(p);
  std::vector<std::string> want = stacks;
  std::sort(want.begin(), want.end());
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i].first, want[i]) << i;
}

TEST(FoldedProfile, ForEachStackRandomisedAgainstSort) {
  std::mt19937 rng(7);
  const char* names[] = {"a", "ab", "a!", "b", "a b", "z", "_", "Ab", "a~"};
  std::map<std::string, double> want;
  FoldedProfile p;
  for (int i = 0; i < 2000; ++i) {
    int depth = 1 + rng() % 5;
    std::string s;
    for (int d = 0; d < depth; ++d) s += std::string(d ? ";" : "") + names[rng() % 9];
    double w = 1 + rng() % 3;
    want[s] += w;
    p.add_stack(s, w);
  }
  auto got = stacks_of(p);
  ASSERT_EQ(got.size(), want.size());
  size_t i = 0;
  for (auto& [s, w] : want) {
    EXPECT_EQ(got[i].first, s);
    EXPECT_DOUBLE_EQ(got[i].second, w);
    ++i;
  }
}

TEST(FoldedProfile, MergeReinternsAndScales) {
  FoldedProfile a, b;
  a.add_stack("x;y", 2);
  b.intern("unrelated");
  b.add_stack("x;y", 1);
  b.add_stack("x;z", 1);
  b.set_frame_object(b.intern("z"), "/usr/lib/libz.so");
  a.merge(b, 3.0);
  a.finalize();
  EXPECT_DOUBLE_EQ(a.total(), 8);
  auto s = stacks_of(a);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].first, "x;y");
  EXPECT_DOUBLE_EQ(s[0].second, 5);
  EXPECT_EQ(a.frame_object(a.find_frame("z")), "/usr/lib/libz.so");
  EXPECT_EQ(a.frame_object(a.find_frame("x")), "");
}

// A tree built from ids another profile interned gets that profile's names
// (and objects), ids unchanged; the name profile is left empty and a
// profile that has names refuses.
TEST(FoldedProfile, TakeNamesKeepsTheIdsOfTheProfileThatInternedThem) {
  FoldedProfile names, tree;
  const FrameId main = names.intern("main"), gemm = names.intern("gemm");
  names.set_frame_object(gemm, "/usr/lib/libdnnl.so");
  tree.add_self(tree.child(tree.child(0, main), gemm), 2);
  tree.take_names(names);
  EXPECT_EQ(tree.frame_count(), 2u);
  EXPECT_EQ(tree.frame_name(gemm), "gemm");
  EXPECT_EQ(tree.find_frame("main"), main);
  EXPECT_EQ(tree.frame_object(gemm), "/usr/lib/libdnnl.so");
  EXPECT_EQ(tree.intern("new"), 2u);  // interning goes on after the taken names
  EXPECT_EQ(names.frame_count(), 0u);
  auto s = stacks_of(tree);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].first, "main;gemm");
  FoldedProfile more;
  more.intern("x");
  EXPECT_THROW(tree.take_names(more), std::logic_error);
}

TEST(FoldedProfile, MergeUnderPutsEveryStackBelowOneMoreRoot) {
  FoldedProfile all, r0, r1;
  r0.add_stack("main;gemm", 3);
  r0.add_stack("main", 1);
  r0.set_frame_object(r0.intern("gemm"), "/usr/lib/libdnnl.so");
  r1.add_stack("main;gemm", 2);
  r1.add_stack("rank 0;x", 0.5);  // a frame named like a root: stays below r1's root
  all.merge(r0, "rank 0");
  all.merge(r1, "rank 1", 2.0);
  all.merge(r0, "rank 0");  // a second input under the same root adds up
  all.finalize();
  auto s = stacks_of(all);
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0].first, "rank 0;main");
  EXPECT_DOUBLE_EQ(s[0].second, 2);
  EXPECT_EQ(s[1].first, "rank 0;main;gemm");
  EXPECT_DOUBLE_EQ(s[1].second, 6);
  EXPECT_EQ(s[2].first, "rank 1;main;gemm");
  EXPECT_DOUBLE_EQ(s[2].second, 4);
  EXPECT_EQ(s[3].first, "rank 1;rank 0;x");
  EXPECT_DOUBLE_EQ(s[3].second, 1);
  EXPECT_DOUBLE_EQ(all.total(), 13);
  EXPECT_EQ(all.frame_object(all.find_frame("gemm")), "/usr/lib/libdnnl.so");
  // The root itself carries no weight of its own.
  EXPECT_EQ(all.node(all.find_child(0, all.find_frame("rank 0"))).self, 0);
}

TEST(FoldedProfile, ChildrenAndPath) {
  FoldedProfile p;
  p.add_stack("m;b", 1);
  p.add_stack("m;a", 1);
  NodeId m = p.find_child(0, p.find_frame("m"));
  ASSERT_NE(m, 0u);
  NodeId a = p.find_child(m, p.find_frame("a"));
  EXPECT_EQ(p.find_child(a, p.find_frame("m")), 0u);
  EXPECT_TRUE(p.has_children(m));
  EXPECT_FALSE(p.has_children(a));
  auto path = p.path(a);
  ASSERT_EQ(path.size(), 2u);
  EXPECT_EQ(p.frame_name(path[1]), "a");
}

TEST(FoldedProfile, WideNodesStayMergedAcrossTheIndexThreshold) {
  // Narrow nodes find children by list, wide ones by hash: crossing from one
  // to the other must not lose or duplicate children.
  FoldedProfile p;
  for (int round = 0; round < 3; ++round)
    for (int i = 0; i < 100; ++i) p.add_stack("root;child_" + std::to_string(i) + ";leaf", 1);
  NodeId root = p.find_child(0, p.find_frame("root"));
  EXPECT_EQ(p.children(root).size(), 100u);
  EXPECT_EQ(p.node_count(), 1u + 1 + 200);
  EXPECT_EQ(p.stack_count(), 100u);
  for (int i = 0; i < 100; ++i) {
    NodeId c = p.find_child(root, p.find_frame("child_" + std::to_string(i)));
    ASSERT_NE(c, 0u);
    EXPECT_DOUBLE_EQ(p.node(p.find_child(c, p.find_frame("leaf"))).self, 3);
  }
}

TEST(FoldedProfile, BatchInternAndAddPath) {
  FoldedProfile p;
  std::vector<std::string_view> names = {"a", "b", "a", "c"};
  std::vector<FrameId> ids(4);
  p.intern_all(names.data(), names.size(), ids.data());
  EXPECT_EQ(ids[0], ids[2]);
  EXPECT_EQ(p.frame_count(), 3u);
  std::vector<NodeId> nodes(4);
  p.add_path(0, ids.data(), 4, nodes.data());
  std::vector<NodeId> again(4);
  p.add_path(0, ids.data(), 4, again.data());
  EXPECT_EQ(nodes, again);
  EXPECT_EQ(p.path(nodes[3]), ids);
}

TEST(FoldedProfile, MoveKeepsContents) {
  FoldedProfile p;
  p.add_stack("a;b", 3);
  FoldedProfile q = std::move(p);
  EXPECT_DOUBLE_EQ(q.total(), 3);
  EXPECT_EQ(q.stack_count(), 1u);
}

TEST(FoldedWriter, CountsAndOrder) {
  EXPECT_EQ(format_count(42), "42");
  EXPECT_EQ(format_count(0), "0");
  EXPECT_EQ(format_count(0.25), "0.25");
  EXPECT_EQ(format_count(1.0 / 3), "0.3333333333333333");
  EXPECT_EQ(format_count(1e15), "1000000000000000");
  FoldedProfile p;
  p.add_stack("b;x", 1);
  p.add_stack("a;y", 2.5);
  p.add_stack("a", 3);
  std::string out;
  write_folded(p, out);
  EXPECT_EQ(out, "a 3\na;y 2.5\nb;x 1\n");
}

}  // namespace
}  // namespace fg

namespace fg {
namespace {

// StackText reuses the previous stack's text for the frames both share; each
// result must be exactly the joined names, whatever came before (a longer
// stack, a shorter one, a sibling, an unrelated root).
TEST(StackText, JoinsWhateverCameBefore) {
  FoldedProfile p;
  read_folded_text("a;b;c 1\na;b 1\na;bb;c 1\nz 1\na;b;c;d 1\n", "t", p);
  std::vector<std::vector<std::string>> stacks = {
      {"a", "b", "c"}, {"a", "b"}, {"a", "bb", "c"}, {"z"}, {"a", "b", "c", "d"}, {"a"}, {"a", "b", "c"}};
  StackText text(p);
  for (const auto& names : stacks) {
    std::vector<FrameId> ids;
    std::string joined;
    for (const auto& n : names) {
      ids.push_back(p.intern(n));
      joined += (joined.empty() ? "" : ";") + n;
    }
    EXPECT_EQ(text.of(ids), joined);
  }
}

}  // namespace
}  // namespace fg
