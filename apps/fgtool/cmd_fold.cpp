// fgtool fold: perf.data -> folded stacks (on-CPU, off-CPU or wall clock).
#include <cstdio>
#include <iostream>
#include <sstream>

#include "command.h"
#include "diagnostics/atomic_output.h"
#include "diagnostics/input_error.h"
#include "diagnostics/progress.h"
#include "fold_cli.h"
#include "fold/fold_perf_data.h"
#include "folded/folded_writer.h"

namespace fg::cli {
namespace {

int run_fold(const std::vector<std::string>& args) {
  FoldCliOptions cli;
  po::options_description options("Options");
  add_fold_options(options, cli);
  options.add_options()("output,o", po::value(&cli.output)->default_value("-"), "output file ('-' = stdout)")(
      "input", po::value(&cli.input), "perf.data (file or pipe mode; '-' = stdin)");
  po::positional_options_description positional;
  positional.add("input", 1);
  po::variables_map vm;
  if (!parse_args("fold", args, options, positional, vm)) return 0;
  if (cli.input.empty()) throw UsageError("no input file (see 'fgtool help fold')");
  FoldOptions fo = to_fold_options(cli, vm);
  Progress timer("fold", 0, fo.progress);
  FoldStats stats;
  FoldedProfile profile = fold_perf_data(cli.input, fo, &stats);
  AtomicOutput out(cli.output);
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
    "  fgtool fold --tid --kernel perf.data -o t.folded   # comm-PID/TID roots, _[k] on kernel frames\n"
    "  fgtool fold --off-cpu sched.data -o off.folded     # blocked time (us) from sched_switch\n"
    "  fgtool fold --wall wall.data | fgtool svg - -o wall.svg\n"
    "  perf record -g -o - ./app | fgtool fold -          # pipe mode\n"
    "  fgtool fold --symfs /srv/rootfs --kallsyms kallsyms.txt other-host.data\n",
    run_fold, 20}};

}  // namespace
}  // namespace fg::cli
