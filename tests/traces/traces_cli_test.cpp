// The CLI paths into lib/traces: `fgtool fold` on trace JSON and oneDNN logs,
// the loaders behind svg/report/diff, `fgtool report --onednn-verbose`,
// `fgtool export`, and a live `mlp_train --trace` when the trainers are built.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "trace_test_util.h"

namespace fg::test {
namespace {

std::string fgtool(const std::string& args) { return shell_quote(fgtool_bin()) + " " + args; }
std::string td(const std::string& name) { return shell_quote(testdata("traces/" + name)); }

TEST(TracesCli, FoldDetectsTraceJsonAndOnednnLogs) {
  auto r = run_shell(fgtool("fold " + td("nested.json")));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, read_file(testdata("traces/nested.folded")));
  EXPECT_EQ(r.err, "");
  r = run_shell(fgtool("fold --onednn-verbose " + td("onednn_v3.log")));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, read_file(testdata("traces/onednn_v3.folded")));
  r = run_shell(fgtool("fold " + td("onednn_v2_conv.log")));  // detected without the flag
  EXPECT_EQ(r.out, read_file(testdata("traces/onednn_v2_conv.folded")));
  r = run_shell(fgtool("fold " + td("begin_end_open_array.json")));
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.err.find("not closed"), std::string::npos) << r.err;
}

TEST(TracesCli, FoldReportsBadTracesWithByteOffsets) {
  std::string bad = temp_input("cli_bad.json", R"({"traceEvents": [{"name":"x","ph":"X","ts":"1","dur":2}]})");
  auto r = run_shell(fgtool("fold " + shell_quote(bad)));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("cli_bad.json: byte 17: event 'x' (ph 'X'): \"ts\" is a string"), std::string::npos) << r.err;
  r = run_shell(fgtool("fold --partial " + shell_quote(bad)));  // --partial = lenient for traces
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("1 events with bad fields skipped"), std::string::npos) << r.err;
  std::string cut = temp_input("cli_cut.json", R"({"traceEvents": [{"name":"x","ph":"X","ts":1,"d)");
  r = run_shell(fgtool("fold " + shell_quote(cut)));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("byte 47: malformed JSON"), std::string::npos) << r.err;
  r = run_shell(fgtool("fold --onednn-verbose " + td("nested.folded")));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("no oneDNN verbose lines"), std::string::npos) << r.err;
}

TEST(TracesCli, SvgReportDiffReadTraces) {
  std::string dir = temp_dir();
  auto r = run_shell(fgtool("svg " + td("mlp_train_trace.json") + " -o " + dir + "/t.svg"));
  ASSERT_EQ(r.status, 0) << r.err;
  std::string svg = read_file(dir + "/t.svg");
  EXPECT_EQ(xml_wellformed_error(svg), "");
  EXPECT_NE(svg.find("aten::addmm"), std::string::npos);
  r = run_shell(fgtool("svg " + td("onednn_v2_conv.log") + " -o " + dir + "/o.svg"));
  EXPECT_EQ(r.status, 0) << r.err;
  r = run_shell(fgtool("report " + td("mlp_train_trace.json")));
  EXPECT_EQ(r.status, 0) << r.err;
  r = run_shell(fgtool("diff " + td("nested.json") + " " + td("mlp_train_trace.json") + " -o " + dir + "/d.svg"));
  EXPECT_EQ(r.status, 0) << r.err;
}

TEST(TracesCli, ReportOnednnVerbose) {
  auto r = run_shell(fgtool("report --onednn-verbose " + td("dnnl_v1.log") + " " + td("mkldnn_v0.log")));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("convolution"), std::string::npos);
  EXPECT_NE(r.out.find("jit:avx512_common"), std::string::npos);
  EXPECT_NE(r.err.find("1 malformed exec lines skipped"), std::string::npos) << r.err;
  r = run_shell(fgtool("report --onednn-verbose -f json " + td("onednn_v2_conv.log")));
  ASSERT_EQ(r.status, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["executions"], 22);
  double sum = 0;
  for (const auto& p : j["primitives"]) sum += p["us"].get<double>();
  EXPECT_NEAR(sum, j["total_us"].get<double>(), 1e-6);
}

