#include "record/record_command.h"

#include <cstdlib>

#include "diagnostics/input_error.h"

namespace fg {

const char* view_name(RecordView view) {
  switch (view) {
    case RecordView::OnCpu: return "on-CPU";
    case RecordView::OffCpu: return "off-CPU";
    case RecordView::Wall: return "wall-clock";
  }
  return "?";
}

RecordCommandBuilder::RecordCommandBuilder(RecordOptions options) : options_(std::move(options)) {}

std::vector<std::string> RecordCommandBuilder::event_arguments() const {
  const RecordOptions& o = options_;
  if (o.frequency < 1 || o.frequency > 100000)
    throw UsageError("-F must be between 1 and 100000 samples per second, not " + std::to_string(o.frequency));
  std::vector<std::string> a;
  const std::string hz = std::to_string(o.frequency);
  switch (o.view) {
    case RecordView::OnCpu:
      a = {"-e", "cpu-clock", "-F", hz};
      break;
    case RecordView::OffCpu:
      // Every switch-out with its stack, plus PERF_RECORD_SWITCH IN/OUT so
      // that the end of each off-CPU interval is seen.
      a = {"-e", "sched:sched_switch", "--switch-events"};
      break;
    case RecordView::Wall:
      a = {"-e", "cpu-clock", "-F", hz, "-e", "sched:sched_switch", "--switch-events"};
      break;
  }
  if (o.dwarf) {
    a.push_back("--call-graph");
    if (o.stack_size < 8 || o.stack_size > kMaxDwarfStackSize || o.stack_size % 8 != 0)
      throw UsageError("--stack-size must be a multiple of 8 between 8 and " + std::to_string(kMaxDwarfStackSize) +
                       " bytes (perf's limit), not " + std::to_string(o.stack_size));
    a.push_back("dwarf," + std::to_string(o.stack_size));
  } else {
    a.push_back("-g");
  }
  return a;
}

std::vector<std::string> RecordCommandBuilder::perf_command() const {
  if (options_.command.empty() || options_.command[0].empty())
    throw UsageError("no command to record (fgtool record [options] -- COMMAND [ARGS])");
  if (options_.output.empty()) throw UsageError("-o needs a file name");
  std::vector<std::string> cmd = {options_.perf, "record", "-o", options_.output};
  for (auto& a : event_arguments()) cmd.push_back(a);
  cmd.push_back("--");
  cmd.insert(cmd.end(), options_.command.begin(), options_.command.end());
  return cmd;
}

std::vector<std::pair<std::string, std::string>> RecordCommandBuilder::environment() const {
  std::vector<std::pair<std::string, std::string>> env;
  if (!options_.jit_profile) return env;
  // oneDNN writes /tmp/perf-PID.map naming its JIT kernels when asked to.
  for (const char* name : {"DNNL_JIT_PROFILE", "ONEDNN_JIT_PROFILE"})
    if (!std::getenv(name)) env.emplace_back(name, "2");
  return env;
}

std::vector<std::string> RecordCommandBuilder::fold_arguments() const {
  switch (options_.view) {
    case RecordView::OffCpu: return {"--off-cpu"};
    case RecordView::Wall: return {"--wall"};
    default: return {};
  }
}

}  // namespace fg
