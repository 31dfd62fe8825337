// `fgtool collapse`: perf script text -> folded stacks (stackcollapse-perf.pl
// conventions, minus its name-cutting defects), on-CPU or off-CPU. The logic
// is lib/collapse; this file maps options and reports what was skipped.
#include <iostream>

#include "collapse/perf_script_collapser.h"
#include "command.h"
#include "diagnostics/atomic_output.h"
#include "diagnostics/input_error.h"
#include "diagnostics/progress.h"
#include "diagnostics/terminal_text.h"
#include "folded/folded_writer.h"

namespace {

namespace po = boost::program_options;

int run_collapse(const std::vector<std::string>& args) {
  std::string input = "-", output = "-", state;
  fg::CollapseOptions opt;
  po::options_description options("Options");
  options.add_options()
    ("input", po::value(&input), "perf script text ('-' or none = stdin; .gz read too)")
    ("output,o", po::value(&output), "folded output ('-' = stdout, the default)")
    ("pid", po::bool_switch(), "root frame 'comm-PID'")
    ("tid", po::bool_switch(), "root frame 'comm-PID/TID'")
    ("count", po::bool_switch(&opt.count_samples), "weight 1 per sample even when a period is printed")
    ("event", po::value(&opt.event), "fold samples of this event (default: the first seen)")
    ("kernel", po::bool_switch(&opt.tidy.annotate_kernel), "append _[k] to kernel frames")
    ("jit", po::bool_switch(&opt.tidy.annotate_jit), "append _[j] to JIT frames (/tmp/perf-PID.map)")
    ("all", po::bool_switch(), "both --kernel and --jit")
    ("addrs", po::bool_switch(&opt.tidy.raw_addresses), "unknown symbols as [dso <address>]")
    ("inline", po::bool_switch(&opt.keep_inline), "keep the frames perf marks (inlined)")
    ("off-cpu", po::bool_switch(&opt.off_cpu),
     "off-CPU microseconds per stack from sched:sched_switch samples and switch-ins")
    ("state", po::value(&state), "with --off-cpu: count only these prev_state letters (e.g. S,D; "
                                 "'voluntary', 'involuntary')")
    ("min-block", po::value(&opt.min_block_us), "with --off-cpu: ignore intervals shorter than USEC")
    ("lenient", po::bool_switch(&opt.lenient), "skip malformed lines (and their sample) and count them")
    ("threads", po::value(&opt.threads)->default_value(0),
     "threads (0 = one per core): on-CPU text is cut at blank lines and folded on that many threads "
     "(off-CPU pairing uses one); 1 = a single thread. Output is the same")
    ("quiet,q", po::bool_switch(), "no summary on stderr");
  po::positional_options_description positional;
  positional.add("input", 1);
  po::variables_map vm;
  if (!fg::cli::parse_args("collapse", args, options, positional, vm)) return 0;
  if (vm["tid"].as<bool>())
    opt.root = fg::CollapseOptions::Root::CommPidTid;
  else if (vm["pid"].as<bool>())
    opt.root = fg::CollapseOptions::Root::CommPid;
  if (vm["all"].as<bool>()) opt.tidy.annotate_kernel = opt.tidy.annotate_jit = true;
  if (!state.empty()) opt.state_mask = fg::parse_state_filter(state);
  if ((!state.empty() || vm.count("min-block")) && !opt.off_cpu)
    throw fg::UsageError("--state and --min-block need --off-cpu");
  if (opt.min_block_us < 0) throw fg::UsageError("--min-block must not be negative");
  opt.progress = fg::Progress::default_enabled();

  fg::AtomicOutput out(output);
  fg::CollapseStats stats;
  fg::FoldedProfile profile = fg::collapse_perf_script(input, opt, &stats);
  if (opt.off_cpu) {
    // Off-CPU sums fractional microseconds; print whole ones, as offcputime.
    profile = fg::with_rounded_weights(profile);
  }
  fg::write_folded(profile, out);
  out.commit();
  // Limits hit on hostile input are warnings even with --quiet.
  if (stats.truncated_stacks)
    std::cerr << "collapse: warning: " << stats.truncated_stacks << " samples deeper than " << fg::kMaxStackDepth
              << " frames cut to their leaf-most " << fg::kMaxStackDepth << "\n";
  if (stats.truncated_names)
    std::cerr << "collapse: warning: " << stats.truncated_names << " frame names longer than "
              << fg::kMaxFrameNameBytes << " bytes truncated\n";

  if (!vm["quiet"].as<bool>()) {
    std::ostream& e = std::cerr;
    if (opt.off_cpu) {
      e << "collapse: " << stats.intervals << " off-CPU intervals from " << stats.switch_outs << " switch-outs, "
        << profile.stack_count() << " stacks, " << uint64_t(profile.total()) << " us";
      if (stats.pending_at_end) e << "; " << stats.pending_at_end << " still off-CPU at the end (not counted)";
      if (stats.closed_by_next_record)
        e << "; " << stats.closed_by_next_record
          << " of the intervals had no switch-in line and end at the task's next sample, switch-out or exit (upper "
             "bounds; print PERF_RECORD_SWITCH lines with 'perf script --show-switch-events' where the recording has "
             "them)";
      if (stats.next_record_dropped)
        e << "; " << stats.next_record_dropped << " left out: their switch-in was not printed";
      if (stats.filtered_state || stats.filtered_short)
        e << "; filtered " << stats.filtered_state << " by --state, " << stats.filtered_short << " by --min-block";
      e << "\n";
      if (stats.switch_outs && !stats.switch_ins && !stats.intervals && !stats.closed_by_next_record)
        e << "collapse: no switch-in seen: record with 'perf record -e sched:sched_switch --switch-events -g' "
             "and print with 'perf script --show-switch-events'\n";
      if (!stats.switch_outs)
        e << "collapse: no sched:sched_switch samples (record with -e sched:sched_switch --switch-events -g)\n";
    } else {
      e << "collapse: " << stats.samples_folded << " samples of "
        << (stats.event.empty() ? "?" : fg::terminal_safe(stats.event))
        << ", " << profile.stack_count() << " stacks";
      if (stats.samples_other_event) e << "; " << stats.samples_other_event << " samples of other events skipped";
      e << "\n";
      if (!stats.samples_folded && stats.samples)
        e << "collapse: nothing folded: for sched:sched_switch recordings use --off-cpu\n";
    }
    if (stats.malformed_skipped)
      e << "collapse: skipped " << stats.malformed_skipped << " malformed lines (first: "
        << fg::terminal_safe(stats.first_malformed)
        << ")\n";
  }
  return 0;
}

fg::cli::Registration reg{fg::cli::CommandInfo{
    "collapse", "fold 'perf script' text into folded stacks (on- or off-CPU)",
    "fgtool collapse [options] [PERF_SCRIPT_TXT|-] [-o OUT]",
    "  perf script -i perf.data | fgtool collapse > out.folded\n"
    "  perf script -i perf.data > perf.txt && fgtool collapse perf.txt --pid -o out.folded\n"
    "  fgtool collapse perf.txt --kernel --event cpu-clock -o out.folded\n"
    "  perf script -i sw.data --show-switch-events -F comm,pid,tid,time,event,trace,ip,sym,dso \\\n"
    "      | fgtool collapse --off-cpu --state S,D --min-block 100 > offcpu.folded\n",
    run_collapse, 25}};

}  // namespace
