// `fgtool export`: any input fgtool reads (folded text, perf.data, perf script
// text, Chrome trace JSON, oneDNN verbose logs) -> speedscope JSON,
// d3-flame-graph JSON or a perf-report-style text tree (lib/traces/exporters.h).
#include <iostream>

#include "command.h"
#include "diagnostics/atomic_output.h"
#include "diagnostics/input_error.h"
#include "folded/profile_loader.h"
#include "pprof_cli.h"
#include "traces/exporters.h"
#include "traces/trace_inputs.h"

namespace {

namespace po = boost::program_options;

int run_export(const std::vector<std::string>& args) {
  // profile.proto output has options of its own (fold options, --label): pprof_cli.cpp.
  if (fg::cli::wants_pprof_export(args)) return fg::cli::run_export_pprof(args);
  std::vector<std::string> inputs;
  std::string format, output = "-", name;
  double min_percent = 0;
  bool lenient = false;
  fg::cli::PprofInputCli pin;
  po::options_description options("Options");
  options.add_options()
      ("format,f", po::value(&format), "speedscope, d3 (d3-flame-graph JSON), pprof-text (text tree), "
                                         "or pprof (profile.proto, gzip; 'fgtool export -f pprof --help' for its options)")
      ("input", po::value(&inputs), "folded text, perf.data, perf script text, trace JSON, oneDNN verbose log "
                                    "('-' = stdin, folded text); several are merged")
      ("output,o", po::value(&output), "output file ('-' = stdout, the default)")
      ("name", po::value(&name), "profile name (default: the input file name)")
      ("min-percent", po::value(&min_percent)->default_value(0), "pprof-text: leave out frames below this % of the total")
      ("lenient", po::bool_switch(&lenient), "skip malformed input records instead of failing");
  fg::cli::add_pprof_input_options(options, pin);
  po::positional_options_description positional;
  positional.add("input", -1);
  po::variables_map vm;
  if (!fg::cli::parse_args("export", args, options, positional, vm)) return 0;
  fg::ExportFormat fmt;
  if (format.empty()) throw fg::UsageError("--format is required: speedscope, d3 or pprof-text");
  if (!fg::parse_export_format(format, fmt))
    throw fg::UsageError("--format '" + format + "': expected speedscope, d3 or pprof-text");
  if (!(min_percent >= 0 && min_percent <= 100)) throw fg::UsageError("--min-percent must be between 0 and 100");
  if (inputs.empty()) inputs.push_back("-");

  fg::ProfileLoadOptions lo;
  lo.lenient = lenient;
  pin.apply(lo);
  std::string source;
  fg::FoldedProfile profile = fg::load_profiles(inputs, lo, &source);
  if (profile.total() <= 0) std::cerr << "fgtool export: warning: no samples in the input\n";
  fg::ExportOptions eo;
  eo.name = name.empty() ? source : name;
  eo.min_percent = min_percent;
  std::string doc;
  fg::export_profile(profile, fmt, eo, doc);
  fg::AtomicOutput out(output);
  out.write(doc);
  out.commit();
  return 0;
}

const fg::cli::Registration reg{fg::cli::CommandInfo{
    "export", "write a profile for other viewers: speedscope, d3-flame-graph JSON, or a text tree",
    "fgtool export --format speedscope|d3|pprof-text|pprof [options] FILE... [-o OUT]",
    "  fgtool export -f speedscope perf.data -o prof.speedscope.json   # open at https://www.speedscope.app\n"
    "  fgtool export -f d3 out.folded -o flame.json                    # d3-flame-graph {name,value,children}\n"
    "  fgtool export -f pprof-text trace.json --min-percent 1          # top-down text tree, self/total %\n"
    "  fgtool export -f pprof perf.data --label host=$(hostname) -o cpu.pb.gz  # go tool pprof, Pyroscope, Parca\n"
    "  mlp_train --data /tmp/mnist --trace t.json && fgtool export -f speedscope t.json -o t.speedscope.json\n"
    "  ONEDNN_VERBOSE=1 ./app > dnnl.log && fgtool export -f pprof-text dnnl.log\n"
    "Formats are described in docs/exports.md.\n",
    run_export, 48}};

}  // namespace
