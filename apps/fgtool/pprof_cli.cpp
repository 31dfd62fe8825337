#include "pprof_cli.h"

#include <cstdio>
#include <iostream>

#include "categories/category_rules.h"
#include "diagnostics/atomic_output.h"
#include "diagnostics/input_error.h"
#include "diagnostics/terminal_text.h"
#include "fold/fold_perf_data.h"
#include "fold_cli.h"
#include "pprof/pprof_export.h"
#include "pprof/pprof_reader.h"

namespace fg::cli {

void PprofInputCli::apply(ProfileLoadOptions& lo) const {
  lo.sample_index = sample_index;
  lo.tags.clear();
  for (const auto& t : tags) lo.tags.push_back(parse_tag(t));
}

void add_pprof_input_options(po::options_description& options, PprofInputCli& cli) {
  options.add_options()
      ("sample-index", po::value(&cli.sample_index), "pprof input: the sample value to use, by type name (cpu, "
                                                      "alloc_space) or index; default: the profile's default, else the last")
      ("tag", po::value(&cli.tags), "pprof input: keep samples with label KEY=VALUE (repeatable; all must match)");
}

bool wants_pprof_export(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if ((a == "-f" || a == "--format") && i + 1 < args.size()) return args[i + 1] == "pprof";
    if (a == "--format=pprof" || a == "-fpprof") return true;
  }
  return false;
}

std::unique_ptr<CategoryMatcher> set_pprof_output_options(PprofExportOptions& eo,
                                                          const std::vector<std::string>& labels,
                                                          const std::string& rules_file, bool categories) {
  for (const auto& l : labels) eo.labels.push_back(parse_tag(l));
  std::unique_ptr<CategoryMatcher> matcher;
  if (categories) {
    matcher = std::make_unique<CategoryMatcher>(CategoryRules::effective(rules_file));
    eo.categories = matcher.get();
  }
  return matcher;
}

int run_export_pprof(const std::vector<std::string>& args) {
  std::vector<std::string> inputs, labels;
  std::string format, rules_file, granularity = "addresses", addresses = "object";
  bool lenient = false, no_categories = false, uncompressed = false, no_source_lines = false;
  FoldCliOptions fold_cli;
  PprofInputCli pin;
  po::options_description options("Options");
  options.add_options()
      ("format,f", po::value(&format), "pprof")
      ("input", po::value(&inputs), "perf.data (addresses kept), folded text, trace JSON, pprof; several are merged "
                                    "at function level")
      ("label", po::value(&labels), "KEY=VALUE added to every sample (repeatable), e.g. host=$(hostname)")
      ("rules", po::value(&rules_file), "a rules JSON file added to the built-in category rules")
      ("no-categories", po::bool_switch(&no_categories), "leave out the category and phase labels")
      ("uncompressed", po::bool_switch(&uncompressed), "write the protobuf without gzip")
      ("no-source-lines", po::bool_switch(&no_source_lines), "perf.data: leave out DWARF file names and line numbers")
      ("granularity", po::value(&granularity)->default_value("addresses"),
       "perf.data: 'addresses' (locations with addresses as --addresses says, mappings, build-ids, comm/pid/tid labels) or "
       "'functions' (the folded stacks: a location per function, as from folded input; much faster on big "
       "system-wide recordings)")
      ("addresses", po::value(&addresses)->default_value("object"),
       "perf.data: 'object' (a mapping per object segment and a location per object offset, each process's "
       "addresses rebased onto the first's, as go tool pprof merges profiles) or 'process' (each process's own "
       "mappings and addresses; slower and larger on system-wide recordings)")
      ("lenient", po::bool_switch(&lenient), "skip malformed input records instead of failing");
  add_fold_options(options, fold_cli);
  options.add_options()("output,o", po::value(&fold_cli.output)->default_value("-"), "output file ('-' = stdout)");
  add_pprof_input_options(options, pin);
  po::positional_options_description positional;
  positional.add("input", -1);
  po::variables_map vm;
  if (!parse_args("export", args, options, positional, vm)) return 0;
  if (format != "pprof") throw UsageError("--format '" + format + "': expected pprof");
  if (granularity != "addresses" && granularity != "functions")
    throw UsageError("--granularity '" + granularity + "': expected addresses or functions");
  if (addresses != "object" && addresses != "process")
    throw UsageError("--addresses '" + addresses + "': expected object or process");
  if (inputs.empty()) inputs.push_back("-");

  PprofExportOptions eo;
  std::unique_ptr<CategoryMatcher> matcher = set_pprof_output_options(eo, labels, rules_file, !no_categories);
  eo.gzip = !uncompressed;
  eo.source_lines = !no_source_lines;
  eo.addresses = addresses == "process" ? PprofAddresses::process : PprofAddresses::object;
  std::string doc;
  const bool one_perf_data = inputs.size() == 1 && inputs[0] != "-" && looks_like_perf_data(read_file_head(inputs[0]));
  if (one_perf_data) {
    ProfileLoadOptions given;  // as load_profile says it for every other input
    pin.apply(given);
    if (std::string note = pprof_only_options_note(inputs[0], "perf.data", given); !note.empty())
      std::cerr << "fgtool export: warning: " << terminal_safe(note) << "\n";
    FoldOptions fo = to_fold_options(fold_cli, vm);
    if (lenient) fo.partial = true;
    FoldStats stats;
    PprofExportStats ps;
    const bool with_addresses = granularity == "addresses";
    if (with_addresses) {
      // perf.data: addresses, mappings, build-ids and per-thread labels.
      doc = pprof_from_perf_data(inputs[0], fo, eo, &stats, nullptr, &ps);
    } else {
      // The fold as `fgtool fold` makes it (its options apply), written as
      // folded input is: no per-raw-stack work beyond the fold's own.
      doc = pprof_from_folded(fold_perf_data(inputs[0], fo, &stats), eo);
    }
    report_fold_stats(inputs[0], fo, stats, std::cerr, fold_cli.stats);
    if (fold_cli.stats && with_addresses) {
      char line[400];
      std::snprintf(line, sizeof line,
                    "fgtool export: pprof: %llu samples, %llu locations, %llu functions, %llu mappings, %llu bytes; "
                    "%llu addresses looked up in DWARF (%llu objects, %.3f s); fold %.3f s, build %.3f s, encode%s %.3f s\n",
                    (unsigned long long)ps.samples, (unsigned long long)ps.locations, (unsigned long long)ps.functions,
                    (unsigned long long)ps.mappings, (unsigned long long)ps.bytes, (unsigned long long)ps.source_lookups,
                    (unsigned long long)ps.source_objects, ps.source_seconds, ps.fold_seconds, ps.build_seconds,
                    eo.gzip ? "+gzip" : "", ps.encode_seconds);
      std::cerr << line;
    }
  } else {
    ProfileLoadOptions lo;
    lo.lenient = lenient;
    pin.apply(lo);
    FoldedProfile profile = load_profiles(inputs, lo);
    if (profile.total() <= 0) std::cerr << "fgtool export: warning: no samples in the input\n";
    PprofExportStats st;
    doc = pprof_from_folded(profile, eo, &st);
    if (st.rounded_weights)
      std::cerr << "fgtool export: warning: " << st.rounded_weights
                << " non-integral stack weights rounded (pprof values are integers)\n";
  }
  AtomicOutput out(fold_cli.output);
  out.write(doc);
  out.commit();
  return 0;
}

}  // namespace fg::cli
