#include "trainer_options.h"

#include <boost/program_options.hpp>
#include <iostream>

#include "diagnostics/input_error.h"

namespace po = boost::program_options;

namespace fg::trainers {

bool parse_trainer_options(int argc, char** argv, const std::string& program, const std::string& summary,
                           const std::string& examples, po::options_description& extra, TrainerOptions& opts) {
  po::options_description common("Training options");
  common.add_options()
      ("help,h", "show this help")
      ("data", po::value(&opts.data)->required(), "directory with train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte (or .gz); real MNIST or mnist_synth output")
      ("epochs", po::value(&opts.epochs)->default_value(opts.epochs), "passes over the training set")
      ("batch-size", po::value(&opts.batch_size)->default_value(opts.batch_size), "images per step")
      ("lr", po::value(&opts.lr)->default_value(opts.lr), "learning rate")
      ("threads", po::value(&opts.threads), "intra-op threads (torch::set_num_threads); default OMP_NUM_THREADS, else all CPUs in the affinity mask")
      ("max-batches", po::value(&opts.max_batches)->default_value(opts.max_batches), "stop each epoch after N steps (0 = all), for short profiling runs")
      ("device", po::value(&opts.device)->default_value(opts.device), "cpu or cuda")
      ("seed", po::value(&opts.seed)->default_value(opts.seed), "seed for weights and shuffling")
      ("trace", po::value(&opts.trace), "write a Chrome trace (JSON) of libtorch's autograd profiler over a few training steps")
      ("trace-steps", po::value(&opts.trace_steps)->default_value(opts.trace_steps), "training steps covered by --trace (after one warm-up step)");
  po::options_description all;
  all.add(extra).add(common);

  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(all).run(), vm);
    if (vm.count("help")) {
      std::cout << "Usage: " << program << " --data DIR [options]\n" << summary << "\n\n" << all << "\nExamples:\n" << examples;
      return false;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError(e.what());
  }
  if (opts.epochs < 1) throw UsageError("--epochs must be at least 1");
  if (opts.batch_size < 1) throw UsageError("--batch-size must be at least 1");
  if (!(opts.lr > 0)) throw UsageError("--lr must be positive");
  if (vm.count("threads") && opts.threads < 1) throw UsageError("--threads must be at least 1");
  if (opts.max_batches < 0) throw UsageError("--max-batches must not be negative");
  if (opts.device != "cpu" && opts.device != "cuda") throw UsageError("--device must be cpu or cuda, not '" + opts.device + "'");
  if (opts.trace_steps < 1) throw UsageError("--trace-steps must be at least 1");
  return true;
}

std::vector<int64_t> parse_layer_sizes(const std::string& text, const std::string& option) {
  std::vector<int64_t> sizes;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (item.empty() || used != item.size() || v < 1 || v > 1000000)
      throw UsageError(option + ": expected comma-separated positive layer sizes such as 256,128, got '" + text + "'");
    sizes.push_back(v);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return sizes;
}

}  // namespace fg::trainers
