// Golden reports (text, JSON, CSV) for the committed real recording, and the
// CLI: `fgtool report`, `fgtool rules`. Re-bless with FGTOOL_BLESS=1.
#include "categories/category_report.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "folded/folded_reader.h"
#include "test_support.h"

using namespace fg;
using fg::test::run_shell;
using fg::test::shell_quote;

namespace {

bool blessing() {
  const char* b = std::getenv("FGTOOL_BLESS");
  return b && *b && std::string(b) != "0";
}

void check_golden(const std::string& actual, const std::string& golden_rel) {
  std::string path = fg::test::testdata(golden_rel);
  if (blessing()) {
    fg::test::write_file(path, actual);
    return;
  }
  std::string want = fg::test::read_file(path);
  EXPECT_EQ(actual, want) << "golden " << golden_rel << " differs; re-bless with FGTOOL_BLESS=1 after review";
}

CategoryReport dwarf_report() {
  CategoryRules rules = CategoryRules::defaults();
  CategoryMatcher matcher(rules);
  FoldedProfile p;
  read_folded(fg::test::testdata("categories/libtorch_dwarf.folded"), p);
  ProfileCategories pc(p, matcher);
  return build_category_report(pc, 5, "libtorch_dwarf.folded");
}

}  // namespace

TEST(CategoryReport, GoldenText) { check_golden(format_report_text(dwarf_report()), "categories/golden/libtorch_dwarf.report.txt"); }

TEST(CategoryReport, GoldenJson) {
  std::string json = format_report_json(dwarf_report());
  check_golden(json, "categories/golden/libtorch_dwarf.report.json");
  auto j = nlohmann::json::parse(json);
  EXPECT_EQ(j["schema"], "fgtool-category-report/1");
  double sum = 0;
  for (const auto& c : j["resource"]) sum += c["self_share"].get<double>();
  EXPECT_NEAR(sum, 1.0, 1e-4);
  EXPECT_EQ(j["matrix"]["weight"].size(), j["phase"].size());
  EXPECT_EQ(j["matrix"]["weight"][0].size(), j["resource"].size());
}

CategoryReport report_of(const std::string& folded) {
  static CategoryRules rules = CategoryRules::defaults();
  static CategoryMatcher matcher(rules);
  static FoldedProfile p;
  p = FoldedProfile();
  std::string path = fg::test::temp_dir() + "/x.folded";
  fg::test::write_file(path, folded);
  read_folded(path, p);
  static std::unique_ptr<ProfileCategories> pc;
  pc = std::make_unique<ProfileCategories>(p, matcher);
  return build_category_report(*pc, 5, "x.folded");
}

// Rows by share (largest first, "other" last); the top finding names its
// knob: OpenBLAS's own threads point at OPENBLAS_NUM_THREADS, not OpenMP's.
TEST(CategoryReport, RowsByShareAndFindingsNameTheKnob) {
  std::string blas = "t;clone3;start_thread;blas_thread_server;__GI_sched_yield;entry_SYSCALL_64_after_hwframe 60\n"
                     "t;main;_dl_start;_dl_relocate_object;do_lookup_x 10\n"
                     "t;main;at::linear;sgemm_kernel_SKYLAKEX 25\n"
                     "t;main;mystery_function 5\n";
  CategoryReport r = report_of(blas);
  std::string text = format_report_text(r);
  size_t b = text.find("\nblas-threads"), g = text.find("\ngemm"), d = text.find("\ndynamic-linker"),
         o = text.find("\nother");
  ASSERT_NE(b, std::string::npos) << text;
  ASSERT_NE(d, std::string::npos) << text;  // the dynamic linker, not "loader"
  EXPECT_EQ(text.find("\nloader"), std::string::npos) << text;
  EXPECT_LT(b, g);
  EXPECT_LT(g, d);
  EXPECT_LT(d, o);
  std::vector<std::string> f = report_findings(r);
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f[0].rfind("60.0% of the profile is OpenBLAS", 0), 0u) << f[0];
  EXPECT_NE(f[0].find("OPENBLAS_NUM_THREADS=1"), std::string::npos) << f[0];
  EXPECT_NE(text.find("=> 60.0% of the profile is OpenBLAS"), std::string::npos) << text;

  // OpenMP waiting: OMP_NUM_THREADS; an unresolved object that matters is
  // named with how to get its symbols; cut-short stacks with the fix.
  CategoryReport omp = report_of("t;clone3;start_thread;[libgomp.so.1.0.0] 63\n"
                                 "t;[unknown];main;at::linear;sgemm_kernel_SKYLAKEX 30\n"
                                 "t;main;at::linear;[libtorch_cpu.so.1.13.0] 2\n"
                                 "t;main;work 5\n");
  f = report_findings(omp);
  ASSERT_EQ(f.size(), 3u);
  EXPECT_NE(f[0].find("63.0% of the profile is OpenMP"), std::string::npos) << f[0];
  EXPECT_NE(f[0].find("OMP_NUM_THREADS=1"), std::string::npos) << f[0];
  EXPECT_NE(f[1].find("63.0% in [libgomp.so.1.0.0]"), std::string::npos) << f[1];
  EXPECT_EQ(f[1].find("libtorch_cpu"), std::string::npos) << f[1];  // 2% does not matter
  EXPECT_NE(f[1].find("-dbgsym"), std::string::npos) << f[1];
  EXPECT_NE(f[1].find("--symfs"), std::string::npos) << f[1];
  EXPECT_NE(f[1].find("DEBUGINFOD_URLS"), std::string::npos) << f[1];
  EXPECT_NE(f[2].find("30.0% is in stacks cut short"), std::string::npos) << f[2];
  EXPECT_NE(f[2].find("--stack-size"), std::string::npos) << f[2];
  auto j = nlohmann::json::parse(format_report_json(omp));
  EXPECT_NEAR(j["cut_short_share"].get<double>(), 0.30, 1e-6);
  EXPECT_EQ(j["unresolved_objects"][0]["frame"], "[libgomp.so.1.0.0]");
  EXPECT_EQ(j["findings"].size(), 3u);
}

