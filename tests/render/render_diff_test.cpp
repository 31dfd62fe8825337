// Differential flamegraphs: merged weights with and without normalisation,
// colours, three-column output, the top table, and the SVG.
#include <gtest/gtest.h>

#include "diagnostics/input_error.h"
#include "folded/folded_reader.h"
#include "folded/profile_loader.h"
#include "golden.h"
#include "render/diff_flamegraph.h"
#include "test_support.h"

namespace fg {
namespace {

FoldedProfile from_text(const std::string& text) {
  FoldedProfile p;
  read_folded_text(text, "t", p);
  return p;
}

NodeId node_of(const DiffProfile& d, const std::string& stack) {
  NodeId n = 0;
  size_t start = 0;
  for (;;) {
    size_t semi = stack.find(';', start);
    std::string name = stack.substr(start, semi == std::string::npos ? std::string::npos : semi - start);
    FrameId f = d.tree.find_frame(name);
    if (f == FoldedProfile::kNoFrame) return 0;
    n = d.tree.find_child(n, f);
    if (!n || semi == std::string::npos) return n;
    start = semi + 1;
  }
}

TEST(Diff, NormalisedWeights) {
  FoldedProfile a = from_text("m;x 10\nm;y 30\nm;gone 10\n");   // total 50
  FoldedProfile b = from_text("m;x 40\nm;y 40\nm;new 20\n");    // total 100
  DiffProfile d = build_diff(a, b, DiffOptions{});
  EXPECT_TRUE(d.normalized);
  EXPECT_DOUBLE_EQ(d.scale_a, 2.0);
  EXPECT_DOUBLE_EQ(d.raw_sum_a, 50);
  EXPECT_DOUBLE_EQ(d.sum_a, 100);
  EXPECT_DOUBLE_EQ(d.sum_b, 100);
  NodeId x = node_of(d, "m;x"), gone = node_of(d, "m;gone"), added = node_of(d, "m;new"), m = node_of(d, "m");
  ASSERT_TRUE(x && gone && added && m);
  EXPECT_DOUBLE_EQ(d.self_a[x], 20);
  EXPECT_DOUBLE_EQ(d.self_b[x], 40);
  EXPECT_DOUBLE_EQ(d.self_a[gone], 20);
  EXPECT_DOUBLE_EQ(d.self_b[gone], 0);
  EXPECT_DOUBLE_EQ(d.self_a[added], 0);
  EXPECT_DOUBLE_EQ(d.total_a[m], 100);
  EXPECT_DOUBLE_EQ(d.total_b[m], 100);
  std::string three;
  write_diff_folded(d, three);
  EXPECT_EQ(three, "m;gone 20 0\nm;new 0 20\nm;x 20 40\nm;y 60 40\n");
}

TEST(Diff, RawWeights) {
  FoldedProfile a = from_text("m;x 10\nm;y 30\n");
  FoldedProfile b = from_text("m;x 40\nm;y 40\n");
  DiffOptions o;
  o.normalize = false;
  DiffProfile d = build_diff(a, b, o);
  EXPECT_DOUBLE_EQ(d.scale_a, 1.0);
  EXPECT_DOUBLE_EQ(d.sum_a, 40);
  std::string three;
  write_diff_folded(d, three);
  EXPECT_EQ(three, "m;x 10 40\nm;y 30 40\n");
  // Round trip through the three-column reader.
  FoldedProfile a2, b2;
  read_diff_folded_text(three, "x", a2, b2);
  EXPECT_DOUBLE_EQ(a2.total(), 40);
  EXPECT_DOUBLE_EQ(b2.total(), 80);
}

TEST(Diff, FillColours) {
  EXPECT_EQ(diff_fill(0, 10), "rgb(250,250,250)");
  EXPECT_EQ(diff_fill(10, 10), "rgb(255,0,0)");
  EXPECT_EQ(diff_fill(-10, 10), "rgb(0,0,255)");
  EXPECT_EQ(diff_fill(5, 10), "rgb(255,105,105)");
  EXPECT_EQ(diff_fill(-1, 10), "rgb(189,189,255)");
}

TEST(Diff, SvgShapedByBOrA) {
  FoldedProfile a = from_text("m;x 10\nm;gone 10\n");
  FoldedProfile b = from_text("m;x 30\nm;new 10\n");
  SvgOptions so;
  so.embed_script = false;
  std::string svg;
  DiffOptions o;
  render_diff_flamegraph(build_diff(a, b, o), o, so, svg);
  EXPECT_EQ(test::xml_wellformed_error(svg), "");
  EXPECT_EQ(svg.find("<title>gone"), std::string::npos);  // not in B: no width
  EXPECT_NE(svg.find("<title>new (A 0 samples 0.00%, B 10 samples 25.00%, +25.00 pp [new], self +25.00 pp [+10 samples])"),
            std::string::npos)
      << svg;
  // x: A 10 of 20 (50%) scaled x2 = 20; B 30 of 40 (75%).
  EXPECT_NE(svg.find("<title>x (A 10 samples 50.00%, B 30 samples 75.00%, +25.00 pp [+50.0% normalised], "
                     "self +25.00 pp [+10 samples])"),  // the change in B's units, A scaled
            std::string::npos);
  o.negate = true;
  svg.clear();
  render_diff_flamegraph(build_diff(a, b, o), o, so, svg);
  EXPECT_EQ(test::xml_wellformed_error(svg), "");
  EXPECT_NE(svg.find("<title>gone (A 10 samples 50.00%, B 0 samples 0.00%, -50.00 pp [-100.0% normalised] [gone]"),
            std::string::npos)
      << svg;
  EXPECT_EQ(svg.find("<title>new"), std::string::npos);
}

TEST(Diff, TopTable) {
  FoldedProfile a = from_text("m;x;leaf 10\nm;y 30\nm;rec;rec 10\n");
  FoldedProfile b = from_text("m;x;leaf 40\nm;y 10\nm;rec;rec 10\n");
  DiffProfile d = build_diff(a, b, DiffOptions{});
  auto rows = summarize_diff_by_frame(d);
  for (const auto& r : rows) {
    if (r.name == "rec") {
      // Recursion counts once in the inclusive weight.
      EXPECT_DOUBLE_EQ(r.incl_b, 10);
      EXPECT_DOUBLE_EQ(r.self_b, 10);
    }
    if (r.name == "leaf") {
      EXPECT_DOUBLE_EQ(r.self_a, 12);  // A (50) scaled to B's total (60)
      EXPECT_DOUBLE_EQ(r.self_b, 40);
    }
  }
  std::string table = diff_top_table(d, 1, "samples");
  size_t gains = table.find("Self share, largest gains");
  size_t losses = table.find("Self share, largest losses");
  ASSERT_NE(gains, std::string::npos);
  ASSERT_NE(losses, std::string::npos);
  EXPECT_NE(table.find("leaf", gains), std::string::npos);
  EXPECT_LT(table.find("leaf", gains), losses);
  EXPECT_NE(table.find("  y\n", losses), std::string::npos);
  // y: 30 of 50 (60%) before, 10 of 60 (16.67%) after.
  EXPECT_NE(table.find("     -43.33   60.00%   16.67%             30             10  y\n"), std::string::npos) << table;
}

TEST(Diff, TopTableAndTooltipsInHumanUnits) {
  // Nanosecond profiles (folds of perf.data): ms/s and separators, not raw
  // 10-digit numbers called "samples".
  FoldedProfile a = from_text("m;x 1000000000\nm;y 3000000000\n");
  FoldedProfile b = from_text("m;x 2500000000\nm;y 1500000\n");
  a.units = b.units = "ns";
  DiffProfile d = build_diff(a, b, DiffOptions{});
  std::string table = diff_top_table(d, 2, "ns");
  EXPECT_NE(table.find("A time"), std::string::npos) << table;
  EXPECT_NE(table.find("B time"), std::string::npos) << table;
  // x: A 1 s (as read), B 2.5 s.
  EXPECT_NE(table.find("1.00 s         2.50 s  x\n"), std::string::npos) << table;
  EXPECT_NE(table.find("3.00 s         1.5 ms  y\n"), std::string::npos) << table;
  EXPECT_EQ(table.find(" ns"), std::string::npos) << table;
  SvgOptions o;
  o.embed_script = false;
  std::string svg;
  render_diff_flamegraph(d, DiffOptions{}, o, svg);
  EXPECT_NE(svg.find("<title>x (A 1.00 s 25.00%, B 2.50 s 99.94%"), std::string::npos) << svg;
  // The self change as a time too, A scaled to B's total (x0.625375):
  // x 2.5 s - 0.625 s, y 1.5 ms - 1.876 s.
  EXPECT_NE(svg.find("self +74.94 pp [+1.87 s]"), std::string::npos) << svg;
  EXPECT_NE(svg.find("self -74.94 pp [-1.87 s]"), std::string::npos) << svg;
  // Counts keep separators and their unit.
  FoldedProfile c = from_text("m;x 12345\n"), e = from_text("m;x 23456\n");
  DiffProfile dc = build_diff(c, e, DiffOptions{false});
  svg.clear();
  render_diff_flamegraph(dc, DiffOptions{false}, o, svg);
  EXPECT_NE(svg.find("(A 12,345 samples 100.00%, B 23,456 samples 100.00%"), std::string::npos) << svg;
}

TEST(Diff, CutShortMarkerExplainedInTheTooltip) {
  // Colour means change on a diff, so only the tooltip marks lost callers.
  FoldedProfile a = from_text("proc;[unknown];lib;work 10\nproc;main 10\n");
  FoldedProfile b = from_text("proc;[unknown];lib;work 5\nproc;main 15\nproc;main;[unknown] 1\n");
  DiffProfile d = build_diff(a, b, DiffOptions{});
  SvgOptions o;
  o.embed_script = false;
  std::string svg;
  render_diff_flamegraph(d, DiffOptions{}, o, svg);
  size_t n = 0;
  for (size_t at = svg.find("callers lost: "); at != std::string::npos; at = svg.find("callers lost: ", at + 1)) ++n;
  EXPECT_EQ(n, 1u) << svg;  // the root-side marker, not the [unknown] leaf under main
  EXPECT_EQ(svg.find("fg_cutshort"), std::string::npos);
}

TEST(DiffGolden, BeforeAfter) {
  FoldedProfile a, b;
  read_folded(test::testdata("folded/before.folded"), a);
  read_folded(test::testdata("folded/after.folded"), b);
  SvgOptions so;
  so.embed_script = false;
  DiffOptions o;
  std::string svg;
  render_diff_flamegraph(build_diff(a, b, o), o, so, svg);
  EXPECT_EQ(test::xml_wellformed_error(svg), "");
  test::expect_golden("diff-before-after.svg", svg);
}

}  // namespace
}  // namespace fg

