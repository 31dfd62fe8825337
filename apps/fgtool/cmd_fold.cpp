// fgtool fold: perf.data -> folded stacks (on-CPU, off-CPU or wall clock).
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
#include "traces/trace_inputs.h"  // traces helper: Chrome trace JSON, oneDNN verbose logs

namespace fg::cli {
namespace {

int run_fold(const std::vector<std::string>& args) {
  FoldCliOptions cli;
  po::options_description options("Options");
  add_fold_options(options, cli);
  options.add_options()("output,o", po::value(&cli.output)->default_value("-"), "output file ('-' = stdout)")(
      "input", po::value(&cli.input), "perf.data (file or pipe mode; '-' = stdin)");
  bool header = false, no_header = false;
  options.add_options()
    ("units-header", po::bool_switch(&header),
     "start the output with '# fgtool units=ns' (the default with -o FILE; flamegraph.pl and inferno skip the line)")
    ("no-units-header", po::bool_switch(&no_header),
     "no units line even with -o (stdout never has one: it stays what stackcollapse-perf.pl writes)");
  bool onednn_verbose = false;  // traces helper (lib/traces)
  options.add_options()("onednn-verbose", po::bool_switch(&onednn_verbose),
                        "input is a oneDNN verbose log: stacks primitive;implementation;shape, weight us");
  po::positional_options_description positional;
  positional.add("input", 1);
  po::variables_map vm;
  if (!parse_args("fold", args, options, positional, vm)) return 0;
  if (cli.input.empty()) throw UsageError("no input file (see 'fgtool help fold')");
  if (header && no_header) throw UsageError("--units-header and --no-units-header exclude each other");
  // The unit survives `fold -o x.folded && report x.folded` through a first
  // comment line; stdout stays byte-for-byte the drop-in format by default.
  const bool with_header = header || (cli.output != "-" && !no_header);
  // ---- traces helper: Chrome trace JSON (detected) and oneDNN verbose logs (lib/traces) ----
  if (TraceInputKind kind = onednn_verbose ? TraceInputKind::OnednnVerbose : detect_trace_input(cli.input);
      kind != TraceInputKind::None) {
    TraceFoldOptions to;
    to.lenient = cli.partial;
    to.progress = Progress::default_enabled();
    FoldedProfile profile = fold_trace_input(cli.input, kind, to, [&](const std::string& w) {
      std::cerr << "fgtool fold: " << terminal_safe(cli.input) << ": " << terminal_safe(w) << "\n";
    });
    AtomicOutput out(cli.output);
    if (with_header) out.write(units_header_line(profile.units));
    write_folded(profile, out);
    out.commit();
    return 0;
  }
  // ---- end traces helper ----
  FoldOptions fo = to_fold_options(cli, vm);
  Progress timer("fold", 0, fo.progress);
  FoldStats stats;
  FoldedProfile profile = fold_perf_data(cli.input, fo, &stats);
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
    "  ONEDNN_VERBOSE=1 ./app > v.log; fgtool fold --onednn-verbose v.log  # primitive;impl;shape, us\n",
    run_fold, 20}};

}  // namespace
}  // namespace fg::cli
