// Process set-up shared by the trainers: intra-op threads, device choice, the
// optional libtorch profiler trace, timing, and mapping errors to exit codes
// (1 bad input, 2 bad usage or unavailable device).
#pragma once

#include <c10/core/Device.h>

#include <chrono>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>

#include "trainer_options.h"

namespace fg::trainers {

// Applies --threads, else OMP_NUM_THREADS, to torch::set_num_threads and
// returns the intra-op thread count in effect.
int configure_threads(const TrainerOptions& opts);

// "cpu" or "cuda"; throws fg::UsageError with the reason when CUDA cannot be used.
c10::Device select_device(const std::string& name);

// Records libtorch's profiler (the Kineto API: CPU ops, and GPU kernels on a
// CUDA device) over training steps [warmup_steps, warmup_steps + steps) and
// writes a Kineto trace (Chrome trace JSON, as PyTorch's profiler writes it)
// when those steps are done or at finish(). libtorch builds without Kineto
// (Debian's) cannot save one; their recorded ops are written in the same
// layout here (cat cpu_op / user_annotation, "External id", sequence numbers).
class ProfilerTrace {
 public:
  ProfilerTrace(std::string path, int warmup_steps, int steps);  // empty path = off
  ~ProfilerTrace();
  void before_step();
  void after_step();
  void finish();

 private:
  std::string path_;
  int warmup_steps_, steps_, done_ = 0;
  bool active_ = false;
};

class Stopwatch {
 public:
  Stopwatch() : start_(std::chrono::steady_clock::now()) {}
  double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }

 private:
  std::chrono::steady_clock::time_point start_;
};

// Runs a trainer's main body, printing "PROGRAM: error: ..." for exceptions
// and returning the exit code.
int run_trainer(const char* program, const std::function<int()>& body);

}  // namespace fg::trainers
