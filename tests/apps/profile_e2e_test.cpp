// End to end on the real demo workload: `fgtool record --dwarf` a short MLP
// training run, fold it natively, and check that the category report sees
// GEMM, OpenMP and the data iterator, and that the flamegraph is well-formed.
// Skipped only when perf cannot record here.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "folded_agreement.h"
#include "test_support.h"

namespace fg::test {
namespace {

double self_share(const nlohmann::json& report, const char* kind, const std::string& name) {
  for (const auto& c : report.at(kind))
    if (c.at("name") == name) return c.at("self_share").get<double>();
  return -1;
}
double incl_share(const nlohmann::json& report, const char* kind, const std::string& name) {
  for (const auto& c : report.at(kind))
    if (c.at("name") == name) return c.at("inclusive_share").get<double>();
  return -1;
}

TEST(ProfileEndToEnd, RecordFoldReportAndRenderTheMlpTrainer) {
  std::string why = perf_unavailable_reason();
  if (!why.empty()) GTEST_SKIP() << why;
  setenv("DEBUGINFOD_URLS", "", 1);
  std::string dir = temp_dir();
  std::string fg = shell_quote(fgtool_bin());
  CommandResult data = run_shell(std::string(MNIST_SYNTH_BIN) + " --out " + shell_quote(dir) + " --train 3000 --test 200");
  ASSERT_EQ(data.status, 0) << data.err;
  // Two threads so that OpenMP (libgomp) and OpenBLAS threading show up.
  std::string perf_data = dir + "/mlp.data";
  CommandResult rec = run_shell(fg + " record --dwarf -F 999 -o " + shell_quote(perf_data) + " -- " + MLP_TRAIN_BIN +
                                " --data " + shell_quote(dir) + " --epochs 1 --max-batches 100 --threads 2");
  ASSERT_EQ(rec.status, 0) << rec.out << rec.err;

  CommandResult folded = run_shell(fg + " fold " + shell_quote(perf_data) + " -o " + shell_quote(dir + "/mlp.folded"));
  ASSERT_EQ(folded.status, 0) << folded.err;
  std::string text = read_file(dir + "/mlp.folded");
  // The data iterator is cheap (about 1% of the run): enough samples to see it.
  EXPECT_NE(text.find("MNISTIter::"), std::string::npos) << "the data iterator is on the stacks";
  EXPECT_NE(text.find("train_step"), std::string::npos);

  CommandResult rep = run_shell(fg + " report --format json " + shell_quote(perf_data));
  ASSERT_EQ(rep.status, 0) << rep.err;
  nlohmann::json report = nlohmann::json::parse(rep.out);
  EXPECT_GT(incl_share(report, "resource", "gemm"), 0) << rep.out.substr(0, 3000);
  EXPECT_GT(incl_share(report, "resource", "omp"), 0) << rep.out.substr(0, 3000);
  EXPECT_GT(self_share(report, "phase", "data"), 0) << rep.out.substr(0, 3000);
  EXPECT_GT(self_share(report, "phase", "forward") + self_share(report, "phase", "backward"), 0);
  // Most of the time is attributed: little is left without a resource category.
  EXPECT_LT(report.at("other_share").at("resource").get<double>(), 0.10);

  CommandResult svg = run_shell(fg + " svg " + shell_quote(perf_data) + " -o " + shell_quote(dir + "/mlp.svg"));
  ASSERT_EQ(svg.status, 0) << svg.err;
  std::string doc = read_file(dir + "/mlp.svg");
  EXPECT_EQ(xml_wellformed_error(doc), "");
  EXPECT_NE(doc.find("gemm"), std::string::npos) << "category legend in the perf.data flamegraph";
}

// Issue 14's bar for DWARF libtorch recordings: the native fold within 98% of
// `perf script --no-inline | fgtool collapse` on a run of its own (a seed and
// thread count the demo does not use). Two OpenMP threads give the cut-short
// stacks whose marker perf sometimes leaves out (the main thread's OpenMP
// outlined functions realign their stack): this run scored 97.9-98.5% before
// the fold followed perf's rule and 99.9-100% after, so the bar here is 98.5%.
TEST(ProfileEndToEnd, HeldOutVaeDwarfFoldAgreesWithPerfScript) {
  std::string why = perf_unavailable_reason();
  if (!why.empty()) GTEST_SKIP() << why;
  setenv("DEBUGINFOD_URLS", "", 1);
  std::string dir = temp_dir();
  std::string fg = shell_quote(fgtool_bin());
  CommandResult data = run_shell(std::string(MNIST_SYNTH_BIN) + " --out " + shell_quote(dir) + " --train 2000 --test 200");
  ASSERT_EQ(data.status, 0) << data.err;
  std::string perf_data = dir + "/vae.data";
  CommandResult rec = run_shell(fg + " record --dwarf -F 499 -o " + shell_quote(perf_data) + " -- " + VAE_TRAIN_BIN +
                                " --data " + shell_quote(dir) + " --epochs 1 --max-batches 12 --threads 2 --seed 17");
  ASSERT_EQ(rec.status, 0) << rec.out << rec.err;
  CommandResult oracle = run_shell("perf script --no-inline -i " + shell_quote(perf_data) + " 2>/dev/null | " + fg +
                                   " collapse -");
  ASSERT_EQ(oracle.status, 0) << oracle.err;
  CommandResult folded = run_shell(fg + " fold " + shell_quote(perf_data));
  ASSERT_EQ(folded.status, 0) << folded.err;
  Agreement a = folded_agreement(oracle.out, folded.out);
  EXPECT_GT(a.total_a, 0);
  EXPECT_GE(a.percent, 98.5) << folded.err << a.worst;
}

}  // namespace
}  // namespace fg::test
