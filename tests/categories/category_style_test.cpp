// Category colours and the one category definition the flamegraph uses:
// the built-in palette has no duplicates and stays distinguishable under
// simulated colour-vision deficiencies and from the search highlight; a
// frame's colour category is the report's category of a sample ending there.
#include "categories/category_style.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "folded/folded_reader.h"
#include "render/palette.h"
#include "test_support.h"

namespace fg {
namespace {

struct Lab {
  double l, a, b;
};
double lin(int v) {
  double c = v / 255.0;
  return c <= 0.04045 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4);
}
Lab lab_of_linear(double r, double g, double b) {
  double x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047;
  double y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
  double z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883;
  auto f = [](double t) { return t > 0.008856 ? std::cbrt(t) : 7.787 * t + 16.0 / 116; };
  return {116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))};
}
// CIELAB of `c` as seen with normal vision (view 0) and, by Machado et al.
// (2009) at full severity, with protanopia, deuteranopia and tritanopia.
Lab view(const Rgb& c, int v) {
  static const double m[3][3][3] = {
      {{0.152286, 1.052583, -0.204868}, {0.114503, 0.786281, 0.099216}, {-0.003882, -0.048116, 1.051998}},
      {{0.367322, 0.860646, -0.227968}, {0.280085, 0.672501, 0.047413}, {-0.011820, 0.042940, 0.968881}},
      {{1.255528, -0.076749, -0.178779}, {-0.078411, 0.930809, 0.147602}, {0.004733, -0.691367, 1.687635}}};
  double r = lin(c.r), g = lin(c.g), b = lin(c.b);
  if (v == 0) return lab_of_linear(r, g, b);
  const auto& k = m[v - 1];
  double o[3];
  for (int i = 0; i < 3; ++i) o[i] = std::min(1.0, std::max(0.0, k[i][0] * r + k[i][1] * g + k[i][2] * b));
  return lab_of_linear(o[0], o[1], o[2]);
}
double delta_e(const Lab& x, const Lab& y) { return std::hypot(x.l - y.l, x.a - y.a, x.b - y.b); }

const char* const kViews[] = {"normal vision", "protanopia", "deuteranopia", "tritanopia"};
// Minimum CIE76 distance between two category colours per view: ~20 is
// clearly different side by side; the simulated deficiencies lose one axis,
// so less is asked there (2.3 is a "just noticeable difference").
const double kMinDelta[] = {18, 11, 11, 13};

std::map<std::string, Rgb> builtin_colors() {
  CategoryRules rules = CategoryRules::defaults();
  CategoryMatcher m(rules);
  std::map<std::string, Rgb> out;
  for (int k = 0; k < kCategoryKinds; ++k)
    for (const Category& c : m.categories(CategoryKind(k))) {
      Rgb rgb;
      EXPECT_TRUE(parse_css_color(c.color, rgb)) << c.name << " " << c.color;
      out[(k ? "phase " : "") + c.name] = rgb;
    }
  out.erase("phase other");  // the same "other" as resources
  return out;
}

TEST(CategoryPalette, NoTwoCategoriesLookAlikeWithOrWithoutColourBlindness) {
  auto colors = builtin_colors();
  ASSERT_GT(colors.size(), 15u);
  for (auto i = colors.begin(); i != colors.end(); ++i)
    for (auto j = std::next(i); j != colors.end(); ++j) {
      EXPECT_FALSE(i->second == j->second) << i->first << " and " << j->first << " share " << i->second.css();
      for (int v = 0; v < 4; ++v) {
        double d = delta_e(view(i->second, v), view(j->second, v));
        EXPECT_GE(d, kMinDelta[v]) << i->first << " " << i->second.css() << " vs " << j->first << " "
                                   << j->second.css() << " under " << kViews[v];
      }
    }
}

TEST(CategoryPalette, SearchHighlightIsNoCategoryColour) {
  Rgb hl;
  ASSERT_TRUE(parse_css_color(kSearchHighlight, hl));
  for (const auto& [name, c] : builtin_colors())
    for (int v = 0; v < 4; ++v)
      EXPECT_GE(delta_e(view(c, v), view(hl, v)), 10) << name << " " << c.css() << " under " << kViews[v];
}

