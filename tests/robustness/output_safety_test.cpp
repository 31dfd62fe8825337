// Text from the input (frame names, titles, notes, rule names) must never
// break out of its place in the output: every SVG fgtool writes stays
// well-formed with no element or script but its own, and every JSON parses,
// whatever the names contain (markup, CDATA ends, comments, quotes,
// ampersands, control characters, invalid UTF-8).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "test_support.h"

using namespace fg::test;

namespace {

const char* const kHostileNames[] = {
    "</script><script>alert(1)</script>",
    "]]><g id=\"injected\" onload=\"alert(2)\"/><![CDATA[",
    "<!-- comment --><!--",
    "q\"u'o`te=\"x\" onmouseover=\"alert(3)\"",
    "a&amp;b&c&#x3c;&lt;",
    "ctl\x01\x02\x08\x0b\x0c\x1b[31m\x7f",
    "bad\xff\xfe\xc3(\xe2\x82utf8\xed\xa0\x80",
    "<?xml version=\"1.0\"?><!DOCTYPE x [<!ENTITY e \"boom\">]>&e;",
    "${alert(4)}`+alert(5)+`\\u003c/script\\u003e",
};

std::string hostile_folded(double scale) {
  std::string text;
  int i = 1;
  for (const char* n : kHostileNames) {
    text += std::string("main;") + n + ";leaf" + std::to_string(i) + " " + std::to_string(int(i * scale)) + "\n";
    text += std::string(n) + " " + std::to_string(i) + "\n";  // as a root frame too
    ++i;
  }
  text += "main;ok 10\n";
  return text;
}

size_t count(const std::string& s, const std::string& needle) {
  size_t n = 0;
  for (size_t p = s.find(needle); p != std::string::npos; p = s.find(needle, p + 1)) ++n;
  return n;
}

// Checks one SVG: well-formed, and the same number of script elements,
// comments, CDATA sections and injected ids as fgtool's own output for
// harmless names (`reference`).
void expect_safe_svg(const std::string& svg, const std::string& reference, const std::string& what) {
  SCOPED_TRACE(what);
  ASSERT_FALSE(svg.empty());
  EXPECT_EQ(xml_wellformed_error(svg), "");
  for (const char* tag : {"<script", "</script", "<!--", "<![CDATA[", "]]>", "<!DOCTYPE", "<!ENTITY", "<?xml"})
    EXPECT_EQ(count(svg, tag), count(reference, tag)) << tag;
  EXPECT_EQ(count(svg, "id=\"injected\""), 0u);
  EXPECT_EQ(count(svg, "onload=\""), count(reference, "onload=\""));
  EXPECT_EQ(count(svg, "onmouseover=\""), count(reference, "onmouseover=\""));
  for (char c : svg) {
    unsigned char u = static_cast<unsigned char>(c);
    EXPECT_FALSE(u < 0x20 && c != '\n' && c != '\t' && c != '\r') << "control byte " << int(u) << " in the SVG";
    if (u < 0x20 && c != '\n' && c != '\t' && c != '\r') break;
  }
}

struct Files {
  std::string dir, hostile, hostile2, plain, plain2;
};

Files make_files() {
  Files f;
  f.dir = temp_dir();
  f.hostile = f.dir + "/hostile.folded";
  f.hostile2 = f.dir + "/hostile2.folded";
  f.plain = f.dir + "/plain.folded";
  f.plain2 = f.dir + "/plain2.folded";
  write_file(f.hostile, hostile_folded(1));
  write_file(f.hostile2, hostile_folded(3));
  std::string plain, plain2;
  for (int i = 1; i <= 9; ++i) {
    plain += "main;name" + std::to_string(i) + ";leaf" + std::to_string(i) + " " + std::to_string(i) + "\n";
    plain += "name" + std::to_string(i) + " " + std::to_string(i) + "\n";
    plain2 += "main;name" + std::to_string(i) + ";leaf" + std::to_string(i) + " " + std::to_string(3 * i) + "\n";
    plain2 += "name" + std::to_string(i) + " " + std::to_string(i) + "\n";
  }
  write_file(f.plain, plain + "main;ok 10\n");
  write_file(f.plain2, plain2 + "main;ok 10\n");
  return f;
}

std::string run_ok(const std::string& args) {
  auto r = run_shell(shell_quote(fgtool_bin()) + " " + args);
  EXPECT_EQ(r.status, 0) << args << "\n" << r.err;
  return r.out;
}

const std::string kHostileTitle = "</title><script>alert(6)</script>]]><!--&\"'\x01\xff";

}  // namespace

