// Layout arithmetic, colours and text helpers of the flamegraph renderer.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "folded/folded_profile.h"
#include "render/flamegraph.h"
#include "render/palette.h"
#include "render/svg_document.h"
#include "render/xml_text.h"

namespace fg {
namespace {

FoldedProfile random_profile(uint32_t seed, int stacks) {
  std::mt19937 rng(seed);
  FoldedProfile p;
  for (int i = 0; i < stacks; ++i) {
    int depth = 1 + rng() % 8;
    std::string s;
    for (int d = 0; d < depth; ++d) s += (d ? ";" : "") + std::string("f") + std::to_string(rng() % 4);
    p.add_stack(s, 1 + rng() % 100);
  }
  return p;
}

TEST(Layout, ChildrenFitInParentsAndWidthsSumToCounts) {
  for (uint32_t seed = 1; seed <= 5; ++seed) {
    FoldedProfile p = random_profile(seed, 400);
    std::vector<double> w = inclusive_weights(p);
    FlameLayout layout = layout_flame(p, 0);
    ASSERT_FALSE(layout.boxes.empty());
    EXPECT_EQ(layout.boxes[0].node, 0u);
    EXPECT_DOUBLE_EQ(layout.boxes[0].width, p.total());
    // Every node with weight is drawn when min_width is 0.
    EXPECT_EQ(layout.boxes.size(), p.node_count());
    std::map<NodeId, const FlameBox*> by_node;
    for (const auto& b : layout.boxes) by_node[b.node] = &b;
    std::map<NodeId, double> child_sum;
    for (const auto& b : layout.boxes) {
      EXPECT_DOUBLE_EQ(b.width, w[b.node]);
      if (b.node == 0) continue;
      const FlameBox* parent = by_node.at(p.node(b.node).parent);
      EXPECT_EQ(b.depth, parent->depth + 1);
      EXPECT_LE(b.width, parent->width);
      EXPECT_GE(b.x, parent->x);
      EXPECT_LE(b.x + b.width, parent->x + parent->width + 1e-9);
      child_sum[p.node(b.node).parent] += b.width;
    }
    // Children plus self add up to the parent: nothing lost, nothing doubled.
    for (const auto& [parent, sum] : child_sum) EXPECT_DOUBLE_EQ(sum + p.node(parent).self, w[parent]);
  }
}

TEST(Layout, SiblingsDoNotOverlapAndAreInNameOrder) {
  FoldedProfile p = random_profile(9, 300);
  FlameLayout layout = layout_flame(p, 0);
  std::map<std::pair<NodeId, double>, int> dummy;
  std::map<NodeId, std::vector<const FlameBox*>> kids;
  for (const auto& b : layout.boxes)
    if (b.node) kids[p.node(b.node).parent].push_back(&b);
  for (auto& [parent, v] : kids) {
    for (size_t i = 1; i < v.size(); ++i) {
      EXPECT_GE(v[i]->x, v[i - 1]->x + v[i - 1]->width - 1e-9);
      EXPECT_LT(p.frame_name(p.node(v[i - 1]->node).frame), p.frame_name(p.node(v[i]->node).frame));
    }
  }
}

TEST(Layout, MinWidthPruningKeepsPositionsAndTotals) {
  FoldedProfile p = random_profile(11, 2000);
  FlameLayout full = layout_flame(p, 0);
  double min_width = p.total() * 0.01;
  FlameLayout pruned = layout_flame(p, min_width);
  EXPECT_LT(pruned.boxes.size(), full.boxes.size());
  std::map<NodeId, FlameBox> full_by_node;
  for (const auto& b : full.boxes) full_by_node[b.node] = b;
  for (const auto& b : pruned.boxes) {
    if (b.node) EXPECT_GE(b.width, min_width);
    // Dropping small frames never moves the ones that stay.
    EXPECT_DOUBLE_EQ(b.x, full_by_node.at(b.node).x);
    EXPECT_DOUBLE_EQ(b.width, full_by_node.at(b.node).width);
  }
  EXPECT_DOUBLE_EQ(pruned.boxes[0].width, p.total());
  // Every pruned frame was narrow, or had a narrow ancestor.
  std::map<NodeId, bool> kept;
  for (const auto& b : pruned.boxes) kept[b.node] = true;
  for (const auto& b : full.boxes) {
    if (kept.count(b.node)) continue;
    bool narrow = false;
    for (NodeId n = b.node; n; n = p.node(n).parent) narrow = narrow || full_by_node.at(n).width < min_width;
    EXPECT_TRUE(narrow);
  }
}

TEST(Layout, MinWidthSpec) {
  EXPECT_DOUBLE_EQ(min_width_in_units("0.1", 11800, 1180), 1.0);
  EXPECT_DOUBLE_EQ(min_width_in_units("2%", 500, 1180), 10.0);
  EXPECT_DOUBLE_EQ(min_width_in_units("0", 500, 1180), 0.0);
  EXPECT_THROW(min_width_in_units("abc", 1, 1), std::exception);
  EXPECT_THROW(min_width_in_units("-1", 1, 1), std::exception);
  EXPECT_THROW(min_width_in_units("", 1, 1), std::exception);
}

TEST(Layout, ReverseStacks) {
  FoldedProfile p;
  p.add_stack("main;a;leaf", 2);
  p.add_stack("main;b;leaf", 3);
  FoldedProfile r = reverse_stacks(p);
  r.finalize();
  auto kids = r.children(0);
  ASSERT_EQ(kids.size(), 1u);
  EXPECT_EQ(r.frame_name(r.node(kids[0]).frame), "leaf");
  EXPECT_DOUBLE_EQ(r.node(kids[0]).total, 5);
}

TEST(Palette, ColoursStayInTheirFamilies) {
  for (double v : {0.0, 0.3, 0.999}) {
    Rgb hot = palette_color("hot", "f", v, v, v);
    EXPECT_GE(hot.r, 205);
    EXPECT_LE(hot.b, 55);
    Rgb mem = palette_color("mem", "f", v, v, v);
    EXPECT_EQ(mem.r, 0);
    EXPECT_GE(mem.g, 190);
    Rgb io = palette_color("io", "f", v, v, v);
    EXPECT_GT(io.b, io.r);
    Rgb red = palette_color("red", "f", v, v, v);
    EXPECT_GT(red.r, red.g);
    Rgb green = palette_color("green", "f", v, v, v);
    EXPECT_GT(green.g, green.r);
    Rgb blue = palette_color("blue", "f", v, v, v);
    EXPECT_GT(blue.b, blue.r);
    Rgb orange = palette_color("orange", "f", v, v, v);
    EXPECT_EQ(orange.b, 0);
    for (const char* pal : {"hot", "mem", "io", "wakeup", "red", "green", "blue", "aqua", "yellow", "purple", "orange"}) {
      Rgb c = palette_color(pal, "f", v, v, v);
      EXPECT_TRUE(c.r >= 0 && c.r <= 255 && c.g >= 0 && c.g <= 255 && c.b >= 0 && c.b <= 255) << pal;
    }
  }
  // Kernel frames are orange in the hot palette, like flamegraph.pl.
  Rgb k = palette_color("hot", "do_syscall_64_[k]", 0.5, 0.5, 0.5);
  EXPECT_EQ(k.b, 0);
  EXPECT_TRUE(is_known_palette("wakeup"));
  EXPECT_FALSE(is_known_palette("rainbow"));
}

TEST(Palette, HashValuesAreStableAndInRange) {
  EXPECT_DOUBLE_EQ(name_hash_value("memcpy"), name_hash_value("memcpy"));
  EXPECT_NE(name_hash_value("memcpy"), name_hash_value("zlib"));
  for (const char* n : {"", "a", "libc.so`memcpy", "very_long_function_name_here"}) {
    double v = name_hash_value(n);
    EXPECT_GE(v, 0);
    EXPECT_LE(v, 1);
    double m = mixed_hash_value(n, 3);
    EXPECT_GE(m, 0);
    EXPECT_LT(m, 1);
  }
}

TEST(XmlText, EscapesAndSanitises) {
  EXPECT_EQ(xml_escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&apos;");
  EXPECT_EQ(xml_escape("]]>"), "]]&gt;");
  EXPECT_EQ(xml_escape("x\x01y"), "x\xEF\xBF\xBDy");
  EXPECT_EQ(xml_escape("tab\tok"), "tab\tok");
  EXPECT_EQ(sanitize_xml_utf8("\xff"), "\xEF\xBF\xBD");
  EXPECT_EQ(sanitize_xml_utf8("\xc3"), "\xEF\xBF\xBD");                                 // truncated
  EXPECT_EQ(sanitize_xml_utf8("\xc0\xaf"), "\xEF\xBF\xBD\xEF\xBF\xBD");                 // overlong
  EXPECT_EQ(sanitize_xml_utf8("\xed\xa0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
  EXPECT_EQ(sanitize_xml_utf8("\xef\xbf\xbe"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // U+FFFE
  EXPECT_EQ(sanitize_xml_utf8("\xc3\xa9\xf0\x9f\x94\xa5"), "\xc3\xa9\xf0\x9f\x94\xa5");
  EXPECT_EQ(utf8_length("\xc3\xa9x"), 2u);
  EXPECT_EQ(utf8_prefix("\xc3\xa9xyz", 2), "\xc3\xa9x");
}

TEST(SvgNumbers, DisplayCounts) {
  EXPECT_EQ(detail::format_display_count(0), "0");
  EXPECT_EQ(detail::format_display_count(999), "999");
  EXPECT_EQ(detail::format_display_count(1234567), "1,234,567");
  EXPECT_EQ(detail::format_display_count(1234.5), "1,234.50");
  EXPECT_EQ(detail::format_percent(1, 3), "33.33%");
  EXPECT_EQ(detail::format_percent(1, 0), "0.00%");
}

}  // namespace
}  // namespace fg
