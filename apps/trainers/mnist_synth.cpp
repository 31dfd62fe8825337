// mnist_synth: writes learnable synthetic MNIST-shaped IDX files (see
// synthetic_digits.h) so the demo trainers run without downloading MNIST.
#include <boost/program_options.hpp>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include "diagnostics/input_error.h"
#include "synthetic_digits.h"

namespace po = boost::program_options;
using namespace fg::trainers;

namespace {

int synth_main(int argc, char** argv) {
  std::string out;
  uint32_t train = 60000, test = 10000;  // the sizes of real MNIST
  uint64_t seed = 1;
  po::options_description desc("Options");
  desc.add_options()
      ("help,h", "show this help")
      ("out", po::value(&out)->required(), "directory to write train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte (created if missing)")
      ("train", po::value(&train)->default_value(train), "training images")
      ("test", po::value(&test)->default_value(test), "test images")
      ("seed", po::value(&seed)->default_value(seed), "generator seed (output is identical for equal options)");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, desc), vm);
    if (vm.count("help")) {
      std::cout << "Usage: mnist_synth --out DIR [--train N] [--test M] [--seed S]\n"
                   "Writes synthetic MNIST-format IDX files: 28x28 seven-segment style digits 0-9 with jittered\n"
                   "position, size, slant and stroke width plus noise; learnable by the demo trainers.\n\n"
                << desc
                << "\nExamples:\n  mnist_synth --out /tmp/mnist\n  mnist_synth --out /tmp/tiny --train 500 --test 200 --seed 7\n";
      return 0;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    throw fg::UsageError(e.what());
  }
  if (train == 0 || test == 0) throw fg::UsageError("--train and --test must be at least 1");
  if (::mkdir(out.c_str(), 0777) != 0 && errno != EEXIST)
    throw fg::UsageError("--out " + out + ": cannot create directory: " + std::strerror(errno));
  SyntheticDigits train_set = generate_synthetic_digits(train, seed);
  SyntheticDigits test_set = generate_synthetic_digits(test, seed ^ 0x7e57da7aULL);
  IdxWriter::write_images(out + "/train-images-idx3-ubyte", train_set.images);
  IdxWriter::write_labels(out + "/train-labels-idx1-ubyte", train_set.labels);
  IdxWriter::write_images(out + "/t10k-images-idx3-ubyte", test_set.images);
  IdxWriter::write_labels(out + "/t10k-labels-idx1-ubyte", test_set.labels);
  std::cout << "mnist_synth: wrote " << train << " train and " << test << " test images (28x28) to " << out << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return synth_main(argc, argv);
  } catch (const fg::UsageError& e) {
    std::cerr << "mnist_synth: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "mnist_synth: error: " << e.what() << "\n";
    return 1;
  }
}