TEST(OutputSafety, SvgWithHostileNamesTitleAndNotes) {
  Files f = make_files();
  std::string opts = " --title " + shell_quote(kHostileTitle) + " --subtitle " + shell_quote(kHostileTitle) +
                     " --notes " + shell_quote(kHostileTitle) + " --countname " + shell_quote("s<a>mples&");
  std::string svg = run_ok("svg " + shell_quote(f.hostile) + opts);
  std::string ref = run_ok("svg " + shell_quote(f.plain) + " --title T --subtitle S --notes N --countname n");
  expect_safe_svg(svg, ref, "svg");
  // Every variant that draws differently.
  for (const char* v : {" --inverted", " --reverse", " --flamechart", " --hash", " --colors wall", " --colors category"}) {
    std::string s = run_ok("svg " + shell_quote(f.hostile) + opts + v);
    std::string r = run_ok("svg " + shell_quote(f.plain) + " --title T --subtitle S --notes N --countname n" + v);
    expect_safe_svg(s, r, std::string("svg") + v);
  }
}

TEST(OutputSafety, DiffSvgWithHostileNames) {
  Files f = make_files();
  std::string svg = run_ok("diff " + shell_quote(f.hostile) + " " + shell_quote(f.hostile2) + " --title " +
                           shell_quote(kHostileTitle));
  std::string ref = run_ok("diff " + shell_quote(f.plain) + " " + shell_quote(f.plain2) + " --title T");
  expect_safe_svg(svg, ref, "diff");
  std::string cat = run_ok("diff --by category " + shell_quote(f.hostile) + " " + shell_quote(f.hostile2) + " -o " +
                           shell_quote(f.dir + "/cat.svg"));
  std::string catref = run_ok("diff --by category " + shell_quote(f.plain) + " " + shell_quote(f.plain2) + " -o " +
                              shell_quote(f.dir + "/catref.svg"));
  expect_safe_svg(read_file(f.dir + "/cat.svg"), read_file(f.dir + "/catref.svg"), "diff --by category");
}

TEST(OutputSafety, CategorySvgWithHostileRuleNames) {
  Files f = make_files();
  // A rule whose name, category and description are markup, matching hostile frames.
  nlohmann::json rules = {{"version", 1},
                          {"rules",
                           {{{"name", "</script><!--r"},
                             {"category", "]]><g id=\"injected\"/>&"},
                             {"kind", "resource"},
                             {"color", "#123456"},
                             {"description", "<script>alert(7)</script>"},
                             {"symbols", {"*script*", "*CDATA*"}}}}}};
  write_file(f.dir + "/rules.json", rules.dump());
  std::string svg = run_ok("svg --colors category --rules " + shell_quote(f.dir + "/rules.json") + " " +
                           shell_quote(f.hostile));
  std::string ref = run_ok("svg --colors category " + shell_quote(f.plain));
  expect_safe_svg(svg, ref, "svg --colors category --rules");
}

TEST(OutputSafety, JsonOutputsParseWithHostileNames) {
  Files f = make_files();
  for (const std::string& args :
       {"report --format json --top 100 " + shell_quote(f.hostile),
        "diff --by category --format json " + shell_quote(f.hostile) + " " + shell_quote(f.hostile2),
        "export --format speedscope " + shell_quote(f.hostile), "export --format d3 " + shell_quote(f.hostile)}) {
    SCOPED_TRACE(args);
    auto r = run_shell(shell_quote(fgtool_bin()) + " " + args);
    if (r.status != 0 && r.err.find("unknown command") != std::string::npos) continue;  // export not built in
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(nlohmann::json::accept(r.out)) << r.out.substr(0, 400);
    auto j = nlohmann::json::parse(r.out, nullptr, false);
    // The names survive as text (invalid bytes replaced), not as structure.
    if (args.rfind("diff", 0) != 0) {
      EXPECT_NE(j.dump().find("alert(1)"), std::string::npos);
    }
  }
}

TEST(OutputSafety, FoldedOutputKeepsOneStackPerLine) {
  // Names cannot contain ';' or '\n' after reading, so re-folding keeps the
  // stack count: no name can split into two stacks or frames.
  Files f = make_files();
  std::string out = run_ok("diff --format folded " + shell_quote(f.hostile) + " " + shell_quote(f.hostile2));
  EXPECT_EQ(count(out, "\n"), 19u) << out;
}
