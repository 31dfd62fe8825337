// fgtool info: what a user checks first about a recording.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>

#include "categories/stack_gaps.h"
#include "command.h"
#include "diagnostics/input_error.h"
#include "diagnostics/terminal_text.h"
#include "fold_cli.h"
#include "perf/perf_data_reader.h"

namespace fg::cli {
namespace {

std::string seconds(uint64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f s", double(ns) / 1e9);
  return buf;
}

int run_info(const std::vector<std::string>& args) {
  FoldCliOptions cli;
  po::options_description options("Options");
  add_fold_options(options, cli);
  options.add_options()("input", po::value(&cli.input), "perf.data");
  po::positional_options_description positional;
  positional.add("input", 1);
  po::variables_map vm;
  if (!parse_args("info", args, options, positional, vm)) return 0;
  if (cli.input.empty()) throw UsageError("no input file (see 'fgtool help info')");
  FoldOptions fo = to_fold_options(cli, vm);
  fo.object_statuses = true;
  FoldStats st;
  FoldedProfile profile = fold_perf_data(cli.input, fo, &st);
  const PerfFileInfo& f = st.file;
  const ReadStats& r = st.read;
  std::ostream& o = std::cout;
  // Everything below quotes the recording (paths, names, the command line):
  // escaped so that it cannot drive the terminal.
  auto t = [](const std::string& s) { return terminal_safe(s); };
  o << "file:        " << t(cli.input) << (f.pipe_mode ? " (pipe mode)" : "") << ", " << f.file_size << " bytes";
  if (!f.dir_files.empty())
    o << " (a `perf record --threads` directory: 'data' and " << f.dir_files.size() << " data.N file"
      << (f.dir_files.size() == 1 ? "" : "s") << ")";
  o << "\n";
  o << "perf:        " << (f.perf_version.empty() ? "?" : t(f.perf_version)) << "\n";
  o << "host:        " << (f.hostname.empty() ? "?" : t(f.hostname)) << ", " << (f.os_release.empty() ? "?" : t(f.os_release))
    << ", " << (f.arch.empty() ? "?" : t(f.arch)) << ", " << f.nr_cpus_online << "/" << f.nr_cpus_avail << " CPUs online\n";
  if (!f.cpu_desc.empty()) o << "cpu:         " << t(f.cpu_desc) << "\n";
  o << "command:     ";
  for (const auto& a : f.cmdline) o << t(a) << " ";
  o << "\n";
  if (r.last_sample_time > r.first_sample_time)
    o << "duration:    " << seconds(r.last_sample_time - r.first_sample_time) << " (samples from " << seconds(r.first_sample_time)
      << " to " << seconds(r.last_sample_time) << ")\n";
  if (f.compressed || r.compressed_bytes)
    o << "compressed:  zstd, " << r.compressed_bytes << " -> " << r.decompressed_bytes << " bytes (ratio "
      << int(r.compression_ratio() * 10) / 10.0 << ")\n";
  o << "events:\n";
  for (size_t i = 0; i < f.attrs.size(); ++i) {
    const EventAttr& a = f.attrs[i];
    uint64_t n = i < r.samples_per_attr.size() ? r.samples_per_attr[i] : 0;
    o << "  " << (a.name.empty() ? "event " + std::to_string(i) : t(a.name)) << ": " << n << " samples";
    std::string how;
    if (a.has(sample_bits::CALLCHAIN)) how += " callchains";
    if (a.has(sample_bits::STACK_USER)) how += ", dwarf (" + std::to_string(a.sample_stack_user) + "-byte stacks)";
    if (a.context_switch()) how += ", switch events";
    if (!how.empty()) o << " [" << how.substr(how[0] == ' ' ? 1 : 0) << "]";
    o << "\n";
  }
  o << "records:    ";
  for (const auto& kv : r.records_by_type) o << " " << perf_record_type_name(kv.first) << "=" << kv.second;
  o << "\n";
  o << "lost:        " << r.lost_events << " events in " << r.lost_records << " LOST records, " << r.lost_samples
    << " samples in " << r.lost_samples_records << " LOST_SAMPLES records\n";
  o << "processes:   " << st.processes << "\n";
  o << "folded:      " << st.folded_samples << " samples of " << (st.event.empty() ? "-" : t(st.event)) << " into "
    << profile.stack_count() << " stacks, " << st.unique_frames << " distinct frames; " << st.unknown_frames << " of "
    << st.named_addresses << " distinct addresses named had no symbol\n";
  if (st.dwarf) {
    o << "unwinding:   " << st.unwind.samples << " DWARF stacks, " << st.unwind.complete() << " complete, "
      << st.unwind.truncated() << " cut short";
    for (size_t i = 1; i < kUnwindOutcomeCount; ++i)
      if (st.unwind.by_outcome[i]) o << "; " << to_string(UnwindOutcome(i)) << " " << st.unwind.by_outcome[i];
    o << " (" << st.unwind.dwfl_created << " Dwfl for " << st.processes << " processes, at most "
      << st.unwind.dwfl_live_peak << " at once; debug-file loads skipped, no .debug_frame: "
      << st.unwind.debug_files_skipped << ")\n";
    if (!st.unwind_error.empty()) o << "             last libdwfl error: " << t(st.unwind_error) << "\n";
  }
  {
    // Cut-short DWARF stacks and broken frame-pointer chains both end in one
    // root-side "[unknown]": the share of weight that lost its callers.
    profile.finalize();
    StackGaps gaps = find_stack_gaps(profile);
    char pct[32];
    std::snprintf(pct, sizeof pct, "%.1f%%", 100 * gaps.share());
    o << "cut short:   " << pct << " of the weight is in stacks whose callers are missing (root-side [unknown])";
    if (st.cut_short_samples)
      o << "; " << st.cut_short_samples << " DWARF samples ran past the copied user stack";
    o << "\n";
    if (gaps.share() >= 0.01) o << "             " << stack_gap_advice() << "\n";
  }
  o << "kernel:      " << (st.kernel.source.empty() ? "no symbols" : t(st.kernel.source)) << ", " << st.kernel.symbols
    << " symbols, " << st.kernel.unresolved << " of " << st.kernel.lookups << " lookups unresolved";
  if (st.kernel.kptr_restricted) o << " (kptr_restrict hides addresses)";
  if (!st.kernel.problem.empty()) o << " - " << t(st.kernel.problem);
  o << "\n";
  auto objects = st.objects;
  std::sort(objects.begin(), objects.end(), [](const ObjectStatus& a, const ObjectStatus& b) {
    return a.lookups != b.lookups ? a.lookups > b.lookups : a.path < b.path;
  });
  o << "objects:     " << objects.size() << " (by lookups)\n";
  for (const auto& ob : objects) {
    o << "  " << t(ob.path) << "\n      ";
    o << (ob.found ? "found " + t(ob.opened_path) : std::string("NOT FOUND"));
    o << ", build-id " << (ob.build_id_hex.empty() ? "none" : ob.build_id_hex.substr(0, 16) + "...");
    o << ", " << (ob.has_symbols ? std::to_string(ob.symbol_count) + " symbols (" + t(ob.symtab_source) + ")" : "no symbols");
    o << (ob.has_debuginfo ? ", debuginfo" + (ob.debug_file.empty() ? std::string() : " " + t(ob.debug_file)) : ", no debuginfo");
    o << ", " << ob.unresolved << "/" << ob.lookups << " unresolved";
    if (!ob.problem.empty()) o << "\n      problem: " << t(ob.problem);
    o << "\n";
  }
  report_fold_stats(cli.input, fo, st, std::cerr, false);
  return 0;
}

const Registration reg{CommandInfo{"info", "summarise a perf.data: host, events, lost records, symbols, unwinding",
                                   "fgtool info [options] perf.data",
                                   "  fgtool info perf.data\n"
                                   "  fgtool info --symfs /srv/rootfs perf.data   # check what resolves with a sysroot\n",
                                   run_info, 25}};

}  // namespace
}  // namespace fg::cli