TEST(TracesCli, ExportEveryFormatFromEveryInputKind) {
  std::string dir = temp_dir();
  std::vector<std::string> inputs = {td("nested.json"), td("onednn_v3.log"), shell_quote(testdata("folded/small.folded")),
                                     shell_quote(testdata("fold/fp_static.data"))};
  for (const auto& in : inputs) {
    SCOPED_TRACE(in);
    auto folded = run_shell(fgtool("fold " + in));
    if (in.find(".folded") != std::string::npos) folded.out = read_file(testdata("folded/small.folded"));
    auto r = run_shell(fgtool("export -f speedscope " + in + " -o " + dir + "/s.json"));
    ASSERT_EQ(r.status, 0) << r.err;
    nlohmann::json s = nlohmann::json::parse(read_file(dir + "/s.json"));
    EXPECT_EQ(s["$schema"], "https://www.speedscope.app/file-format-schema.json");
    r = run_shell(fgtool("export -f d3 " + in));
    ASSERT_EQ(r.status, 0) << r.err;
    nlohmann::json d = nlohmann::json::parse(r.out);
    // The root's value is the input's total, as `fgtool fold` gives it.
    double total = 0;
    size_t pos = 0;
    while ((pos = folded.out.find('\n', pos)) != std::string::npos) {
      size_t sp = folded.out.rfind(' ', pos);
      total += std::stod(folded.out.substr(sp + 1, pos - sp - 1));
      ++pos;
    }
    EXPECT_NEAR(d["value"].get<double>(), total, 1e-9 * total);
    r = run_shell(fgtool("export -f pprof-text --min-percent 1 " + in));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("total%"), std::string::npos);
  }
  auto r = run_shell(fgtool("export -f flamegraph " + td("nested.json")));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("expected speedscope, d3 or pprof-text"), std::string::npos) << r.err;
  r = run_shell(fgtool("export " + td("nested.json")));
  EXPECT_EQ(r.status, 2);
  r = run_shell(fgtool("help export"));
  EXPECT_NE(r.out.find("speedscope.app"), std::string::npos);
}

// A live trace from the libtorch trainer (built with -DFGTOOL_BUILD_APPS=ON;
// FGTOOL_MLP_TRAIN names another build's binary).
TEST(TracesCli, LiveMlpTrainTraceFolds) {
  std::string bin = std::getenv("FGTOOL_MLP_TRAIN") ? std::getenv("FGTOOL_MLP_TRAIN")
                                                    : std::string(FGTOOL_BINARY_DIR) + "/bin/mlp_train";
  std::string synth = bin.substr(0, bin.rfind('/')) + "/mnist_synth";
  if (access(bin.c_str(), X_OK) != 0 || access(synth.c_str(), X_OK) != 0)
    GTEST_SKIP() << "mlp_train not built here (configure with -DFGTOOL_BUILD_APPS=ON): " << bin;
  std::string dir = temp_dir();
  auto r = run_shell(shell_quote(synth) + " --out " + dir + "/mnist --train 512 --test 128");
  ASSERT_EQ(r.status, 0) << r.err;
  r = run_shell(shell_quote(bin) + " --data " + dir + "/mnist --epochs 1 --max-batches 4 --trace-steps 2 --threads 1" +
                " --hidden 32 --trace " + dir + "/t.json");
  ASSERT_EQ(r.status, 0) << r.err;
  r = run_shell(fgtool("fold " + dir + "/t.json"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");  // no unbalanced or overlapping events
  EXPECT_NE(r.out.find(";train_step;forward;"), std::string::npos) << r.out.substr(0, 2000);
  EXPECT_NE(r.out.find(";train_step;backward;"), std::string::npos);
  r = run_shell(fgtool("export -f speedscope " + dir + "/t.json"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["profiles"][0]["unit"], "microseconds");
}

// Options of `fold` that do not fit its inputs are usage errors (exit 2) that
// say what to give instead.
TEST(TracesCli, FoldOptionsThatDoNotFitTheInputs) {
  std::string perf = shell_quote(testdata("perf/dwarf.data"));
  struct Case {
    std::string args, message;
  } cases[] = {
      {"fold --gpu " + perf, "--gpu reads a PyTorch/Kineto trace"},
      {"fold --idle " + td("nested.json"), "--idle and --full-kernel-names need --gpu"},
      {"fold --label host " + td("nested.json") + " " + td("nested.json"), "is not one of rank, file"},
      {"fold " + perf + " " + perf, "one perf.data at a time"},
      {"fold - - < /dev/null", "stdin ('-') can be given once"},
      {"fold " + td("nested.json") + " " + perf, "not a trace"},
  };
  for (const Case& c : cases) {
    auto r = run_shell(fgtool(c.args));
    EXPECT_EQ(r.status, 2) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.args << "\n" << r.err;
  }
}

}  // namespace
}  // namespace fg::test
