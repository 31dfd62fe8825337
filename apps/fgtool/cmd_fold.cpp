// fgtool fold: perf.data -> folded stacks (on-CPU, off-CPU or wall clock).
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "command.h"
#include "diagnostics/atomic_output.h"
#include "diagnostics/terminal_text.h"
#include "diagnostics/input_error.h"
#include "diagnostics/progress.h"
#include "fold_cli.h"
#include "fold/fold_perf_data.h"
#include "folded/folded_writer.h"
#include "folded/profile_loader.h"
#include "folded/stream_head.h"
#include "traces/framework_ops.h"
#include "traces/trace_inputs.h"  // traces helper: Chrome trace JSON, oneDNN verbose logs

namespace fg::cli {
namespace {

// What stdin holds, decided from its first bytes without losing them: a
// regular file is peeked at with pread (from where stdin stands); a pipe's
// head is kept for the reader by stream_head, which puts a pipe yielding it
// and then the rest in fd 0's place (so the perf.data pipe reader and the
// trace reader both see the whole stream).
TraceInputKind sniff_stdin() {
  struct stat st;
  if (fstat(0, &st) != 0) return TraceInputKind::None;
  if (S_ISREG(st.st_mode)) {
    std::string head(4096, '\0');
    off_t at = lseek(0, 0, SEEK_CUR);
    ssize_t n = pread(0, head.data(), head.size(), at < 0 ? 0 : at);
    head.resize(n > 0 ? size_t(n) : 0);
    return detect_trace_input_head(head);
  }
  std::optional<std::string> head = stream_head("/dev/stdin");
  return head ? detect_trace_input_head(*head) : TraceInputKind::None;
}

// Whether the head's first line that is not a comment reads as a folded
// stack ("frame;frame COUNT"): text, ending in a number after a space.
bool looks_like_folded(std::string_view head) {
  size_t at = 0;
  while (at < head.size()) {
    size_t end = head.find('\n', at);
    if (end == std::string_view::npos) return false;  // no whole line in the head
    std::string_view line = head.substr(at, end - at);
    at = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line[0] == '#') continue;
    for (char c : line)
      if ((unsigned char)c < 0x20 && c != '\t') return false;
    size_t space = line.rfind(' ');
    if (space == std::string_view::npos || space + 1 == line.size()) return false;
    return line.find_first_not_of("0123456789.eE+-", space + 1) == std::string_view::npos;
  }
  return false;
}

// fold reads perf.data and traces (checked before). Another profile given to
// it gets the command that reads it named, rather than perf.data's "bad
// magic" error: `fgtool fold cpu.pb.gz` or `fgtool fold out.folded` are
// likely slips for `svg`, and `fgtool fold script.txt` for `collapse`.
void refuse_other_profiles(const std::string& path) {
  if (path == "-") return;
  const std::string head = read_file_head(path);
  if (head.empty() || looks_like_perf_data(head)) return;  // the reader names what is wrong
  const ProfileLoader* loader = find_profile_loader(head);
  const std::string kind = loader ? loader->name : looks_like_folded(head) ? "folded text" : "";
  if (kind == "pprof")
    throw InputError(path + ": a pprof profile, not perf.data: 'fgtool svg', 'report', 'diff', 'export' and " +
                     "'merge' read it as it is");
  if (kind == "perf script text")
    throw InputError(path + ": perf script text, not perf.data: 'fgtool collapse " + path + "' folds it");
  if (kind == "folded text")
    throw InputError(path + ": folded stacks already, not perf.data: 'fgtool svg', 'report', 'diff' and " +
                     "'export' read them as they are");
}

int run_fold(const std::vector<std::string>& args) {
  FoldCliOptions cli;
  po::options_description options("Options");
  add_fold_options(options, cli);
  std::vector<std::string> inputs;
  options.add_options()("output,o", po::value(&cli.output)->default_value("-"), "output file ('-' = stdout)")(
      "input", po::value(&inputs), "perf.data (file or pipe mode; '-' = stdin), or trace files");
  bool header = false, no_header = false;
  options.add_options()
    ("units-header", po::bool_switch(&header),
     "start the output with '# fgtool units=ns' (the default with -o FILE; flamegraph.pl and inferno skip the line)")
    ("no-units-header", po::bool_switch(&no_header),
     "no units line even with -o (stdout never has one: it stays what stackcollapse-perf.pl writes)");
  // ---- traces helper (lib/traces): Chrome/Kineto trace JSON, oneDNN verbose logs ----
  bool onednn_verbose = false, gpu = false, gpu_idle = false, ops = false, full_kernel_names = false;
  std::string label;
  po::options_description traces("Traces (Chrome trace JSON / PyTorch Kineto, plain or .gz; oneDNN verbose logs)");
  traces.add_options()
      ("onednn-verbose", po::bool_switch(&onednn_verbose),
       "input is a oneDNN verbose log: stacks primitive;implementation;shape, weight us")
      ("gpu", po::bool_switch(&gpu),
       "trace: GPU kernels, memcpy and memset under the CPU stack that launched them "
       "(PROCESS;THREAD;annotations;ops;launch;[gpu] KERNEL), weight device us")
      ("idle", po::bool_switch(&gpu_idle),
       "with --gpu: each stream's idle gaps as [gpu idle] under the CPU op running at the time")
      ("full-kernel-names", po::bool_switch(&full_kernel_names),
       "with --gpu: kernel names as the trace writes them (default: return type and argument list dropped)")
      ("label", po::value(&label),
       "several traces: 'rank' (a root frame 'rank N' per trace, N from its distributedInfo, else its position) "
       "or 'file' (the file name); default: merged")
      ("ops", po::bool_switch(&ops),
       "op view: perf.data stacks keep only framework ops (at::_ops::addmm::call -> aten::addmm, AddmmBackward0, "
       "...) and the program's own functions, native frames below an op folding into it; trace stacks keep only "
       "their ops and [gpu] leaves (no process, thread, annotation or runtime frames). Both start at the first op, "
       "so a CPU run and a GPU run line up in 'fgtool diff'");
  options.add(traces);
  po::positional_options_description positional;
  positional.add("input", -1);
  po::variables_map vm;
  if (!parse_args("fold", args, options, positional, vm)) return 0;
  if (inputs.empty()) throw UsageError("no input file (see 'fgtool help fold')");
  if ((gpu_idle || full_kernel_names) && !gpu) throw UsageError("--idle and --full-kernel-names need --gpu");
  if (!label.empty() && label != "rank" && label != "file")
    throw UsageError("--label: '" + label + "' is not one of rank, file");
  if (std::count(inputs.begin(), inputs.end(), std::string("-")) > 1)
    throw UsageError("stdin ('-') can be given once");
  cli.input = inputs[0];
  if (header && no_header) throw UsageError("--units-header and --no-units-header exclude each other");
  // The unit survives `fold -o x.folded && report x.folded` through a first
  // comment line; stdout stays byte-for-byte the drop-in format by default.
  const bool with_header = header || (cli.output != "-" && !no_header);
  std::vector<TraceInputKind> kinds;
  for (const auto& in : inputs) {
    TraceInputKind k = onednn_verbose ? TraceInputKind::OnednnVerbose
                       : in == "-"    ? sniff_stdin()
                                      : detect_trace_input(in);
    kinds.push_back(k);
  }
  bool any_trace = std::any_of(kinds.begin(), kinds.end(), [](TraceInputKind k) { return k != TraceInputKind::None; });
  if (any_trace) {
    for (size_t i = 0; i < inputs.size(); ++i)
      if (kinds[i] == TraceInputKind::None)
        throw UsageError(inputs[i] + ": not a trace (several inputs must all be Chrome trace JSON or oneDNN logs)");
    TraceFoldOptions to;
    to.lenient = cli.partial;
    to.progress = Progress::default_enabled();
    to.gpu = gpu;
    to.gpu_idle = gpu_idle;
    to.full_kernel_names = full_kernel_names;
    to.label = label;
    FoldedProfile profile = fold_trace_inputs(inputs, kinds, to, [&](const std::string& path, const std::string& w) {
      std::cerr << "fgtool fold: " << terminal_safe(path == "-" ? "<stdin>" : path) << ": " << terminal_safe(w) << "\n";
    });
    if (ops) profile = trace_op_view(profile);
    AtomicOutput out(cli.output);
    if (with_header) out.write(units_header_line(profile.units));
    write_folded(profile, out);
    out.commit();
    return 0;
  }
  if (gpu) throw UsageError(cli.input + ": --gpu reads a PyTorch/Kineto trace (JSON), not perf.data");
  if (inputs.size() > 1) throw UsageError("one perf.data at a time (several inputs: traces only)");
  // ---- end traces helper ----
  refuse_other_profiles(cli.input);
  FoldOptions fo = to_fold_options(cli, vm);
  Progress timer("fold", 0, fo.progress);
  FoldStats stats;
  FoldTeardown teardown;  // the fold's state goes while the profile is written
  FoldedProfile profile = fold_perf_data(cli.input, fo, &stats, &teardown);
  if (ops) profile = framework_op_view(profile, /*keep_root=*/false);  // traces helper: lib/traces/framework_ops.h
  AtomicOutput out(cli.output);
  if (with_header) out.write(units_header_line(profile.units));
  write_folded(profile, out);
  out.commit();
  report_fold_stats(cli.input, fo, stats, std::cerr, cli.stats);
  timer.finish(std::to_string(profile.stack_count()) + " stacks");
  return 0;
}

const Registration reg{CommandInfo{
    "fold", "fold perf.data into folded stacks (on-CPU, --off-cpu, --wall)",
    "fgtool fold [options] perf.data [-o OUT.folded]",
    "  fgtool fold perf.data > out.folded                 # like perf script | stackcollapse-perf.pl\n"
    "  fgtool fold perf.data -o out.folded                # the same, first line '# fgtool units=ns'\n"
    "  fgtool fold --tid --kernel perf.data -o t.folded   # comm-PID/TID roots, _[k] on kernel frames\n"
    "  fgtool fold --off-cpu sched.data -o off.folded     # blocked time (us) from sched_switch\n"
    "  fgtool fold --wall wall.data | fgtool svg - -o wall.svg\n"
    "  perf record -g -o - ./app | fgtool fold -          # pipe mode\n"
    "  fgtool fold --symfs /srv/rootfs --kallsyms kallsyms.txt other-host.data\n"
    "  fgtool fold trace.json -o t.folded       # Chrome trace JSON: PROCESS;THREAD;spans, self time in us\n"
    "  fgtool fold --gpu x.pt.trace.json.gz     # Kineto: ...;aten::addmm;cudaLaunchKernel;[gpu] KERNEL, device us\n"
    "  fgtool fold --gpu --idle --label rank rank*.pt.trace.json.gz   # + stream idle gaps; one root per rank\n"
    "  fgtool fold --ops perf.data -o cpu-ops.folded; fgtool diff cpu-ops.folded gpu.folded  # op by op\n"
    "  ONEDNN_VERBOSE=1 ./app > v.log; fgtool fold --onednn-verbose v.log  # primitive;impl;shape, us\n",
    run_fold, 20}};

}  // namespace
}  // namespace fg::cli
