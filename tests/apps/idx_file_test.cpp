// IDX reading and writing: round trips with the synthetic generator, and every
// kind of malformed file rejected with a message naming the file and byte offset.
#include <gtest/gtest.h>
#include <zlib.h>

#include <chrono>
#include <set>

#include "diagnostics/input_error.h"
#include "idx_file.h"
#include "synthetic_digits.h"
#include "test_support.h"

using namespace fg::trainers;
using fg::InputError;

namespace {

std::string be32(uint32_t v) {
  return {char(v >> 24), char(v >> 16), char(v >> 8), char(v)};
}

// Expects `fn` to throw InputError whose message contains every needle.
template <typename Fn>
std::string expect_input_error(Fn fn, std::initializer_list<std::string> needles) {
  try {
    fn();
  } catch (const InputError& e) {
    std::string msg = e.what();
    for (const std::string& n : needles) EXPECT_NE(msg.find(n), std::string::npos) << "missing '" << n << "' in: " << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "not one line: " << msg;
    return msg;
  }
  ADD_FAILURE() << "no InputError thrown";
  return "";
}

TEST(SyntheticDigits, DeterministicBalancedAndInked) {
  SyntheticDigits a = generate_synthetic_digits(200, 5);
  SyntheticDigits b = generate_synthetic_digits(200, 5);
  SyntheticDigits c = generate_synthetic_digits(200, 6);
  EXPECT_EQ(a.images.pixels, b.images.pixels);
  EXPECT_EQ(a.labels.labels, b.labels.labels);
  EXPECT_NE(a.images.pixels, c.images.pixels);
  ASSERT_EQ(a.images.count, 200u);
  ASSERT_EQ(a.images.rows, 28u);
  ASSERT_EQ(a.images.cols, 28u);
  ASSERT_EQ(a.images.pixels.size(), 200u * 784);
  int per_class[10] = {};
  for (uint8_t l : a.labels.labels) {
    ASSERT_LT(l, 10);
    ++per_class[l];
  }
  for (int k = 0; k < 10; ++k) EXPECT_EQ(per_class[k], 20) << "class " << k;
  // Every image has a stroke (bright pixels) and mostly dark background.
  for (uint32_t i = 0; i < a.images.count; ++i) {
    int bright = 0;
    for (int p = 0; p < 784; ++p) bright += a.images.pixels[i * 784 + p] > 128;
    EXPECT_GT(bright, 15) << "image " << i;
    EXPECT_LT(bright, 400) << "image " << i;
  }
}

TEST(SyntheticDigits, ClassesDifferOnAverage) {
  // Mean images of different classes must differ clearly (learnability).
  SyntheticDigits d = generate_synthetic_digits(1000, 1);
  std::vector<std::vector<double>> mean(10, std::vector<double>(784, 0));
  for (uint32_t i = 0; i < d.images.count; ++i)
    for (int p = 0; p < 784; ++p) mean[d.labels.labels[i]][p] += d.images.pixels[i * 784 + p] / 100.0;
  for (int a = 0; a < 10; ++a)
    for (int b = a + 1; b < 10; ++b) {
      double dist = 0;
      for (int p = 0; p < 784; ++p) dist += std::abs(mean[a][p] - mean[b][p]);
      EXPECT_GT(dist / 784, 5.0) << "classes " << a << " and " << b << " look alike";
    }
}

TEST(IdxFile, RoundTripsWithGenerator) {
  std::string dir = fg::test::temp_dir();
  SyntheticDigits d = generate_synthetic_digits(123, 9);
  IdxWriter::write_images(dir + "/img", d.images);
  IdxWriter::write_labels(dir + "/lbl", d.labels);
  IdxImages img = IdxReader::read_images(dir + "/img");
  IdxLabels lbl = IdxReader::read_labels(dir + "/lbl");
  EXPECT_EQ(img.count, 123u);
  EXPECT_EQ(img.rows, 28u);
  EXPECT_EQ(img.cols, 28u);
  EXPECT_EQ(img.pixels, d.images.pixels);
  EXPECT_EQ(lbl.labels, d.labels.labels);
  EXPECT_EQ(fg::test::read_file(dir + "/img").size(), 16u + 123 * 784);
  EXPECT_EQ(fg::test::read_file(dir + "/img").substr(0, 8), be32(0x803) + be32(123));
}

TEST(IdxFile, ReadsGzipAndLoadsSplit) {
  std::string dir = fg::test::temp_dir();
  SyntheticDigits d = generate_synthetic_digits(40, 2);
  IdxWriter::write_images(dir + "/plain", d.images);
  std::string bytes = fg::test::read_file(dir + "/plain");
  gzFile gz = gzopen((dir + "/train-images-idx3-ubyte.gz").c_str(), "wb");
  ASSERT_NE(gz, nullptr);
  ASSERT_EQ(gzwrite(gz, bytes.data(), unsigned(bytes.size())), int(bytes.size()));
  gzclose(gz);
  IdxWriter::write_labels(dir + "/train-labels-idx1-ubyte", d.labels);
  MnistSplit split = load_mnist_split(dir, "train");
  EXPECT_EQ(split.size(), 40u);
  EXPECT_EQ(split.images.pixels, d.images.pixels);
  EXPECT_EQ(split.labels.labels, d.labels.labels);
  EXPECT_NE(split.images.path.find(".gz"), std::string::npos);
}

TEST(IdxFile, RejectsWrongMagic) {
  std::string dir = fg::test::temp_dir();
  SyntheticDigits d = generate_synthetic_digits(10, 1);
  IdxWriter::write_labels(dir + "/labels", d.labels);
  expect_input_error([&] { IdxReader::read_images(dir + "/labels"); },
                     {dir + "/labels", "byte 0", "wrong magic 0x00000801", "0x00000803"});
  IdxWriter::write_images(dir + "/images", d.images);
  expect_input_error([&] { IdxReader::read_labels(dir + "/images"); }, {dir + "/images", "byte 0", "wrong magic"});
}

TEST(IdxFile, RejectsTruncatedHeaderAndData) {
  std::string dir = fg::test::temp_dir();
  fg::test::write_file(dir + "/short", be32(0x803) + be32(1) + std::string(2, '\0'));
  expect_input_error([&] { IdxReader::read_images(dir + "/short"); }, {dir + "/short", "byte 10", "truncated", "header"});
  fg::test::write_file(dir + "/empty", "");
  expect_input_error([&] { IdxReader::read_images(dir + "/empty"); }, {dir + "/empty", "byte 0", "truncated"});

  SyntheticDigits d = generate_synthetic_digits(10, 1);
  IdxWriter::write_images(dir + "/full", d.images);
  std::string bytes = fg::test::read_file(dir + "/full");
  fg::test::write_file(dir + "/cut", bytes.substr(0, bytes.size() - 100));
  expect_input_error([&] { IdxReader::read_images(dir + "/cut"); },
                     {dir + "/cut", "byte " + std::to_string(bytes.size() - 100), "claims 10 images of 28x28", "truncated"});
  fg::test::write_file(dir + "/long", bytes + "xyz");
  expect_input_error([&] { IdxReader::read_images(dir + "/long"); },
                     {dir + "/long", "byte " + std::to_string(bytes.size()), "trailing data"});
  fg::test::write_file(dir + "/lbl", be32(0x801) + be32(5) + "abc");
  expect_input_error([&] { IdxReader::read_labels(dir + "/lbl"); }, {dir + "/lbl", "byte 11", "claims 5 labels", "truncated"});
}

TEST(IdxFile, RejectsGiantDimensionClaimsWithoutAllocating) {
  std::string dir = fg::test::temp_dir();
  auto start = std::chrono::steady_clock::now();
  fg::test::write_file(dir + "/giant", be32(0x803) + be32(0xffffffffu) + be32(28) + be32(28) + std::string(784, '\0'));
  expect_input_error([&] { IdxReader::read_images(dir + "/giant"); }, {dir + "/giant", "claims 4294967295 images", "truncated"});
  fg::test::write_file(dir + "/wide", be32(0x803) + be32(1) + be32(0x7fffffff) + be32(0x7fffffff));
  expect_input_error([&] { IdxReader::read_images(dir + "/wide"); }, {dir + "/wide", "byte 8", "implausible image size"});
  fg::test::write_file(dir + "/zero", be32(0x803) + be32(1) + be32(0) + be32(28));
  expect_input_error([&] { IdxReader::read_images(dir + "/zero"); }, {dir + "/zero", "implausible image size 0x28"});
  fg::test::write_file(dir + "/labels", be32(0x801) + be32(0xfffffff0u));
  expect_input_error([&] { IdxReader::read_labels(dir + "/labels"); }, {dir + "/labels", "claims 4294967280 labels"});
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 2.0);
}

