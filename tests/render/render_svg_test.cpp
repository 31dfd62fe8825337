// SVG output: golden files, determinism, escaping of hostile names,
// well-formedness, colouring hooks, legend, off-CPU colouring, flame charts.
#include <gtest/gtest.h>

#include <regex>

#include "diagnostics/input_error.h"
#include "folded/folded_reader.h"
#include "golden.h"
#include "render/flamegraph.h"
#include "folded/weight_text.h"
#include "test_support.h"

namespace fg {
namespace {

FoldedProfile load(const std::string& name) {
  FoldedProfile p;
  read_folded(test::testdata("folded/" + name), p);
  return p;
}

std::string render(const FoldedProfile& p, SvgOptions o = {}) {
  std::string out;
  render_flamegraph(p, o, out);
  std::string err = test::xml_wellformed_error(out);
  EXPECT_EQ(err, "") << "SVG is not well-formed";
  return out;
}

size_t count(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t pos = hay.find(needle); pos != std::string::npos; pos = hay.find(needle, pos + 1)) ++n;
  return n;
}

SvgOptions static_options() {
  SvgOptions o;
  o.embed_script = false;
  return o;
}

TEST(SvgGolden, Small) { test::expect_golden("small.svg", render(load("small.folded"), static_options())); }

TEST(SvgGolden, SmallInvertedMemHash) {
  SvgOptions o = static_options();
  o.inverted = true;
  o.colors = "mem";
  o.hash = true;
  o.title = "Icicle <test>";
  o.subtitle = "subtitle & more";
  o.width = 600;
  o.frame_height = 20;
  o.font_size = 10;
  o.count_name = "us";
  test::expect_golden("small-inverted-mem.svg", render(load("small.folded"), o));
}

TEST(SvgGolden, WallClockOffCpu) { test::expect_golden("wall.svg", render(load("wall.folded"), static_options())); }

TEST(SvgGolden, HostileNames) { test::expect_golden("hostile.svg", render(load("hostile.folded"), static_options())); }

TEST(SvgGolden, RealRecording) {
  test::expect_golden("perf-python.svg", render(load("perf-python.folded"), static_options()));
}

TEST(Svg, SameInputSameBytesWhateverTheOrder) {
  FoldedProfile a = load("perf-python.folded");
  // The same stacks, added in reverse order and split into two halves.
  std::vector<std::pair<std::string, double>> stacks;
  a.for_each_stack([&](const std::vector<FrameId>& f, double w) {
    std::string s;
    for (size_t i = 0; i < f.size(); ++i) s += (i ? ";" : "") + std::string(a.frame_name(f[i]));
    stacks.emplace_back(s, w);
  });
  FoldedProfile b;
  for (auto it = stacks.rbegin(); it != stacks.rend(); ++it) {
    b.add_stack(it->first, it->second / 2);
    b.add_stack(it->first, it->second / 2);
  }
  SvgOptions o;
  std::string x = render(a, o), y = render(b, o), z = render(a, o);
  EXPECT_EQ(x, y);
  EXPECT_EQ(x, z);
}

TEST(Svg, HostileNamesAreInert) {
  SvgOptions o;  // with the script: it must still be the only script
  o.title = "<script>alert(1)</script>";
  o.subtitle = "]]><!--";
  o.notes = "notes with ]]> and <b> and \x01";
  o.name_type = "\"><script>";
  std::string svg = render(load("hostile.folded"), o);
  EXPECT_EQ(count(svg, "<script"), 1u);
  EXPECT_EQ(count(svg, "]]>"), 1u);  // the end of our own CDATA section
  EXPECT_EQ(count(svg, "<!--"), 1u);  // our own header comment
  EXPECT_EQ(svg.find('\x01'), std::string::npos);
  EXPECT_EQ(svg.find('\x1b'), std::string::npos);
  EXPECT_NE(svg.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  // Invalid UTF-8 became U+FFFD; valid multibyte text kept.
  EXPECT_NE(svg.find("bad\xEF\xBF\xBD\xEF\xBF\xBDutf8\xEF\xBF\xBD"), std::string::npos);
  EXPECT_NE(svg.find("ok_utf8_\xc3\xa9\xe2\x82\xac\xf0\x9f\x94\xa5"), std::string::npos);
  // The script section holds no per-frame data.
  size_t start = svg.find("<![CDATA["), end = svg.find("]]>");
  ASSERT_NE(start, std::string::npos);
  std::string script = svg.substr(start, end - start);
  EXPECT_EQ(script.find("alert(1)"), std::string::npos);
  EXPECT_EQ(script.find("compute"), std::string::npos);
}

TEST(Svg, NoJavascriptOption) {
  SvgOptions o;
  o.embed_script = false;
  std::string svg = render(load("small.folded"), o);
  EXPECT_EQ(svg.find("<script"), std::string::npos);
  EXPECT_EQ(svg.find("onload"), std::string::npos);
  o.embed_script = true;
  svg = render(load("small.folded"), o);
  EXPECT_NE(svg.find("function init(evt)"), std::string::npos);
  EXPECT_NE(svg.find("onload=\"init(evt)\""), std::string::npos);
}

TEST(Svg, TooltipsTruncationAndMinWidth) {
  FoldedProfile p;
  p.add_stack("main;a_function_with_a_rather_long_name_that_cannot_fit", 10);
  p.add_stack("main;tiny", 0.001);
  p.add_stack("main;wide_enough", 1000);
  SvgOptions o = static_options();
  o.width = 300;
  std::string svg = render(p, o);
  // 10/1010 of 280 px = 2.8 px: too narrow for three characters, no text.
  EXPECT_NE(svg.find("<title>a_function_with_a_rather_long_name_that_cannot_fit (10 samples, 0.99%)</title>"),
            std::string::npos);
  // tiny is below the 0.1 px default min width: not drawn at all.
  EXPECT_EQ(svg.find("tiny"), std::string::npos);
  o.min_width = "0";
  svg = render(p, o);
  EXPECT_NE(svg.find("<title>tiny (0.00 samples, 0.00%)</title>"), std::string::npos);
  o.min_width = "1%";  // 10.1 samples: drops the 10-sample frame too
  svg = render(p, o);
  EXPECT_EQ(svg.find("a_function_with"), std::string::npos);
  EXPECT_NE(svg.find("<title>wide_enough ("), std::string::npos);
}

TEST(Svg, NamesThatDoNotFitEndWithDots) {
  FoldedProfile p;
  p.add_stack("main;abcdefghijklmnopqrstuvwxyz", 1);
  p.add_stack("main;other", 9);
  SvgOptions o = static_options();
  o.width = 1000;  // 98 px for the long frame: 98 / (12*0.59) = 13 characters
  std::string svg = render(p, o);
  EXPECT_NE(svg.find(">abcdefghijk..</text>"), std::string::npos) << svg;
}

TEST(Svg, QualifiedCppNamesKeepTheirTail) {
  FoldedProfile p;
  p.add_stack("main;at::native::(anonymous namespace)::addmm_impl_cpu_", 1);
  p.add_stack("main;std::vector<float, std::allocator<float> >", 1);
  p.add_stack("main;other", 8);
  SvgOptions o = static_options();
  o.width = 1000;  // 98 px each: 13 characters
  std::string svg = render(p, o);
  EXPECT_NE(svg.find(">..m_impl_cpu_</text>"), std::string::npos) << svg;  // not "at::native::.."
  EXPECT_NE(svg.find(">std::vector..</text>"), std::string::npos) << svg;  // ends in '>': head kept
}

TEST(Svg, LegendSharesComeFromTheDrawnWidth) {
  // gemm frames: "compute;gemm" (40 own of its 40) inside "compute" (also
  // gemm, 47 - 40 - 7 = 0 own) -> 40 of 58 = 69.0%; relu (7) is "act".
  FoldedProfile p = load("small.folded");
  SvgOptions o = static_options();
  o.frame_style = [&](FrameId f) {
    std::string_view n = p.frame_name(f);
    if (n.rfind("gemm", 0) == 0 || n == "compute") return FrameStyle{"rgb(1,2,3)", "gemm"};
    if (n == "relu") return FrameStyle{"rgb(4,5,6)", "act"};
    if (n == "write") return FrameStyle{"rgb(7,8,9)", "io"};
    return FrameStyle{"rgb(9,9,9)", "other"};
  };
  // "never" is not drawn (dropped); "io" has no row (added); "act" before "gemm" is re-sorted.
  o.legend = {{"act", "rgb(4,5,6)", "", "resource"}, {"gemm", "rgb(1,2,3)", "", "resource"},
              {"never", "rgb(0,0,0)", "", "resource"}, {"other", "rgb(9,9,9)", "", ""}};
  std::string svg = render(p, o);
  size_t gemm = svg.find(">gemm 69.0%</text>"), act = svg.find(">act 12.1%</text>");
  ASSERT_NE(gemm, std::string::npos) << svg;
  ASSERT_NE(act, std::string::npos);
  EXPECT_LT(gemm, act);  // largest first
  EXPECT_EQ(svg.find(">never"), std::string::npos);
  EXPECT_NE(svg.find(">io 3.4%</text>"), std::string::npos);
  EXPECT_NE(svg.find(">resource:</text>"), std::string::npos);
  EXPECT_NE(svg.find("fg:c=\"gemm\" fg:s=\"0\""), std::string::npos);   // compute: nothing of its own
  EXPECT_NE(svg.find("fg:c=\"gemm\" fg:s=\"40\""), std::string::npos);  // gemm<float>
}

TEST(Svg, WallFramesBlendByOffCpuShareWithTheSplitInTheTooltip) {
  std::string svg = render(load("wall.folded"), static_options());
  // wall.folded: run = 505, of which 5 + 80 + 300 are under [off-cpu...] frames.
  EXPECT_NE(svg.find("<title>run (505 samples, 100.00%, on-CPU 23.8%, off-CPU 76.2% of this frame)"), std::string::npos)
      << svg;
  EXPECT_NE(svg.find("<title>compute (120 samples, 23.76%, on-CPU 100.0%, off-CPU 0.0% of this frame)"),
            std::string::npos);
  EXPECT_NE(svg.find(">warm: on-CPU, blue: off-CPU"), std::string::npos);  // the subtitle explains
}

TEST(Svg, CategoryHookAndLegend) {
  FoldedProfile p = load("small.folded");
  SvgOptions o = static_options();
  o.frame_style = [&](FrameId f) {
    FrameStyle s;
    std::string_view n = p.frame_name(f);
    if (n.rfind("gemm", 0) == 0 || n == "relu") s = {"rgb(1,2,3)", "compute & math"};
    return s;
  };
  o.legend = {{"compute & math", "rgb(1,2,3)", "80.6%"}, {"other", "rgb(9,9,9)", "19.4%"}};
  std::string svg = render(p, o);
  EXPECT_EQ(count(svg, "fill=\"rgb(1,2,3)\""), 3u);  // two frames + the legend swatch
  EXPECT_EQ(count(svg, "fg:c=\"compute &amp; math\""), 2u);
  EXPECT_NE(svg.find("category compute &amp; math"), std::string::npos);
  EXPECT_NE(svg.find("<g id=\"legend\">"), std::string::npos);
  EXPECT_NE(svg.find(">compute &amp; math 80.6%</text>"), std::string::npos);
  // node_style wins over frame_style.
  o.node_style = [](NodeId) { return FrameStyle{"rgb(7,7,7)", ""}; };
  svg = render(p, o);
  EXPECT_EQ(count(svg, "fill=\"rgb(1,2,3)\""), 1u);  // only the legend
}

TEST(Svg, WallModeColoursOffCpuBlue) {
  std::string svg = render(load("wall.folded"), static_options());
  std::smatch m;
  std::regex off(R"(<title>\[off-cpu: D\] [^<]*</title><rect [^>]*fill="rgb\((\d+),(\d+),(\d+)\))");
  ASSERT_TRUE(std::regex_search(svg, m, off));
  EXPECT_GT(std::stoi(m[3]), std::stoi(m[1]));  // blue > red
  std::regex on(R"(<title>compute [^<]*</title><rect [^>]*fill="rgb\((\d+),(\d+),(\d+)\))");
  ASSERT_TRUE(std::regex_search(svg, m, on));
  EXPECT_GT(std::stoi(m[1]), std::stoi(m[3]));  // warm
  // An explicit palette turns the automatic wall mode off.
  SvgOptions o = static_options();
  o.colors = "hot";
  svg = render(load("wall.folded"), o);
  ASSERT_TRUE(std::regex_search(svg, m, off));
  EXPECT_GT(std::stoi(m[1]), std::stoi(m[3]));
}

TEST(Svg, CountNameFactorAndTotal) {
  FoldedProfile p;
  p.add_stack("main;x", 1500);
  p.units = "us";
  SvgOptions o = static_options();
  std::string svg = render(p, o);
  // Time units read as people write them (ms, s), as `fgtool report` does.
  EXPECT_NE(svg.find("<title>x (1.5 ms, 100.00%)</title>"), std::string::npos);
  o.factor = 2;
  o.total = 3000;
  o.count_name = "ms";
  svg = render(p, o);
  EXPECT_NE(svg.find("<title>x (3.00 s, 50.00%)</title>"), std::string::npos);
  EXPECT_NE(svg.find("width=\"590.0\""), std::string::npos);  // half of 1180 px
  // Counts keep their unit name and get thousands separators.
  o.count_name = "bytes";
  svg = render(p, o);
  EXPECT_NE(svg.find("<title>x (3,000 bytes, 50.00%)</title>"), std::string::npos);
}

TEST(Svg, NanosecondTooltipsAndWeightText) {
  FoldedProfile p;
  p.units = "ns";
  p.add_stack("main;big", 12345678901.0);  // 12.3 s
  p.add_stack("main;small", 45600);       // 45.6 us
  p.add_stack("main;mid", 4567000);       // 4.6 ms
  SvgOptions o = static_options();
  o.min_width = "0";
  std::string svg = render(p, o);
  EXPECT_NE(svg.find("<title>big (12.3 s, "), std::string::npos) << svg;
  EXPECT_NE(svg.find("<title>small (45.6 us, "), std::string::npos);
  EXPECT_NE(svg.find("<title>mid (4.6 ms, "), std::string::npos);
  EXPECT_EQ(svg.find("samples"), std::string::npos);
  EXPECT_EQ(svg.find("12345678901 "), std::string::npos);  // no raw 11-digit nanoseconds
  EXPECT_EQ(human_weight_with_unit(12345, "samples"), "12,345 samples");
  EXPECT_EQ(human_weight_with_unit(1234567.5, "samples"), "1,234,567.50 samples");
  EXPECT_EQ(human_weight_with_unit(1234567890123.0, "ns"), "1,234.6 s");
  EXPECT_EQ(human_weight_with_unit(999, "ns"), "999 ns");
  EXPECT_EQ(human_weight(1234567, "samples"), "1,234,567");
}

TEST(Svg, BadOptionsAreUsageErrors) {
  FoldedProfile p;
  p.add_stack("a", 1);
  std::string out;
  SvgOptions o;
  o.colors = "rainbow";
  EXPECT_THROW(render_flamegraph(p, o, out), UsageError);
  o = SvgOptions{};
  o.min_width = "x%";
  EXPECT_THROW(render_flamegraph(p, o, out), UsageError);
  o = SvgOptions{};
  o.width = 0;
  EXPECT_THROW(render_flamegraph(p, o, out), UsageError);
}

TEST(Svg, EmptyProfileIsStillAValidDocument) {
  FoldedProfile p;
  std::string svg = render(p, SvgOptions{});
  EXPECT_NE(svg.find("<title>all (0 samples, 0.00%)</title>"), std::string::npos);
}

TEST(FlameChart, KeepsInputOrderAndMergesOnlyNeighbours) {
  FlameChartBuilder chart;
  chart.add("main;a", 1);
  chart.add("main;a", 1);
  chart.add("main;b", 1);
  chart.add("main;a", 1);
  SvgOptions o = static_options();
  std::string svg;
  chart.render(o, svg);
  EXPECT_EQ(test::xml_wellformed_error(svg), "");
  EXPECT_NE(svg.find("<text id=\"title\" x=\"600.0\" y=\"24.0\">Flame Chart</text>"), std::string::npos);
  EXPECT_NE(svg.find("<g fg:x=\"0\" fg:w=\"2\"><title>a (2 samples, 50.00%)"), std::string::npos);
  EXPECT_NE(svg.find("<g fg:x=\"2\" fg:w=\"1\"><title>b (1 samples, 25.00%)"), std::string::npos);
  EXPECT_NE(svg.find("<g fg:x=\"3\" fg:w=\"1\"><title>a (1 samples, 25.00%)"), std::string::npos);
  EXPECT_NE(svg.find("<g fg:x=\"0\" fg:w=\"4\"><title>main (4 samples, 100.00%)"), std::string::npos);
}

// Stacks whose callers were lost fold with "[unknown]" right under the
// process frame; that frame is drawn hatched, explained in its tooltip and
// counted (whole width) in a "stacks:" legend row, whatever the palette.
TEST(Svg, CutShortStacksAreHatchedExplainedAndInTheLegend) {
  FoldedProfile p;
  read_folded_text("proc;[unknown];libfoo;work 30\nproc;main;compute 50\nproc;main;[unknown] 20\n", "t.folded", p);
  SvgOptions o = static_options();
  for (const char* colors : {"hot", "wall", "mem"}) {
    o.colors = colors;
    std::string svg = render(p, o);
    SCOPED_TRACE(colors);
    // Only the root-side marker (depth 2), not a deeper [unknown] leaf.
    std::regex hatched("<g fg:x=\"(\\d+)\" fg:w=\"(\\d+)\" fg:c=\"cut short \\(callers unknown\\)\" fg:s=\"(\\d+)\"><title>"
                       "\\[unknown\\] \\(([^<]*)\\)</title><rect [^>]* fill=\"url\\(#fg_cutshort\\)\"");
    std::smatch m;
    ASSERT_TRUE(std::regex_search(svg, m, hatched)) << svg;
    EXPECT_EQ(m[2], "30");
    EXPECT_EQ(m[3], "30");  // counted by its whole width
    EXPECT_NE(m[4].str().find("30 samples, 30.00%"), std::string::npos) << m[4];
    EXPECT_NE(m[4].str().find("callers lost: the user-stack copy ran out or a frame-pointer chain broke; record with "
                              "fgtool record --dwarf --stack-size 65528"),
              std::string::npos)
        << m[4];
    auto count = [&](const std::string& needle) {
      size_t n = 0;
      for (size_t at = svg.find(needle); at != std::string::npos; at = svg.find(needle, at + 1)) ++n;
      return n;
    };
    EXPECT_EQ(count("fill=\"url(#fg_cutshort)\""), 2u);  // the frame and the legend swatch
    EXPECT_EQ(count("<pattern id=\"fg_cutshort\""), 1u);
    EXPECT_NE(svg.find("<title>cut short (callers unknown) 30.0% (stacks): click to search</title>"), std::string::npos);
    EXPECT_NE(svg.find(">stacks:</text>"), std::string::npos);
  }
  // Reversed (leaf-first) stacks have no root side to mark.
  SvgOptions rev = static_options();
  rev.reverse = true;
  FoldedProfile q;
  read_folded_text("a;[unknown];b 3\nproc;[unknown];lib 2\n", "t.folded", q);
  EXPECT_EQ(render(q, rev).find("fg_cutshort"), std::string::npos);
  // Flame charts mark them the same way.
  FlameChartBuilder chart;
  chart.add("proc;[unknown];libfoo;work", 30);
  chart.add("proc;main;compute", 50);
  std::string chart_svg;
  chart.render(static_options(), chart_svg);
  EXPECT_NE(chart_svg.find("fg:c=\"cut short (callers unknown)\" fg:s=\"30\"><title>[unknown] (30 samples, 37.50%; callers lost"),
            std::string::npos)
      << chart_svg;
  EXPECT_NE(chart_svg.find("cut short (callers unknown) 37.5% (stacks)"), std::string::npos);
  // No marker, no pattern and no legend.
  FoldedProfile whole;
  read_folded_text("proc;main;compute 50\nproc;main;[unknown] 20\n[unknown];x 3\n", "t.folded", whole);
  std::string svg = render(whole, static_options());
  EXPECT_EQ(svg.find("fg_cutshort"), std::string::npos);
  EXPECT_EQ(svg.find("id=\"legend\""), std::string::npos);
}

}  // namespace
}  // namespace fg
