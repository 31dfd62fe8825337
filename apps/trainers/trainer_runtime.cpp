#include "trainer_runtime.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <c10/util/Exception.h>
#include <torch/csrc/autograd/profiler_legacy.h>
#include <torch/cuda.h>

#include <dlfcn.h>
#include <sched.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "diagnostics/input_error.h"

namespace fg::trainers {

int configure_threads(const TrainerOptions& opts) {
  int threads = opts.threads;
  if (threads == 0) {
    // libgomp reads OMP_NUM_THREADS too, but set it explicitly so libtorch's
    // own pool and the value we print agree.
    if (const char* env = std::getenv("OMP_NUM_THREADS")) {
      char* end = nullptr;
      long v = std::strtol(env, &end, 10);
      if (end != env && *end == '\0' && v > 0 && v < 4096) threads = int(v);
    }
  }
  if (threads == 0) {
    // libtorch 1.13 defaults to its own count of physical cores (1 on some
    // VMs); use every CPU we may run on so runs are predictable.
    cpu_set_t cpus;
    threads = sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) : 1;
  }
  threads = std::max(threads, 1);
  at::set_num_threads(threads);
  // OpenBLAS (pthread build) keeps its own pool sized to all cores, which
  // libtorch does not resize; match it to --threads so a run uses the CPUs it
  // asked for. The reference BLAS lacks the symbol and is single-threaded.
  if (!std::getenv("OPENBLAS_NUM_THREADS"))
    if (auto set_blas_threads = reinterpret_cast<void (*)(int)>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads")))
      set_blas_threads(threads);
  return at::get_num_threads();
}

c10::Device select_device(const std::string& name) {
  if (name == "cpu") return c10::Device(c10::kCPU);
  if (!at::hasCUDA())
    throw UsageError("--device cuda: this libtorch has no CUDA support (Debian's libtorch-dev is CPU-only)");
  if (!torch::cuda::is_available()) throw UsageError("--device cuda: no CUDA device is available");
  return c10::Device(c10::kCUDA, 0);
}

ProfilerTrace::ProfilerTrace(std::string path, int warmup_steps, int steps)
    : path_(std::move(path)), warmup_steps_(warmup_steps), steps_(steps) {}

ProfilerTrace::~ProfilerTrace() {
  try {
    finish();
  } catch (const std::exception& e) {
    std::cerr << "trace: " << e.what() << "\n";
  }
}

void ProfilerTrace::before_step() {
  if (path_.empty() || guard_ || done_ != warmup_steps_) return;
  // RecordProfile enables the legacy autograd profiler and, on destruction,
  // writes every recorded op as a Chrome trace event.
  guard_ = std::make_unique<torch::autograd::profiler::RecordProfile>(path_);
}

void ProfilerTrace::after_step() {
  if (path_.empty()) return;
  ++done_;
  if (guard_ && done_ >= warmup_steps_ + steps_) finish();
}

void ProfilerTrace::finish() {
  if (!guard_) return;
  guard_.reset();  // writes the file
  std::cerr << "trace: wrote " << path_ << " (" << (done_ - warmup_steps_) << " training steps)\n";
  path_.clear();
}

int run_trainer(const char* program, const std::function<int()>& body) {
  try {
    return body();
  } catch (const InputError& e) {
    std::cerr << program << ": error: " << e.what() << "\n";
    return 1;
  } catch (const UsageError& e) {
    std::cerr << program << ": error: " << e.what() << "\n";
    return 2;
  } catch (const c10::Error& e) {
    std::cerr << program << ": libtorch error: " << e.what_without_backtrace() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << program << ": error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace fg::trainers
