// The demo trainers as programs: on a few hundred synthetic digits they must
// actually learn (loss falls, accuracy beats chance), write a readable
// libtorch profiler trace, and fail cleanly on bad data and options.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "test_support.h"

using fg::test::run_shell;
using fg::test::shell_quote;

namespace {

class Trainers : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    data_ = new std::string(fg::test::temp_dir() + "/mnist");
    auto r = run_shell(std::string(MNIST_SYNTH_BIN) + " --out " + shell_quote(*data_) + " --train 640 --test 300 --seed 3");
    ASSERT_EQ(r.status, 0) << r.err;
  }
  static void TearDownTestSuite() {
    delete data_;
    data_ = nullptr;
  }
  static fg::test::CommandResult run(const std::string& bin, const std::string& args) {
    return run_shell("OMP_NUM_THREADS=1 " + bin + " --data " + shell_quote(*data_) + " " + args);
  }
  static std::string* data_;
};
std::string* Trainers::data_ = nullptr;

// Values of "key number" pairs on the first line starting with `prefix`.
std::map<std::string, double> line_values(const std::string& out, const std::string& prefix) {
  std::map<std::string, double> values;
  size_t at = out.find("\n" + prefix);
  if (at == std::string::npos) return values;
  std::string line = out.substr(at + 1, out.find('\n', at + 1) - at - 1);
  std::regex pair(R"(([a-z_/]+) ([0-9.eE+-]+))");
  for (auto it = std::sregex_iterator(line.begin(), line.end(), pair); it != std::sregex_iterator(); ++it)
    values[(*it)[1]] = std::stod((*it)[2]);
  return values;
}

