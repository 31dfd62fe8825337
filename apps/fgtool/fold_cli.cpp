#include "fold_cli.h"

#include <cstdio>
#include <sstream>

#include "categories/stack_gaps.h"
#include "diagnostics/input_error.h"
#include "diagnostics/progress.h"
#include "diagnostics/terminal_text.h"

namespace fg::cli {

void add_fold_options(po::options_description& options, FoldCliOptions& c) {
  po::options_description view("View");
  view.add_options()
      ("off-cpu", po::bool_switch(&c.off_cpu), "off-CPU time (us) from sched:sched_switch, per blocked stack")
      ("wall", po::bool_switch(&c.wall), "on-CPU + off-CPU in one profile (us); off-CPU leaves end in [off-cpu: STATE]")
      ("state", po::value(&c.state), "off-CPU: keep only these task states, e.g. S, D, R or SD")
      ("min-block", po::value(&c.min_block), "off-CPU: drop blocks shorter than USEC")
      ("include-unfinished", po::bool_switch(&c.include_unfinished), "off-CPU: count tasks still blocked at the end");
  po::options_description naming("Stack naming (stackcollapse-perf.pl conventions)");
  naming.add_options()
      ("pid", po::bool_switch(&c.pid), "root frame comm-PID")
      ("tid", po::bool_switch(&c.tid), "root frame comm-PID/TID")
      ("kernel", po::bool_switch(&c.kernel), "annotate kernel frames with _[k]")
      ("jit", po::bool_switch(&c.jit), "annotate JIT frames with _[j]")
      ("all", po::bool_switch(&c.all), "all annotations (--kernel --jit)")
      ("addrs", po::bool_switch(&c.addrs), "unknown frames as [dso+0xOFFSET] instead of [dso]")
      ("merge-jit", po::bool_switch(&c.merge_jit),
       "unnamed code in anonymous executable memory as [JIT] in every process (default: [perf-PID.map], "
       "as perf script names it)")
      ("call-sites", po::bool_switch(&c.call_sites),
       "name callers of frame-pointer stacks by their call instruction (return address - 1), as DWARF "
       "stacks are; perf script uses the return address, which names the next function where a call "
       "ends its function (noreturn calls)")
      ("inline", po::bool_switch(&c.inline_frames), "add inlined functions from DWARF")
      ("no-demangle", po::bool_switch(&c.no_demangle), "keep C++ names mangled")
      ("count", po::bool_switch(&c.count), "weight 1 per sample instead of the period");
  po::options_description filters("Selection");
  filters.add_options()
      ("event", po::value(&c.event), "fold this event (default: the first sampling event)")
      ("comm", po::value(&c.comm), "only these commands (comma-separated)")
      ("pid-filter", po::value(&c.pid_filter), "only these pids (comma-separated)")
      ("tid-filter", po::value(&c.tid_filter), "only these tids (comma-separated)")
      ("time", po::value(&c.time), "START,END in seconds as perf script prints times (either may be empty)")
      ("partial", po::bool_switch(&c.partial), "fold what was read before damage instead of failing")
      ("max-memory", po::value(&c.max_memory)->value_name("SIZE"),
       "memory budget of reading perf.data, e.g. 4G or 'unlimited' (default: 16 x the input's size, at least 256M, "
       "at most 16G; zstd output may reach 256 x the input or 4 x the budget). Records buffered between "
       "FINISHED_ROUNDs and the process maps of forked processes count. Exceeding it is an error naming the byte "
       "offset; with --partial, what was read before it is folded");
  po::options_description sym("Symbols");
  sym.add_options()
      ("symfs", po::value(&c.symfs), "look for binaries under this root directory")
      ("kallsyms", po::value(&c.kallsyms), "kernel symbols file (default: when the host and kernel match, perf's build-id cache copy of kallsyms for the recording's kernel, else /proc/kallsyms)")
      ("buildid-dir", po::value(&c.buildid_dir), "perf's build-id cache (default ~/.debug)")
      ("debuginfod", po::bool_switch(&c.debuginfod), "allow debuginfod downloads (off by default: they can stall)")
      ("max-stack", po::value(&c.max_stack)->default_value(127), "DWARF unwinding depth limit")
      ("threads", po::value(&c.threads)->default_value(0), "threads (0 = one per core, at most 2): with 2, new stacks are symbolised on a second thread (frame pointers, on-CPU), or records are read on one thread while stacks are folded and unwound (DWARF) on two; 1 = a single thread. Output is the same")
      ("stats", po::bool_switch(&c.stats), "print reading, unwinding and symbol statistics on stderr");
  options.add(view).add(naming).add(filters).add(sym);
}

namespace {
template <typename T>
std::vector<T> split_list(const std::string& text, const char* what) {
  std::vector<T> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    if constexpr (std::is_same_v<T, std::string>) {
      out.push_back(item);
    } else {
      try {
        size_t used = 0;
        long v = std::stol(item, &used);
        if (used != item.size()) throw std::invalid_argument(item);
        out.push_back(T(v));
      } catch (const std::exception&) {
        throw UsageError(std::string(what) + ": '" + item + "' is not a number");
      }
    }
  }
  return out;
}

// "4G", "512M", "1048576", "unlimited" -> bytes (ReadBudget::kUnlimited).
uint64_t parse_memory_size(const std::string& s) {
  if (s == "unlimited" || s == "none") return ReadBudget::kUnlimited;
  size_t used = 0;
  unsigned long long v = 0;
  try {
    v = std::stoull(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  uint64_t unit = 1;
  std::string suffix = used ? s.substr(used) : "";
  if (suffix == "K" || suffix == "k" || suffix == "KiB") unit = 1ull << 10;
  else if (suffix == "M" || suffix == "m" || suffix == "MiB") unit = 1ull << 20;
  else if (suffix == "G" || suffix == "g" || suffix == "GiB") unit = 1ull << 30;
  else if (suffix == "T" || suffix == "t" || suffix == "TiB") unit = 1ull << 40;
  else if (!suffix.empty()) used = 0;
  if (!used || s[0] == '-' || v == 0 || v > UINT64_MAX / unit)
    throw UsageError("--max-memory: '" + s + "' is not a size such as 4G, 512M or 'unlimited'");
  return uint64_t(v) * unit;
}

double parse_seconds(const std::string& s) {
  try {
    size_t used = 0;
    double v = std::stod(s, &used);
    if (used != s.size() || v < 0) throw std::invalid_argument(s);
    return v;
  } catch (const std::exception&) {
    throw UsageError("--time: '" + s + "' is not a time in seconds");
  }
}
}  // namespace

FoldOptions to_fold_options(const FoldCliOptions& c, const po::variables_map&) {
  FoldOptions o;
  if (c.off_cpu && c.wall) throw UsageError("--off-cpu and --wall exclude each other");
  o.view = c.off_cpu ? FoldView::off_cpu : c.wall ? FoldView::wall : FoldView::on_cpu;
  o.root_with_pid = c.pid;
  o.root_with_tid = c.tid;
  o.annotate_kernel = c.kernel || c.all;
  o.annotate_jit = c.jit || c.all;
  o.addrs = c.addrs;
  o.merge_jit = c.merge_jit;
  o.call_sites = c.call_sites;
  o.count = c.count;
  o.event = c.event;
  o.comms = split_list<std::string>(c.comm, "--comm");
  o.pids = split_list<int32_t>(c.pid_filter, "--pid-filter");
  o.tids = split_list<int32_t>(c.tid_filter, "--tid-filter");
  if (!c.time.empty()) {
    size_t comma = c.time.find(',');
    if (comma == std::string::npos) throw UsageError("--time wants START,END (either may be empty)");
    std::string a = c.time.substr(0, comma), b = c.time.substr(comma + 1);
    if (!a.empty()) o.time_start = parse_seconds(a);
    if (!b.empty()) o.time_end = parse_seconds(b);
    if (o.time_start >= 0 && o.time_end >= 0 && o.time_start > o.time_end)
      throw UsageError("--time " + c.time + ": START is after END");
  }
  for (char ch : c.state)
    if (std::string("RSDTtXZPI").find(ch) == std::string::npos)
      throw UsageError(std::string("--state: unknown task state '") + ch + "' (use R, S, D, T, t, X, Z, P, I)");
  o.states = c.state;
  o.min_block_us = c.min_block;
  o.include_unfinished = c.include_unfinished;
  o.partial = c.partial;
  if (!c.max_memory.empty()) o.max_memory = parse_memory_size(c.max_memory);
  o.progress = Progress::default_enabled();
  o.symbols.symfs = c.symfs;
  o.symbols.kallsyms_path = c.kallsyms;
  o.symbols.buildid_dir = c.buildid_dir;
  o.symbols.demangle = !c.no_demangle;
  o.symbols.inline_frames = c.inline_frames;
  o.symbols.debuginfod = c.debuginfod;
  o.unwind.max_frames = c.max_stack;
  o.threads = c.threads;
  return o;
}

void report_fold_stats(const std::string& input, const FoldOptions& o, const FoldStats& s, std::ostream& err,
                       bool verbose) {
  // Warnings quote the input (event names, paths): escaped for the terminal.
  const std::string p = "fgtool: " + terminal_safe(input) + ": ";
  for (const auto& w : s.warnings) err << p << "warning: " << terminal_safe(w) << "\n";
  if (s.lost_events || s.lost_samples)
    err << p << "perf lost " << s.lost_events << " events and " << s.lost_samples
        << " samples while recording (the profile under-counts; record with a lower -F or larger -m)\n";
  // perf promises that a record is at most one FINISHED_ROUND late; on a
  // loaded machine some are later, and arrive after later times were folded.
  if (s.read.unordered)
    err << p << "warning: " << s.read.unordered
        << " records arrived out of time order (perf wrote them more than one round late); symbols and off-CPU "
           "times around them may be off\n";
  // A second switch-out before any switch-in: the switch-in was not recorded
  // (perf lost it, or the ring buffer wrapped) and that block's length is unknown.
  if (o.view != FoldView::on_cpu && !s.off_cpu_fallback && s.off_cpu.replaced)
    err << p << "warning: " << s.off_cpu.replaced
        << " off-CPU blocks left out: their switch-in was not recorded (the off-CPU time under-counts)\n";
  // Without SWITCH records a block ends at the sched_switch that names the
  // task as next_pid, where one was recorded (system-wide recordings; on
  // these VMs switches from the idle task mostly are not: a busy -a
  // recording paired 3.2 K of 9.5 K), else at the task's next record.
  if (o.view != FoldView::on_cpu && s.off_cpu_fallback) {
    const OffCpuStats& c = s.off_cpu;
    if (c.paired == 0)
      err << p << "no switch-in records (recorded without --switch-events): off-CPU times run to each task's next "
                  "record and are upper bounds.";
    else
      err << p << "recorded without --switch-events: " << c.paired << " of " << c.paired + c.closed_by_fallback
          << " off-CPU blocks end at a sched_switch that names the task as next_pid; the other "
          << c.closed_by_fallback
          << " have no recorded switch-in (none names the task before its next record) and run to that record: "
             "upper bounds.";
    err << " Record with 'fgtool record --off-cpu' or 'perf record -e sched:sched_switch --switch-events -g'.\n";
  }
  // An empty profile says why: a filter that matched nothing (a --time
  // range outside the recording, a mistyped --comm) would otherwise look
  // like a recording without samples.
  if (o.view == FoldView::on_cpu && s.samples > 0 && s.folded_samples == 0 && s.filtered_samples > 0) {
    err << p << "warning: the filters (--comm, --pid-filter, --tid-filter, --time) left none of the "
        << s.filtered_samples << " samples of " << (s.event.empty() ? "the event" : terminal_safe(s.event));
    const uint64_t first = s.read.first_sample_time ? s.read.first_sample_time : s.file.first_sample_time;
    const uint64_t last = s.read.last_sample_time ? s.read.last_sample_time : s.file.last_sample_time;
    if (o.time_start >= 0 || o.time_end >= 0) {
      char range[96];
      std::snprintf(range, sizeof range, "; the samples run from %.6f to %.6f s", double(first) / 1e9,
                    double(last) / 1e9);
      if (last >= first && last) err << range;
    }
    err << "\n";
  }
  if (s.dwarf && s.unwind.samples > 0) {
    uint64_t cut = s.unwind.truncated();
    double pct = 100.0 * double(cut) / double(s.unwind.samples);
    if (verbose || pct >= 5.0) {
      err << p << "DWARF unwinding: " << s.unwind.samples << " stacks, " << s.unwind.complete() << " complete, " << cut
          << " cut short (" << (pct < 10 ? std::to_string(int(pct * 10) / 10.0).substr(0, 3) : std::to_string(int(pct)))
          << "%)";
      bool first = true;
      for (size_t i = 1; i < kUnwindOutcomeCount; ++i) {
        if (!s.unwind.by_outcome[i]) continue;
        err << (first ? ": " : ", ") << to_string(UnwindOutcome(i)) << " " << s.unwind.by_outcome[i];
        first = false;
      }
      err << "\n";
      if (s.cut_short_samples)
        err << p << s.cut_short_samples << " samples ran past the copied user stack and keep a root-side [unknown] "
            << "frame; " << stack_gap_advice() << "\n";
    }
  }
  if (verbose) {
    err << p << s.samples << " samples, " << s.folded_samples << " folded (event " << (s.event.empty() ? "-" : terminal_safe(s.event))
        << "), " << s.filtered_samples << " filtered, " << s.other_event_samples << " of other events; "
        << s.unique_raw_stacks << " distinct raw stacks, " << s.unique_frames << " distinct frames; " << s.unknown_frames
        << " of " << s.named_addresses << " addresses looked up had no symbol\n";
    if (s.frames)
      err << p << "symbolising: " << s.memo_frames << " of " << s.frames
          << " frames came from the path memo (callers shared with a recent stack), " << s.alike_frames
          << " were named by their object or JIT process alone (no symbol there to look up), " << s.named_addresses
          << " addresses were symbolised, " << s.preloaded_objects << " objects opened ahead\n";
    if (s.placed_stacks)
      err << p << "symbolising thread: it placed " << s.placed_by_symbolising_thread << " of " << s.placed_stacks
          << " new stacks in the tree, the folding thread the rest; " << s.known_stacks
          << " of them had been seen before their raw-stack table was forgotten (their node was known: not named again)\n";
    if (o.view != FoldView::on_cpu)
      err << p << "off-CPU: " << s.off_cpu.switch_outs << " switch-outs, " << s.off_cpu.paired << " paired, "
          << s.off_cpu.closed_by_fallback << " closed by the next record, " << s.off_cpu.unfinished
          << " unfinished, " << s.off_cpu.replaced << " missed switch-ins, " << s.off_cpu.dropped_state
          << " filtered by state, " << s.off_cpu.dropped_short << " shorter than --min-block\n";
  }
}

}  // namespace fg::cli