// Cut-short stacks' marker frames are hatched white and slate grey: neither
// colour is a category's (nor the highlight), under every simulated vision,
// the stripes stay visible on the base, and black labels read on both.
TEST(CategoryPalette, CutShortHatchingIsNoCategoryColour) {
  Rgb base, stripe, hl;
  ASSERT_TRUE(parse_css_color(kCutShortBase, base));
  ASSERT_TRUE(parse_css_color(kCutShortStripe, stripe));
  ASSERT_TRUE(parse_css_color(kSearchHighlight, hl));
  auto colors = builtin_colors();
  colors["search highlight"] = hl;
  for (const Rgb& c : {base, stripe}) {
    EXPECT_FALSE(white_text_on(c)) << c.css();
    EXPECT_GE(contrast_ratio(c, Rgb{0, 0, 0}), 4.5) << c.css();
    for (const auto& [name, cat] : colors) {
      EXPECT_FALSE(c == cat) << name;
      for (int v = 0; v < 4; ++v)
        EXPECT_GE(delta_e(view(c, v), view(cat, v)), 10) << name << " " << cat.css() << " vs " << c.css() << " under "
                                                         << kViews[v];
    }
  }
  for (int v = 0; v < 4; ++v) EXPECT_GE(delta_e(view(base, v), view(stripe, v)), 15) << kViews[v];
}

TEST(CategoryPalette, LabelsReadOnEveryCategoryFill) {
  // Every fill a category frame can get (the colour shaded by name, +-6%).
  std::string folded;
  const char* names[] = {"sgemm_kernel", "gomp_barrier_wait_end", "malloc", "futex_wait", "asm_exc_page_fault",
                         "at::native::conv2d", "main", "x", "PyEval_EvalFrameDefault", "_dl_relocate_object"};
  for (const char* a : names)
    for (const char* b : names) folded += std::string("main;") + a + ";" + b + " 1\n";
  FoldedProfile p;
  read_folded_text(folded, "t.folded", p);
  CategoryRules rules = CategoryRules::defaults();
  CategoryMatcher m(rules);
  ProfileCategories pc(p, m);
  CategoryStyle style(pc);
  for (NodeId n = 1; n < p.node_count(); ++n) {
    Rgb fill;
    ASSERT_TRUE(parse_css_color(style.style(n).fill, fill));
    Rgb text = white_text_on(fill) ? Rgb{255, 255, 255} : Rgb{0, 0, 0};
    EXPECT_GE(contrast_ratio(fill, text), 4.5) << style.style(n).fill;
  }
}

TEST(CategoryStyle, FrameCategoryIsTheReportCategoryOfASampleEndingThere) {
  FoldedProfile p;
  read_folded(test::testdata("categories/libtorch_dwarf.folded"), p);
  p.finalize();
  CategoryRules rules = CategoryRules::defaults();
  CategoryMatcher m(rules);
  ProfileCategories pc(p, m);
  CategoryStyle style(pc);
  CategoryReport report = build_category_report(pc, 0);
  // Self weight per frame colour category = the report's resource shares.
  std::map<std::string, double> by_colour;
  std::set<std::string> coloured;
  for (NodeId n = 1; n < p.node_count(); ++n) {
    by_colour[style.style(n).category] += p.node(n).self;
    coloured.insert(style.style(n).category);
  }
  for (size_t i = 0; i + 1 < report.resource.size(); ++i)
    EXPECT_DOUBLE_EQ(by_colour[report.resource[i].name], report.resource[i].self) << report.resource[i].name;
  // Every category that colours a frame has a legend row, in its section.
  std::map<std::string, std::string> rows;
  for (const auto& r : style.legend()) rows[r.name] = r.section;
  for (const auto& name : coloured) EXPECT_TRUE(rows.count(name)) << name;
  EXPECT_EQ(rows.size(), coloured.size());
  EXPECT_EQ(rows["gemm"], "resource");
  for (const auto& r : style.legend("none")) EXPECT_EQ(r.fill, "none");
}

}  // namespace
}  // namespace fg