TEST(CategoryReport, CsvHasOneRowPerShare) {
  CategoryReport r = dwarf_report();
  std::string csv = format_report_csv(r);
  EXPECT_EQ(csv.rfind("section,kind,category,key,weight,share\n", 0), 0u);
  size_t share_rows = 0, pos = 0;
  while ((pos = csv.find("\nshare,", pos)) != std::string::npos) ++share_rows, ++pos;
  EXPECT_EQ(share_rows, 2 * (r.resource.size() + r.phase.size()));
  // Function names with commas are quoted.
  EXPECT_NE(csv.find("\"torch::data::Iterator<torch::data::Example<at::Tensor, at::Tensor> >::operator++\""),
            std::string::npos);
}

TEST(CategoryReport, DiffAgainstItselfIsZeroAndAgainstFpMoves) {
  CategoryReport a = dwarf_report();
  std::string text = format_category_diff_text(a, a);
  EXPECT_EQ(text.find("+0.1 pts"), std::string::npos);
  EXPECT_NE(text.find("+0.0 pp"), std::string::npos);
  auto j = nlohmann::json::parse(format_category_diff_json(a, a));
  for (const auto& row : j["resource"]) EXPECT_EQ(row["change_points"].get<double>(), 0.0);

  CategoryRules rules = CategoryRules::defaults();
  CategoryMatcher matcher(rules);
  FoldedProfile p;
  read_folded(fg::test::testdata("categories/libtorch_fp.folded"), p);
  ProfileCategories pc(p, matcher);
  CategoryReport b = build_category_report(pc, 5, "libtorch_fp.folded");
  auto lines = category_diff_summary(a, b, 4);
  ASSERT_EQ(lines.size(), 4u);
  // Largest change first: the FP recording cannot attribute OpenBLAS spinning to the pool.
  EXPECT_EQ(lines[0].rfind("sync ", 0), 0u) << lines[0];
}

