// oneDNN verbose logs: every layout (MKL-DNN 0.x, DNNL 1.x, oneDNN 2.x with
// and without timestamps, oneDNN 3.x) against goldens from
// testdata/traces/onednn_ref.py, line-level parsing, and the report summary.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "diagnostics/input_error.h"
#include "trace_test_util.h"
#include "traces/onednn_verbose.h"

namespace fg::test {
namespace {

TEST(OnednnVerbose, GoldenFoldsOfEveryLayout) {
  for (std::string name : {"onednn_v2_conv", "onednn_v2_conv_timestamp", "mkldnn_v0", "dnnl_v1", "onednn_v3"}) {
    SCOPED_TRACE(name);
    OnednnVerboseStats st;
    FoldedProfile p = fold_onednn_verbose(testdata("traces/" + name + ".log"), &st);
    EXPECT_EQ(folded_text(p), read_file(testdata("traces/" + name + ".folded")));
    EXPECT_EQ(p.units, "us");
    EXPECT_NEAR(p.total(), st.total_ms * 1000, 1e-6 * p.total());
  }
}

TEST(OnednnVerbose, RealLogsWithAndWithoutTimestampHaveTheSameShape) {
  OnednnVerboseStats a, b;
  FoldedProfile pa = fold_onednn_verbose(testdata("traces/onednn_v2_conv.log"), &a);
  FoldedProfile pb = fold_onednn_verbose(testdata("traces/onednn_v2_conv_timestamp.log"), &b);
  EXPECT_EQ(a.exec_lines, 22u);
  EXPECT_EQ(b.exec_lines, 22u);
  EXPECT_EQ(a.not_verbose, 1u);  // the program's "ok"
  EXPECT_EQ(a.other_verbose, 5u);  // info lines incl. the template
  auto ma = stack_map(pa), mb = stack_map(pb);
  ASSERT_EQ(ma.size(), mb.size());
  for (auto ia = ma.begin(), ib = mb.begin(); ia != ma.end(); ++ia, ++ib) EXPECT_EQ(ia->first, ib->first);
}

TEST(OnednnVerbose, LineCounts) {
  OnednnVerboseStats st;
  fold_onednn_verbose(testdata("traces/dnnl_v1.log"), &st);
  EXPECT_EQ(st.exec_lines, 5u);
  EXPECT_EQ(st.malformed, 1u);  // the cut last line
  EXPECT_EQ(st.not_verbose, 1u);
  ASSERT_EQ(st.warnings().size(), 1u);
  EXPECT_NE(st.warnings()[0].find("dnnl_v1.log:10:"), std::string::npos) << st.warnings()[0];
  fold_onednn_verbose(testdata("traces/onednn_v3.log"), &st);
  EXPECT_EQ(st.exec_lines, 2u);
  EXPECT_EQ(st.other_verbose, 6u);  // info x2, template, create, exec:check, graph exec
}

TEST(OnednnVerbose, ParsesEachLayout) {
  struct Case {
    std::vector<std::string> lines;  // the last one is checked
    std::string engine, primitive, impl, prop, problem;
    double ms;
  } cases[] = {
      {{"mkldnn_verbose,exec,reorder,jit:uni,undef,in:f32_nhwc out:f32_nchw,num:1,800x1x15x200,1.9912"},
       "", "reorder", "jit:uni", "undef", "800x1x15x200", 1.9912},
      {{"dnnl_verbose,exec,cpu,eltwise,jit:avx2,forward_training,data_f32::blocked:abcd:f0 diff_undef::undef::f0,,"
        "alg:eltwise_relu alpha:0 beta:0,128x14x14x64,0.614014"},
       "cpu", "eltwise", "jit:avx2", "forward_training", "128x14x14x64", 0.614014},
      {{"onednn_verbose,1795317209571.116943,exec,cpu,convolution,jit:avx512_core,forward_training,src_f32::blocked:"
        "abcd:f0,attr-scratchpad:user ,alg:convolution_direct,mb2_ic3oc8_ih16oh16kh3sh1dh0ph1_iw16ow16kw3sw1dw0pw1,56.3271"},
       "cpu", "convolution", "jit:avx512_core", "forward_training", "mb2_ic3oc8_ih16oh16kh3sh1dh0ph1_iw16ow16kw3sw1dw0pw1",
       56.3271},
      {{"onednn_verbose,primitive,exec,cpu,convolution,ref:any,forward_training,src_f32:p:blocked:aBcd16b::f0,,"
        "alg:convolution_direct,mb2_ic23oc19_ih13oh13kh1sh1dh0ph0_iw13ow13kw1sw1dw0pw0,4.351"},
       "cpu", "convolution", "ref:any", "forward_training", "mb2_ic23oc19_ih13oh13kh1sh1dh0ph0_iw13ow13kw1sw1dw0pw0", 4.351},
      {{"onednn_verbose,v1,primitive,exec,gpu,matmul,jit:gemm:any,undef,src:f16::blocked:ab::f0 wei:f16::blocked:ba::f0,"
        "attr-scratchpad:user,,22x2048:2048x8192,0.880127"},
       "gpu", "matmul", "jit:gemm:any", "undef", "22x2048:2048x8192", 0.880127},
      // gemm_api lines have an empty implementation.
      {{"onednn_verbose,exec,cpu,gemm_api,,undef,src_f32::blocked:ab:f0 wei_f32::blocked:ab:f0,,1x512:512x512,0.359131"},
       "cpu", "gemm_api", "", "undef", "1x512:512x512", 0.359131},
      // A template line that places an extra field before the problem: followed.
      {{"onednn_verbose,info,prim_template:operation,engine,primitive,implementation,prop_kind,memory_descriptors,"
        "attributes,auxiliary,future_field,problem_desc,exec_time",
        "onednn_verbose,exec,cpu,pooling,jit:avx,forward_inference,src_f32 dst_f32,,alg:pooling_max,NEW,mb1ic8_ih4oh2,0.5"},
       "cpu", "pooling", "jit:avx", "forward_inference", "mb1ic8_ih4oh2", 0.5},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.lines.back());
    OnednnVerboseParser parser;
    OnednnExec e;
    OnednnVerboseParser::Kind k = OnednnVerboseParser::Kind::NotVerbose;
    for (const auto& l : c.lines) k = parser.parse(l, e);
    ASSERT_EQ(k, OnednnVerboseParser::Kind::Exec) << parser.error();
    EXPECT_EQ(e.engine, c.engine);
    EXPECT_EQ(e.primitive, c.primitive);
    EXPECT_EQ(e.implementation, c.impl);
    EXPECT_EQ(e.prop_kind, c.prop);
    EXPECT_EQ(e.problem, c.problem);
    EXPECT_DOUBLE_EQ(e.time_ms, c.ms);
  }
}

TEST(OnednnVerbose, NonExecAndMalformedLines) {
  OnednnVerboseParser parser;
  OnednnExec e;
  using K = OnednnVerboseParser::Kind;
  EXPECT_EQ(parser.parse("epoch 1 loss 0.3", e), K::NotVerbose);
  EXPECT_EQ(parser.parse("xonednn_verbose,exec,cpu", e), K::NotVerbose);
  EXPECT_EQ(parser.parse("onednn_verbose,info,oneDNN v2.6.3 (commit N/A)", e), K::Other);
  EXPECT_EQ(parser.parse("dnnl_verbose,create:cache_hit,cpu,convolution,jit:avx2,forward,a,,b,mb1,0.1", e), K::Other);
  EXPECT_EQ(parser.parse("onednn_verbose,primitive,exec:check,primitive,unused argument,src/x.cpp:74", e), K::Other);
  EXPECT_EQ(parser.parse("onednn_verbose,graph,exec,cpu,100002,sdp,,in0,fpm:strict,dnnl_backend,0.5", e), K::Other);
  EXPECT_EQ(parser.parse("onednn_verbose,exec,cpu,convolution", e), K::Malformed);
  EXPECT_EQ(parser.parse("onednn_verbose,exec,cpu,reorder,jit:uni,undef,a b,,,2x3,fast", e), K::Malformed);
  EXPECT_NE(parser.error().find("'fast'"), std::string::npos) << parser.error();
  EXPECT_EQ(parser.parse("onednn_verbose,exec,cpu,reorder,jit:uni,undef,a b,,,2x3,-1", e), K::Malformed);
  EXPECT_EQ(parser.parse("onednn_verbose,exec,cpu,reorder,jit:uni,undef,a b,,,2x3,1e999", e), K::Malformed);
  EXPECT_EQ(parser.parse("onednn_verbose,exec,cpu,,jit:uni,undef,a b,,,2x3,1", e), K::Malformed);
  EXPECT_EQ(parser.parse(std::string("onednn_verbose,exec,") + std::string(100000, ','), e), K::Malformed);
}

TEST(OnednnVerbose, FileWithoutVerboseLinesIsAnError) {
  std::string path = temp_input("plain.txt", "hello\nworld\n");
  try {
    fold_onednn_verbose(path);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no oneDNN verbose lines"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("plain.txt"), std::string::npos) << e.what();
  }
  // A line far longer than any real one: counted, no crash.
  OnednnVerboseStats st;
  std::string huge = "onednn_verbose,exec,cpu,reorder,jit:uni,undef," + std::string(200000, 'x') + ",,,2x3,1\n" +
                     read_file(testdata("traces/mkldnn_v0.log"));
  fold_onednn_verbose(temp_input("huge.log", huge), &st);
  EXPECT_EQ(st.malformed, 1u);
  EXPECT_EQ(st.exec_lines, 5u);
}

TEST(OnednnVerbose, SummaryPerPrimitiveAndImplementation) {
  OnednnVerboseStats st;
  OnednnSummary s = summarize_onednn_verbose({testdata("traces/dnnl_v1.log"), testdata("traces/mkldnn_v0.log")}, &st);
  EXPECT_EQ(s.count, 10u);
  EXPECT_EQ(st.exec_lines, 10u);
  EXPECT_DOUBLE_EQ(s.total_us, (2000 + 8000 + 250) + (500 + 7500 + 125));
  ASSERT_EQ(s.primitives.size(), 4u);
  // convolution 2000 (dnnl) + 7500 (mkldnn) first, then matmul 8000, reorder 500, eltwise 375.
  EXPECT_EQ(s.primitives[0].primitive, "convolution");
  EXPECT_DOUBLE_EQ(s.primitives[0].us, 9500);
  EXPECT_EQ(s.primitives[0].count, 5u);
  EXPECT_EQ(s.primitives[1].primitive, "matmul");
  double sum = 0;
  for (const auto& r : s.primitives) sum += r.us;
  EXPECT_DOUBLE_EQ(sum, s.total_us);
  // Implementations: each primitive's rows add up to the primitive's time.
  for (const auto& p : s.primitives) {
    double part = 0;
    for (const auto& i : s.implementations)
      if (i.primitive == p.primitive) part += i.us;
    EXPECT_DOUBLE_EQ(part, p.us) << p.primitive;
  }
  EXPECT_EQ(s.implementations[0].implementation, "gemm:jit");  // 4000 us of convolution
  EXPECT_DOUBLE_EQ(s.implementations[0].us, 4000);

  nlohmann::json j = nlohmann::json::parse(format_onednn_summary_json(s));
  EXPECT_EQ(j["executions"], 10);
  EXPECT_EQ(j["primitives"][0]["implementations"].size(), 3u);
  std::string text = format_onednn_summary_text(s);
  EXPECT_NE(text.find("jit:avx512_common"), std::string::npos);
  EXPECT_NE(text.find("10 executions"), std::string::npos);
  std::string csv = format_onednn_summary_csv(s);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 4 + long(s.implementations.size()));
}

