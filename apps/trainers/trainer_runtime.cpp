#include "trainer_runtime.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <c10/util/Exception.h>
#include <torch/csrc/autograd/profiler_kineto.h>
#include <torch/cuda.h>

#include <dlfcn.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>

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

namespace {

std::set<torch::profiler::impl::ActivityType> profiler_activities() {
  std::set<torch::profiler::impl::ActivityType> a{torch::profiler::impl::ActivityType::CPU};
  if (torch::cuda::is_available()) a.insert(torch::profiler::impl::ActivityType::CUDA);
  return a;
}

torch::profiler::impl::ProfilerConfig profiler_config() {
  return torch::profiler::impl::ProfilerConfig(torch::profiler::impl::ProfilerState::KINETO, /*report_input_shapes=*/false,
                                               /*profile_memory=*/false, /*with_stack=*/false, /*with_flops=*/false,
                                               /*with_modules=*/false);
}

// The recorded events in Kineto's trace layout, for libtorch builds that
// cannot save a trace themselves (USE_KINETO=0).
void write_kineto_layout(const torch::autograd::profiler::ProfilerResult& result, const std::string& path) {
  nlohmann::json events = nlohmann::json::array();
  const int pid = int(getpid());
  std::set<uint64_t> threads;
  for (const auto& e : result.events()) {
    bool user = e.scope() == uint8_t(at::RecordScope::USER_SCOPE);
    nlohmann::json args = {{"External id", e.correlationId()}};
    if (e.sequenceNr() >= 0) args["Sequence number"] = e.sequenceNr();
    if (e.fwdThreadId() > 0) args["Fwd thread id"] = e.fwdThreadId();
    events.push_back({{"ph", "X"}, {"cat", user ? "user_annotation" : "cpu_op"}, {"name", e.name()}, {"pid", pid},
                      {"tid", e.startThreadId()}, {"ts", e.startUs()}, {"dur", e.durationUs()}, {"args", args}});
    threads.insert(e.startThreadId());
  }
  events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", pid}, {"tid", 0}, {"args", {{"name", program_invocation_short_name}}}});
  for (uint64_t t : threads)
    events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", pid}, {"tid", t},
                      {"args", {{"name", "thread " + std::to_string(t)}}}});
  nlohmann::json doc = {{"schemaVersion", 1}, {"traceEvents", events}, {"traceName", path}, {"displayTimeUnit", "ms"}};
  std::ofstream out(path);
  out << doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  if (!out) throw InputError(path + ": cannot write the trace");
}

}  // namespace

void ProfilerTrace::before_step() {
  if (path_.empty() || active_ || done_ != warmup_steps_) return;
  torch::autograd::profiler::prepareProfiler(profiler_config(), profiler_activities());
  torch::autograd::profiler::enableProfiler(profiler_config(), profiler_activities());
  active_ = true;
}

void ProfilerTrace::after_step() {
  if (path_.empty()) return;
  ++done_;
  if (active_ && done_ >= warmup_steps_ + steps_) finish();
}

void ProfilerTrace::finish() {
  if (!active_) return;
  active_ = false;
  auto result = torch::autograd::profiler::disableProfiler();
  bool saved = false;
  try {
    result->save(path_);  // Kineto's own writer (with GPU kernels), where libtorch has Kineto
    saved = true;
  } catch (const c10::Error&) {
  }
  if (!saved) write_kineto_layout(*result, path_);
  std::cerr << "trace: wrote " << path_ << " (" << (done_ - warmup_steps_) << " training steps"
            << (saved ? "" : "; this libtorch has no Kineto: CPU ops only") << ")\n";
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
