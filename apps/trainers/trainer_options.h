// Command-line options shared by mlp_train and vae_train (each adds its own
// model options). Torch-free so it compiles quickly.
#pragma once

#include <boost/program_options/options_description.hpp>
#include <cstdint>
#include <string>
#include <vector>

// Keeps a function as its own frame so it shows up by name in profiles.
#define TRAINER_FRAME __attribute__((noinline))

namespace fg::trainers {

struct TrainerOptions {
  std::string data;           // directory with the four MNIST IDX files
  int epochs = 1;
  int64_t batch_size = 64;
  double lr = 0.01;
  int threads = 0;            // 0: OMP_NUM_THREADS if set, else every CPU we may use
  int64_t max_batches = 0;    // per epoch; 0 = all
  std::string device = "cpu";
  uint64_t seed = 1;
  std::string trace;          // Chrome trace JSON of libtorch's profiler; empty = off
  int trace_steps = 5;        // training steps the trace covers
};

// Parses argv into opts (whose fields hold the program's defaults on entry)
// plus the program's own `extra` options. Returns false when --help was
// printed; throws fg::UsageError on bad options.
bool parse_trainer_options(int argc, char** argv, const std::string& program, const std::string& summary,
                           const std::string& examples, boost::program_options::options_description& extra,
                           TrainerOptions& opts);

// "256,128" -> {256, 128}; throws fg::UsageError on anything else.
std::vector<int64_t> parse_layer_sizes(const std::string& text, const std::string& option);

}  // namespace fg::trainers