namespace fg {
namespace {

// `fgtool diff` reads two folded files into one tree (load_diff_union); the
// diff must be the one build_diff makes from the sides loaded apart, to the
// byte, also with fractional weights (where the order A's total is summed in
// matters) and with frames and stacks only on one side.
TEST(Diff, OneTreeUnionMatchesSidesLoadedApart) {
  std::string dir = test::temp_dir();
  std::string a_text = "m;x;deep 0.1\nm;y 0.7\nm;gone;z 0.3\nq 1e-3\nm;x 0.2\nm;y;w 1e15\n";
  std::string b_text = "m;y;w 5\nm;x 0.25\nm;new;z 0.6\nm;y 0.1\nr 3\n";
  test::write_file(dir + "/a.folded", a_text);
  test::write_file(dir + "/b.folded", b_text);
  for (int normalize = 0; normalize < 2; ++normalize) {
    DiffOptions o;
    o.normalize = normalize;
    DiffProfile apart = build_diff(load_profile(dir + "/a.folded"), load_profile(dir + "/b.folded"), o);
    DiffUnion both;
    ASSERT_TRUE(load_diff_union(dir + "/a.folded", dir + "/b.folded", both));
    DiffProfile one = build_diff(std::move(both), o);
    EXPECT_EQ(one.raw_sum_a, apart.raw_sum_a);
    EXPECT_EQ(one.scale_a, apart.scale_a);
    ASSERT_EQ(one.tree.node_count(), apart.tree.node_count());
    for (NodeId i = 0; i < one.tree.node_count(); ++i) {
      EXPECT_EQ(one.tree.node(i).frame, apart.tree.node(i).frame);
      EXPECT_EQ(one.self_a[i], apart.self_a[i]);
      EXPECT_EQ(one.total_b[i], apart.total_b[i]);
    }
    std::string fa, fb, sa, sb;
    write_diff_folded(apart, fa);
    write_diff_folded(one, fb);
    EXPECT_EQ(fa, fb);
    render_diff_flamegraph(apart, o, SvgOptions{}, sa);
    render_diff_flamegraph(one, o, SvgOptions{}, sb);
    EXPECT_EQ(sa, sb);
  }
}

// Both files broken: A is named, as when the sides were loaded one by one
// (B is read first into the shared tree).
TEST(Diff, OneTreeUnionReportsAFirst) {
  std::string dir = test::temp_dir();
  test::write_file(dir + "/a.folded", "m;x 1\nbroken-a\n");
  test::write_file(dir + "/b.folded", "broken-b\n");
  test::write_file(dir + "/ok.folded", "m;x 1\n");
  DiffUnion both;
  try {
    load_diff_union(dir + "/a.folded", dir + "/b.folded", both);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("a.folded:2"), std::string::npos) << e.what();
  }
  DiffUnion other;
  EXPECT_THROW(load_diff_union(dir + "/ok.folded", dir + "/b.folded", other), InputError);
  // Lenient: A's warnings come before B's.
  std::vector<std::string> warnings;
  ProfileLoadOptions lo;
  lo.lenient = true;
  lo.warn = [&](const std::string& m) { warnings.push_back(m); };
  DiffUnion lenient;
  ASSERT_TRUE(load_diff_union(dir + "/a.folded", dir + "/b.folded", lenient, lo));
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[0].find("a.folded"), std::string::npos);
  EXPECT_NE(warnings[1].find("b.folded"), std::string::npos);
}

}  // namespace
}  // namespace fg