TEST_F(Trainers, MlpLearns) {
  auto r = run(MLP_TRAIN_BIN, "--epochs 2 --batch-size 32 --hidden 64 --lr 0.02 --seed 1");
  ASSERT_EQ(r.status, 0) << r.err;
  auto initial = line_values(r.out, "initial:");
  auto e1 = line_values(r.out, "epoch 1/2:");
  auto e2 = line_values(r.out, "epoch 2/2:");
  ASSERT_TRUE(initial.count("val_loss") && e1.count("train_loss") && e2.count("val_acc")) << r.out;
  EXPECT_LT(e2["val_loss"], initial["val_loss"] * 0.7) << r.out;
  EXPECT_LT(e2["train_loss"], e1["train_loss"]) << r.out;
  EXPECT_GT(e2["val_acc"], 0.3) << r.out;
  EXPECT_GT(e2["samples/s"], 0) << r.out;
  EXPECT_NE(r.out.find("model 784-64-10"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 threads"), std::string::npos) << "OMP_NUM_THREADS not honoured: " << r.out;
}

TEST_F(Trainers, VaeLearns) {
  auto r = run(VAE_TRAIN_BIN, "--epochs 2 --batch-size 32 --hidden 64 --latent 8 --lr 0.003 --threads 1");
  ASSERT_EQ(r.status, 0) << r.err;
  auto initial = line_values(r.out, "initial:");
  auto e1 = line_values(r.out, "epoch 1/2:");
  auto e2 = line_values(r.out, "epoch 2/2:");
  ASSERT_TRUE(initial.count("val_loss") && e1.count("train_loss") && e2.count("val_loss")) << r.out;
  EXPECT_LT(e2["val_loss"], initial["val_loss"] * 0.8) << r.out;
  EXPECT_LT(e2["train_loss"], e1["train_loss"]) << r.out;
}

TEST_F(Trainers, MaxBatchesAndTraceWriteChromeTrace) {
  std::string trace = fg::test::temp_dir() + "/trace.json";
  auto r = run(MLP_TRAIN_BIN, "--epochs 1 --max-batches 4 --trace-steps 2 --hidden 32 --trace " + shell_quote(trace));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("trace: wrote"), std::string::npos) << r.err;
  // The PyTorch profiler's (Kineto) layout: an object with traceEvents,
  // metadata, ops as cat cpu_op and RECORD_USER_SCOPE spans as user_annotation.
  nlohmann::json doc = nlohmann::json::parse(fg::test::read_file(trace));
  ASSERT_TRUE(doc.is_object());
  ASSERT_TRUE(doc.at("traceEvents").is_array());
  std::map<std::string, int> names;
  for (const auto& e : doc["traceEvents"]) {
    if (e.at("ph") == "M") continue;
    ASSERT_EQ(e.at("ph"), "X");
    EXPECT_GE(e.at("dur").get<double>(), 0);
    std::string name = e.at("name").get<std::string>();
    ++names[name];
    if (name == "train_step") EXPECT_EQ(e.at("cat"), "user_annotation");
    if (name == "aten::addmm") EXPECT_EQ(e.at("cat"), "cpu_op");
  }
  EXPECT_EQ(names["train_step"], 2) << "trace should cover exactly --trace-steps steps";
  EXPECT_GE(names["aten::addmm"], 4);
  EXPECT_GE(names["MNISTIter::next"], 1);
  // --max-batches 4 at the default batch size 64: 256 of the 640 samples.
  EXPECT_EQ(line_values(r.out, "epoch 1/1:")["samples"], 256) << r.out;
}

TEST_F(Trainers, BadDataIsAnInputError) {
  std::string dir = fg::test::temp_dir();
  ASSERT_EQ(run_shell("cp " + shell_quote(*data_) + "/* " + shell_quote(dir)).status, 0);
  std::string images = dir + "/train-images-idx3-ubyte";
  std::string bytes = fg::test::read_file(images);
  fg::test::write_file(images, bytes.substr(0, bytes.size() / 2));
  for (const char* bin : {MLP_TRAIN_BIN, VAE_TRAIN_BIN}) {
    auto r = run_shell(std::string(bin) + " --data " + shell_quote(dir));
    EXPECT_EQ(r.status, 1) << bin;
    EXPECT_NE(r.err.find(images + ": byte " + std::to_string(bytes.size() / 2)), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

TEST_F(Trainers, UsageErrors) {
  auto missing = run_shell(std::string(MLP_TRAIN_BIN) + " --epochs 1");
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.err.find("--data"), std::string::npos) << missing.err;
  auto hidden = run(MLP_TRAIN_BIN, "--hidden 64,,3");
  EXPECT_EQ(hidden.status, 2);
  EXPECT_NE(hidden.err.find("--hidden"), std::string::npos) << hidden.err;
  auto help = run_shell(std::string(VAE_TRAIN_BIN) + " --help");
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.out.find("Examples:"), std::string::npos);
  EXPECT_NE(help.out.find("--latent"), std::string::npos);
}

TEST_F(Trainers, CudaDeviceRefusedClearlyWhenUnavailable) {
  auto r = run(MLP_TRAIN_BIN, "--device cuda --max-batches 1");
  if (r.status == 0) GTEST_SKIP() << "this libtorch has a usable CUDA device";
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("--device cuda:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("CUDA"), std::string::npos) << r.err;
}

TEST(MnistSynth, WritesIdenticalFilesForEqualSeeds) {
  std::string a = fg::test::temp_dir(), b = fg::test::temp_dir();
  ASSERT_EQ(run_shell(std::string(MNIST_SYNTH_BIN) + " --out " + shell_quote(a) + " --train 50 --test 20 --seed 4").status, 0);
  ASSERT_EQ(run_shell(std::string(MNIST_SYNTH_BIN) + " --out " + shell_quote(b) + " --train 50 --test 20 --seed 4").status, 0);
  for (const char* f : {"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"})
    EXPECT_EQ(fg::test::read_file(a + "/" + f), fg::test::read_file(b + "/" + f)) << f;
  EXPECT_EQ(fg::test::read_file(a + "/t10k-images-idx3-ubyte").size(), 16u + 20 * 784);
  EXPECT_NE(fg::test::read_file(a + "/train-images-idx3-ubyte").substr(16, 784),
            fg::test::read_file(a + "/t10k-images-idx3-ubyte").substr(16, 784));
  auto bad = run_shell(std::string(MNIST_SYNTH_BIN) + " --train 5");
  EXPECT_EQ(bad.status, 2);
}

}  // namespace