TEST(IdxFile, RejectsCorruptGzip) {
  std::string dir = fg::test::temp_dir();
  fg::test::write_file(dir + "/x.gz", std::string("\x1f\x8b\x08\x00", 4) + std::string(64, '\xff'));
  expect_input_error([&] { IdxReader::read_images(dir + "/x.gz"); }, {dir + "/x.gz", "byte"});
}

TEST(MnistSplit, RejectsDisagreementsAndMissingFiles) {
  std::string dir = fg::test::temp_dir();
  expect_input_error([&] { load_mnist_split(dir, "train"); }, {dir + "/train-images-idx3-ubyte", "not found", "mnist_synth"});

  SyntheticDigits d = generate_synthetic_digits(20, 1);
  IdxWriter::write_images(dir + "/train-images-idx3-ubyte", d.images);
  IdxLabels fewer = d.labels;
  fewer.labels.pop_back();
  IdxWriter::write_labels(dir + "/train-labels-idx1-ubyte", fewer);
  expect_input_error([&] { load_mnist_split(dir, "train"); },
                     {"train-labels-idx1-ubyte: 19 labels", "train-images-idx3-ubyte has 20 images"});

  IdxLabels bad = d.labels;
  bad.labels[7] = 12;
  IdxWriter::write_labels(dir + "/train-labels-idx1-ubyte", bad);
  expect_input_error([&] { load_mnist_split(dir, "train"); }, {"train-labels-idx1-ubyte: byte 15", "label 12"});
}

}  // namespace