TEST(CategoryReportCli, ReportFormatsAndErrors) {
  std::string bin = fg::test::fgtool_bin();
  std::string in = fg::test::testdata("categories/libtorch_dwarf.folded");
  auto r = run_shell(shell_quote(bin) + " report " + shell_quote(in) + " --format json");
  ASSERT_EQ(r.status, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_GT(j["total"].get<double>(), 0);
  r = run_shell(shell_quote(bin) + " report " + shell_quote(in) + " --top 2");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("RESOURCE x PHASE"), std::string::npos);
  r = run_shell(shell_quote(bin) + " report " + shell_quote(in) + " --format xml");
  EXPECT_EQ(r.status, 2);

  std::string dir = fg::test::temp_dir();
  fg::test::write_file(dir + "/bad.json",
                       R"({"rules": [{"name": "my-gemm", "kind": "resource", "color": "#000000", "symbols": 7}]})");
  r = run_shell(shell_quote(bin) + " report " + shell_quote(in) + " --rules " + shell_quote(dir + "/bad.json"));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("bad.json: rule 1 'my-gemm': \"symbols\" must be an array of strings"), std::string::npos) << r.err;

  // A user rule moves time between categories.
  fg::test::write_file(dir + "/mine.json", R"({"rules": [{"name": "decode", "kind": "resource", "color": "#ff0000",
      "symbols": ["*SyntheticImages::get*"]}]})");
  r = run_shell(shell_quote(bin) + " report " + shell_quote(in) + " -f csv --rules " + shell_quote(dir + "/mine.json"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("share,resource,decode,self,"), std::string::npos);
}

TEST(CategoryReportCli, RulesPrintsReadableEffectiveRules) {
  std::string bin = fg::test::fgtool_bin();
  auto r = run_shell(shell_quote(bin) + " rules");
  ASSERT_EQ(r.status, 0) << r.err;
  CategoryRules back = CategoryRules::parse(r.out, "printed");
  EXPECT_EQ(back.rules().size(), CategoryRules::defaults().rules().size());
  r = run_shell(shell_quote(bin) + " rules --classify '[libgomp.so.1.0.0]' sgemm_kernel_SKYLAKEX");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("[libgomp.so.1.0.0]\tresource=omp"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sgemm_kernel_SKYLAKEX\tresource=gemm"), std::string::npos) << r.out;
}

TEST(CategoryReportCli, SvgColorsByCategoryAndDiffByCategory) {
  std::string bin = fg::test::fgtool_bin();
  std::string a = fg::test::testdata("categories/libtorch_fp.folded");
  std::string b = fg::test::testdata("categories/libtorch_dwarf.folded");
  std::string dir = fg::test::temp_dir();
  auto r = run_shell(shell_quote(bin) + " svg --colors category " + shell_quote(b) + " -o " + shell_quote(dir + "/c.svg"));
  ASSERT_EQ(r.status, 0) << r.err;
  std::string svg = fg::test::read_file(dir + "/c.svg");
  EXPECT_EQ(fg::test::xml_wellformed_error(svg), "");
  EXPECT_NE(svg.find("gemm"), std::string::npos);
  EXPECT_NE(svg.find("#0e64ac"), std::string::npos);  // the gemm colour (legend swatch)

  r = run_shell(shell_quote(bin) + " diff --by category " + shell_quote(a) + " " + shell_quote(b));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("sync               24.5%    0.1%   -24.4 pp"), std::string::npos) << r.out;
  r = run_shell(shell_quote(bin) + " diff --by category --format json " + shell_quote(a) + " " + shell_quote(b));
  ASSERT_EQ(r.status, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"], "fgtool-category-diff/1");
  r = run_shell(shell_quote(bin) + " diff --by category " + shell_quote(a) + " " + shell_quote(b) + " -o " +
                shell_quote(dir + "/d.svg"));
  ASSERT_EQ(r.status, 0) << r.err;
  svg = fg::test::read_file(dir + "/d.svg");
  EXPECT_EQ(fg::test::xml_wellformed_error(svg), "");
  EXPECT_NE(svg.find("sync 24.5% -&gt; 0.1% (-24.4 pp)"), std::string::npos);
}

// oneDNN verbose logs fold as PRIMITIVE;IMPLEMENTATION;SHAPE: the primitive
// decides the category, the same ones perf.data frames of those kernels get.
TEST(CategoryReportCli, OnednnVerbosePrimitivesHaveCategories) {
  std::string bin = fg::test::fgtool_bin();
  struct Case {
    const char* log;
    const char* top;
  } cases[] = {{"traces/onednn_v2_conv.log", "eltwise"}, {"traces/onednn_v3.log", "gemm"},
               {"traces/dnnl_v1.log", "gemm"}, {"traces/mkldnn_v0.log", "conv"}};
  for (const Case& c : cases) {
    auto r = run_shell(shell_quote(bin) + " report --format json " + shell_quote(fg::test::testdata(c.log)));
    ASSERT_EQ(r.status, 0) << c.log << ": " << r.err;
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["other_share"]["resource"].get<double>(), 0.0) << c.log << "\n" << r.out.substr(0, 2000);
    std::string top;
    double best = -1;
    for (const auto& s : j["resource"])
      if (s["self_share"].get<double>() > best) {
        best = s["self_share"].get<double>();
        top = s["name"];
      }
    EXPECT_EQ(top, c.top) << c.log;
  }
  auto r = run_shell(shell_quote(bin) + " rules --classify convolution inner_product matmul reorder pooling "
                                        "batch_normalization layer_normalization softmax eltwise");
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* want : {"convolution\tresource=conv", "inner_product\tresource=gemm", "matmul\tresource=gemm",
                           "reorder\tresource=eltwise", "pooling\tresource=eltwise",
                           "batch_normalization\tresource=eltwise", "layer_normalization\tresource=eltwise",
                           "softmax\tresource=eltwise", "eltwise\tresource=eltwise"})
    EXPECT_NE(r.out.find(want), std::string::npos) << want << "\n" << r.out;
}