TEST(OnednnVerbose, Detection) {
  EXPECT_TRUE(looks_like_onednn_verbose("program output\nonednn_verbose,info,oneDNN v2.6.3\n"));
  EXPECT_TRUE(looks_like_onednn_verbose("  mkldnn_verbose,exec,reorder"));
  EXPECT_TRUE(looks_like_onednn_verbose("dnnl_verbose,info,DNNL v1.1.0"));
  EXPECT_FALSE(looks_like_onednn_verbose("main;onednn_verbose,exec 3\n"));
  EXPECT_FALSE(looks_like_onednn_verbose("{\"traceEvents\": []}"));
}

}  // namespace
}  // namespace fg::test

namespace fg::test {
namespace {

// A log with exec lines none of which parse is an error in strict mode (it
// used to give an empty profile and exit 0); lenient accepts it, empty.
TEST(OnednnVerbose, WhollyMalformedLogFailsUnlessLenient) {
  std::string path = temp_input("bad.log",
                                "program output\n"
                                "onednn_verbose,info,oneDNN v3.1\n"
                                "onednn_verbose,exec,cpu,convolution\n"
                                "onednn_verbose,exec,cpu,reorder,jit:uni,undef,a b,,,2x3,fast\n");
  try {
    fold_onednn_verbose(path);
    FAIL() << "no error";
  } catch (const InputError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("bad.log:3: exec line with only 4 fields"), std::string::npos) << m;
    EXPECT_NE(m.find("all 2 exec lines are malformed"), std::string::npos) << m;
  }
  EXPECT_THROW(summarize_onednn_verbose({path}), InputError);
  OnednnVerboseOptions lenient;
  lenient.lenient = true;
  OnednnVerboseStats st;
  FoldedProfile p = fold_onednn_verbose(path, &st, lenient);
  EXPECT_EQ(p.total(), 0);
  EXPECT_EQ(st.malformed, 2u);
  // One good line among bad ones is a profile (the bad ones are counted).
  std::string mixed = temp_input("mixed.log", read_file(path) + "onednn_verbose,exec,cpu,reorder,jit:uni,undef,a b,,,2x3,1.5\n");
  p = fold_onednn_verbose(mixed, &st);
  EXPECT_DOUBLE_EQ(p.total(), 1500);
  EXPECT_EQ(st.malformed, 2u);
}

TEST(OnednnVerbose, WhollyMalformedLogThroughTheCli) {
  std::string path = temp_input("bad_cli.log", "onednn_verbose,exec,cpu,x\nonednn_verbose,exec,cpu,y\n");
  std::string bin = shell_quote(fgtool_bin()), q = shell_quote(path);
  for (const std::string& args : {"fold --onednn-verbose " + q, "report --onednn-verbose " + q, "svg " + q}) {
    SCOPED_TRACE(args);
    CommandResult r = run_shell(bin + " " + args);
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_NE(r.err.find("bad_cli.log:1: exec line with only 4 fields"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  CommandResult r = run_shell(bin + " report --onednn-verbose --lenient " + q);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("2 malformed exec lines skipped"), std::string::npos) << r.err;
}

// Primitive names come from the log: the CSV summary neutralises formula starts.
TEST(OnednnVerbose, CsvSummaryCellsCannotStartAFormula) {
  std::string path = temp_input("inj.log", "onednn_verbose,exec,cpu,=cmd|' /C calc'!A0,@impl,undef,a b,,,2x3,1.5\n");
  std::string csv = format_onednn_summary_csv(summarize_onednn_verbose({path}));
  EXPECT_NE(csv.find("\n'=cmd|' /C calc'!A0,,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",'@impl,"), std::string::npos) << csv;
}

}  // namespace
}  // namespace fg::test
