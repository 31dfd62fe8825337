// What `fgtool record` runs: the perf record command line for a view
// (on-CPU, off-CPU, wall clock), with frame-pointer or DWARF call graphs,
// and the environment that makes oneDNN name its JIT kernels for perf.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace fg {

enum class RecordView { OnCpu, OffCpu, Wall };

constexpr int kDefaultDwarfStackSize = 16384;
constexpr int kMaxDwarfStackSize = 65528;  // perf's limit (USHRT_MAX rounded down to 8)

struct RecordOptions {
  RecordView view = RecordView::OnCpu;
  bool dwarf = false;                 // --call-graph dwarf,SIZE instead of -g (frame pointers)
  // Bytes of user stack copied per DWARF sample. Deeper stacks are cut short
  // (fold marks them "[unknown]" at the root); perf allows up to 65528.
  int stack_size = kDefaultDwarfStackSize;
  int frequency = 999;                // -F for cpu-clock (on-CPU and wall)
  std::string output = "perf.data";   // -o
  std::string perf = "perf";          // the perf executable
  bool jit_profile = true;            // DNNL_JIT_PROFILE / ONEDNN_JIT_PROFILE = 2 unless already set
  std::vector<std::string> command;   // the workload and its arguments
};

class RecordCommandBuilder {
 public:
  explicit RecordCommandBuilder(RecordOptions options);
  // perf record ... -- COMMAND ARGS. Throws UsageError on an empty command,
  // a frequency outside 1..100000, a stack size that is not a multiple of 8
  // in 8..65528, or an empty output name.
  std::vector<std::string> perf_command() const;
  // Only the event/call-graph part, e.g. {"-e","cpu-clock","-F","999","-g"}.
  std::vector<std::string> event_arguments() const;
  // Variables to set for the workload (name, value), given the current
  // environment: those already set are left alone.
  std::vector<std::pair<std::string, std::string>> environment() const;
  // Arguments for `fgtool fold` that match the view ("--off-cpu", "--wall" or none).
  std::vector<std::string> fold_arguments() const;
  const RecordOptions& options() const { return options_; }

 private:
  RecordOptions options_;
};

const char* view_name(RecordView view);

}  // namespace fg
