// Palette helpers: WCAG contrast against published values, the label colour
// chosen per fill keeping 4.5:1 on every palette's fills, the search
// highlight readable with either label colour, and --hash colours that
// depend on the name only (the same function, the same colour, in any graph).
#include <gtest/gtest.h>

#include "folded/folded_reader.h"
#include "render/flamegraph.h"
#include "render/palette.h"
#include "test_support.h"

namespace fg {
namespace {

TEST(Palette, ContrastRatioMatchesWcag) {
  EXPECT_NEAR(contrast_ratio({0, 0, 0}, {255, 255, 255}), 21.0, 1e-9);
  EXPECT_NEAR(contrast_ratio({255, 255, 255}, {255, 255, 255}), 1.0, 1e-9);
  EXPECT_NEAR(contrast_ratio({0x77, 0x77, 0x77}, {255, 255, 255}), 4.48, 0.01);  // the classic AA near-miss
  EXPECT_NEAR(contrast_ratio({0x76, 0x76, 0x76}, {255, 255, 255}), 4.54, 0.01);  // the lightest AA grey
  Rgb c;
  ASSERT_TRUE(parse_css_color("#495057", c));
  // Black on the old "kernel" fill read at 2.8:1; the chosen label is white.
  EXPECT_LT(contrast_ratio(c, {0, 0, 0}), 3.5);
  EXPECT_TRUE(white_text_on(c));
  EXPECT_FALSE(parse_css_color("rgb(1,2)", c));
  EXPECT_FALSE(parse_css_color("#12345g", c));
  EXPECT_FALSE(parse_css_color("rgb(1,2,300)", c));
}

TEST(Palette, LabelContrastAtLeast45OnEveryFill) {
  // Every 3rd value of each channel (a 86^3 grid), plus every palette's fills.
  double worst = 100;
  for (int r = 0; r < 256; r += 3)
    for (int g = 0; g < 256; g += 3)
      for (int b = 0; b < 256; b += 3) {
        Rgb f{r, g, b};
        Rgb t = white_text_on(f) ? Rgb{255, 255, 255} : Rgb{0, 0, 0};
        worst = std::min(worst, contrast_ratio(f, t));
      }
  EXPECT_GE(worst, 4.5);
  for (const char* pal : {"hot", "mem", "io", "red", "green", "blue", "aqua", "yellow", "purple", "orange"})
    for (double v = 0; v < 1; v += 0.01) {
      Rgb f = palette_color(pal, "f", v, 1 - v, v);
      Rgb t = white_text_on(f) ? Rgb{255, 255, 255} : Rgb{0, 0, 0};
      EXPECT_GE(contrast_ratio(f, t), 4.5) << pal << " " << f.css();
    }
}

TEST(Palette, SearchHighlightReadsWithBlackAndWhiteLabels) {
  Rgb h;
  ASSERT_TRUE(parse_css_color(kSearchHighlight, h));
  EXPECT_GE(contrast_ratio(h, {0, 0, 0}), 4.5);
  EXPECT_GE(contrast_ratio(h, {255, 255, 255}), 4.5);
}

TEST(Palette, RenderedLabelsUseTheReadableColour) {
  FoldedProfile p;
  read_folded(test::testdata("folded/small.folded"), p);
  SvgOptions o;
  o.embed_script = false;
  std::string svg;
  render_flamegraph(p, o, svg);
  size_t checked = 0;
  for (size_t at = svg.find("<rect x="); at != std::string::npos; at = svg.find("<rect x=", at + 1)) {
    size_t f = svg.find("fill=\"", at);
    size_t fe = svg.find('"', f + 6);
    Rgb fill;
    if (!parse_css_color(svg.substr(f + 6, fe - f - 6), fill)) continue;
    size_t t = svg.find("<text", fe);
    bool white = svg.compare(t, 15, "<text class=\"w\"") == 0;
    EXPECT_GE(contrast_ratio(fill, white ? Rgb{255, 255, 255} : Rgb{0, 0, 0}), 4.5) << fill.css();
    ++checked;
  }
  EXPECT_GT(checked, 5u);
}

TEST(Palette, HashColoursDependOnTheNameOnly) {
  // --hash: a frame's colour is a function of its name, so two different
  // graphs colour the same function alike.
  FoldedProfile a, b;
  read_folded_text("main;sgemm_kernel 3\nmain;relu 1\n", "a", a);
  read_folded_text("start;x;y;sgemm_kernel 9\nz 1\n", "b", b);
  SvgOptions o;
  o.hash = true;
  o.embed_script = false;
  std::string sa, sb;
  render_flamegraph(a, o, sa);
  render_flamegraph(b, o, sb);
  auto fill_of = [](const std::string& svg, const std::string& name) {
    size_t t = svg.find("<title>" + name + " (");
    size_t f = svg.find("fill=\"", t);
    return svg.substr(f + 6, svg.find('"', f + 6) - f - 6);
  };
  EXPECT_EQ(fill_of(sa, "sgemm_kernel"), fill_of(sb, "sgemm_kernel"));
  EXPECT_NE(fill_of(sa, "sgemm_kernel"), fill_of(sa, "relu"));
}

}  // namespace
}  // namespace fg