// `fold -o x.folded && report x.folded` keeps the unit (a first line that
// flamegraph.pl skips); stdout stays the drop-in format; tables are in ms/s.
TEST(CategoryReportCli, UnitsSurviveTheFoldedRoundTrip) {
  std::string bin = fg::test::fgtool_bin();
  std::string dir = fg::test::temp_dir();
  std::string data = fg::test::testdata("fold/fp_static.data");
  auto r = run_shell(shell_quote(bin) + " fold " + shell_quote(data) + " -o " + shell_quote(dir + "/x.folded"));
  ASSERT_EQ(r.status, 0) << r.err;
  std::string folded = fg::test::read_file(dir + "/x.folded");
  EXPECT_EQ(folded.rfind("# fgtool units=ns\n", 0), 0u) << folded.substr(0, 200);
  r = run_shell(shell_quote(bin) + " fold " + shell_quote(data));
  EXPECT_EQ(r.out.find("# fgtool"), std::string::npos);
  EXPECT_EQ(r.out, folded.substr(folded.find('\n') + 1));  // otherwise byte-identical
  r = run_shell(shell_quote(bin) + " report " + shell_quote(dir + "/x.folded"));
  ASSERT_EQ(r.status, 0) << r.err;
  std::string first = r.out.substr(0, r.out.find('\n'));
  EXPECT_NE(first.find(" ns)"), std::string::npos) << first;
  EXPECT_NE(first.find(" ms ("), std::string::npos) << first;
  EXPECT_EQ(r.out.find("samples)"), std::string::npos) << first;
  EXPECT_NE(r.out.find("SELF TIME"), std::string::npos) << r.out;
  r = run_shell(shell_quote(bin) + " report --format json " + shell_quote(dir + "/x.folded"));
  EXPECT_EQ(nlohmann::json::parse(r.out)["units"], "ns");
  // A folded file from another tool: samples unless told.
  fg::test::write_file(dir + "/foreign.folded", "app;main;work 10\n");
  r = run_shell(shell_quote(bin) + " report --unit us " + shell_quote(dir + "/foreign.folded"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("(10 us)"), std::string::npos) << r.out.substr(0, 200);
  r = run_shell(shell_quote(bin) + " report " + shell_quote(dir + "/x.folded") + " " + shell_quote(dir + "/foreign.folded"));
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("different units"), std::string::npos) << r.err;
}

// diff of two units: time converted (with a note), raw counts of a count
// and a time refused.
TEST(CategoryReportCli, DiffOfDifferentUnitsIsNeverSilent) {
  std::string bin = fg::test::fgtool_bin();
  std::string dir = fg::test::temp_dir();
  fg::test::write_file(dir + "/us.folded", "# fgtool units=us\nm;x 2\n");
  fg::test::write_file(dir + "/ns.folded", "# fgtool units=ns\nm;x 1000\n");
  fg::test::write_file(dir + "/plain.folded", "m;x 7\n");
  auto r = run_shell(shell_quote(bin) + " diff --no-normalize --format folded " + shell_quote(dir + "/us.folded") + " " +
                     shell_quote(dir + "/ns.folded"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "m;x 2000 1000\n");
  EXPECT_NE(r.err.find("converted to ns"), std::string::npos) << r.err;
  r = run_shell(shell_quote(bin) + " diff --no-normalize --format folded " + shell_quote(dir + "/plain.folded") + " " +
                shell_quote(dir + "/ns.folded"));
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("plain.folded is in samples"), std::string::npos) << r.err;
}
