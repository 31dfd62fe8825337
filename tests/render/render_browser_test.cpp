// The flamegraph script in a real browser (headless Chromium): restoring the
// view from the URL, hover details, click-to-zoom, search with nested
// matches counted once, Reset Zoom. A small harness script is appended to a
// rendered SVG; it drives the page and writes what it saw into the DOM,
// which --dump-dom prints. Skipped when Chromium is not installed.
#include <gtest/gtest.h>

#include "folded/folded_reader.h"
#include "render/flamegraph.h"
#include "test_support.h"

namespace fg {
namespace {

std::string chromium() {
  for (const char* c : {"chromium", "chromium-browser", "google-chrome"}) {
    auto r = test::run_shell(std::string("command -v ") + c);
    if (r.status == 0) return c;
  }
  return "";
}

std::string dump_dom(const std::string& browser, const std::string& url) {
  auto r = test::run_shell("timeout 90 " + browser +
                           " --headless --no-sandbox --disable-gpu --virtual-time-budget=3000 --dump-dom " +
                           test::shell_quote(url) + " 2>/dev/null");
  return r.out;
}

std::string between(const std::string& s, const std::string& from, const std::string& to) {
  size_t a = s.find(from);
  if (a == std::string::npos) return "";
  a += from.size();
  size_t b = s.find(to, a);
  return s.substr(a, b == std::string::npos ? std::string::npos : b - a);
}

class Browser : public ::testing::Test {
 protected:
  void SetUp() override {
    browser_ = chromium();
    if (browser_.empty()) GTEST_SKIP() << "chromium is not installed (scripts/setup.sh --browser)";
    FoldedProfile p;
    read_folded(test::testdata("folded/small.folded"), p);
    render_flamegraph(p, SvgOptions{}, svg_);
    dir_ = test::temp_dir();
  }
  std::string browser_, svg_, dir_;
};

TEST_F(Browser, UrlRestoresZoomAndSearch) {
  test::write_file(dir_ + "/g.svg", svg_);
  // compute is at fg:x=3; its rect y in the default layout is 53.0.
  std::string dom = dump_dom(browser_, "file://" + dir_ + "/g.svg?s=gemm%7Crelu&x=3&y=53.0");
  ASSERT_FALSE(dom.empty()) << "chromium printed nothing";
  EXPECT_NE(dom.find(">Matched: 81.0% (100.0% of zoomed)</text>"), std::string::npos) << dom.substr(0, 3000);
  EXPECT_NE(dom.find("<g fg:x=\"0\" fg:w=\"3\" class=\"hide\"><title>parse_args"), std::string::npos);
  EXPECT_NE(dom.find("<g fg:x=\"3\" fg:w=\"54\" class=\"parent\"><title>run"), std::string::npos);
  EXPECT_NE(dom.find("<title>compute (47 samples, 81.03%)</title><rect x=\"10.0\" y=\"53.0\" width=\"1180.0\""),
            std::string::npos);
  EXPECT_NE(dom.find("fill=\"rgb(208,0,208)\""), std::string::npos);  // highlighted matches
}

TEST_F(Browser, HoverClickZoomSearchUnzoom) {
  const std::string harness = R"(<script type="text/ecmascript"><![CDATA[
window.addEventListener("load", function () { setTimeout(function () {
  var out = [];
  function g(name) { var k = document.getElementById("frames").children;
    for (var i = 0; i < k.length; i++) if (name_of(k[i]) === name) return k[i]; }
  var io = g("io"), relu = g("relu");
  child(io, "rect").dispatchEvent(new MouseEvent("mouseover", {bubbles: true}));
  out.push("hover1=" + document.getElementById("details").textContent);
  child(io, "rect").dispatchEvent(new MouseEvent("click", {bubbles: true}));
  out.push("url=" + document.location.search);
  child(g("read"), "rect").dispatchEvent(new MouseEvent("mouseover", {bubbles: true}));
  out.push("hover2=" + document.getElementById("details").textContent);
  out.push("relu=" + relu.getAttribute("class"));
  out.push("readw=" + child(g("read"), "rect").getAttribute("width"));
  search("^r");
  out.push("matched=" + document.getElementById("matched").textContent);
  document.getElementById("unzoom").dispatchEvent(new MouseEvent("click", {bubbles: true}));
  out.push("relu2=" + relu.getAttribute("class") + ",iow=" + child(io, "rect").getAttribute("width"));
  out.push("matched2=" + document.getElementById("matched").textContent);
  out.push("url2=" + document.location.search);
  var r = document.createElementNS("http://www.w3.org/2000/svg", "text");
  r.setAttribute("id", "harness"); r.textContent = out.join("|"); document.documentElement.appendChild(r);
}, 50); });
]]></script>
</svg>
)";
  std::string svg = svg_;
  svg.replace(svg.rfind("</svg>"), std::string::npos, harness);
  test::write_file(dir_ + "/h.svg", svg);
  std::string dom = dump_dom(browser_, "file://" + dir_ + "/h.svg");
  std::string got = between(dom, "<text id=\"harness\">", "</text>");
  ASSERT_FALSE(got.empty()) << dom.substr(0, 2000);
  EXPECT_NE(got.find("hover1=Function: io (7 samples, 12.07%)|"), std::string::npos) << got;
  EXPECT_NE(got.find("url=?x=50&amp;y=53.0|"), std::string::npos) << got;
  // read is 5 of io's 7 samples.
  EXPECT_NE(got.find("hover2=Function: read (5 samples, 8.62%) [71.43% of zoomed frame]|"), std::string::npos) << got;
  EXPECT_NE(got.find("relu=hide|"), std::string::npos) << got;
  EXPECT_NE(got.find("readw=842.9|"), std::string::npos) << got;  // 5/7 of 1180 px
  // run (54) contains relu and read: nested matches count once, 54/58.
  EXPECT_NE(got.find("matched=Matched: 93.1% (100.0% of zoomed)|"), std::string::npos) << got;
  EXPECT_NE(got.find("relu2=,iow=142.4|"), std::string::npos) << got;
  EXPECT_NE(got.find("matched2=Matched: 93.1%|"), std::string::npos) << got;
  EXPECT_NE(got.find("url2=?s=%5Er"), std::string::npos) << got;
}

}  // namespace
}  // namespace fg
