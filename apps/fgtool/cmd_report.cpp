// `fgtool report`: where the time went by category - resource (gemm, omp,
// eltwise, alloc, page-fault, ...) and training phase (data, forward,
// backward, optimizer, ...) - as a terminal table, JSON or CSV. Reads any
// input fg::load_profile knows (folded text; perf.data once registered).
#include <iostream>

#include "categories/category_report.h"
#include "categories/category_rules.h"
#include "categories/profile_categories.h"
#include "command.h"
#include "pprof_cli.h"
#include "diagnostics/atomic_output.h"
#include "diagnostics/input_error.h"
#include "diagnostics/terminal_text.h"
#include "folded/profile_loader.h"
#include "traces/onednn_verbose.h"  // traces helper: --onednn-verbose

namespace {

namespace po = boost::program_options;

int run_report(const std::vector<std::string>& args) {
  std::vector<std::string> inputs;
  std::string format = "table", output = "-", rules_file;
  size_t top = 5;
  po::options_description options("Options");
  options.add_options()
    ("input", po::value(&inputs), "perf.data or folded file(s) ('-' = stdin); several are merged")
    ("format,f", po::value(&format)->default_value(format), "table, json or csv")
    ("top,n", po::value(&top)->default_value(top), "functions listed per category")
    ("rules", po::value(&rules_file), "a rules JSON file added to the built-in rules (see 'fgtool help rules')")
    ("output,o", po::value(&output), "output file ('-' = stdout, the default)")
    ("lenient", po::bool_switch(), "skip malformed input lines instead of failing")
    ("unit", po::value<std::string>(), "what the input's counts are: ns, us, ms, s, samples, ... (for folded files "
                                      "from other tools; 'fgtool fold -o' files say it on their first line)")
    ("countname", po::value<std::string>(), "= --unit (flamegraph.pl's name)")
    ("onednn-verbose", po::bool_switch(), "inputs are oneDNN verbose logs: time per primitive kind and implementation");
  fg::cli::PprofInputCli pin;  // pprof input: --sample-index, --tag
  fg::cli::add_pprof_input_options(options, pin);
  po::positional_options_description positional;
  positional.add("input", -1);
  po::variables_map vm;
  if (!fg::cli::parse_args("report", args, options, positional, vm)) return 0;
  if (format != "table" && format != "json" && format != "csv")
    throw fg::UsageError("--format '" + format + "': expected table, json or csv");
  if (inputs.empty()) inputs.push_back("-");
  // ---- traces helper: oneDNN verbose logs (lib/traces/onednn_verbose.h) ----
  if (vm["onednn-verbose"].as<bool>()) {
    fg::OnednnVerboseStats st;
    fg::OnednnVerboseOptions oo;
    oo.lenient = vm["lenient"].as<bool>();
    fg::OnednnSummary summary = fg::summarize_onednn_verbose(inputs, &st, oo);
    for (const auto& w : st.warnings()) std::cerr << "fgtool report: " << fg::terminal_safe(w) << "\n";
    fg::AtomicOutput out(output);
    if (format == "json") out.write(fg::format_onednn_summary_json(summary));
    else if (format == "csv") out.write(fg::format_onednn_summary_csv(summary));
    else out.write(fg::format_onednn_summary_text(summary));
    out.commit();
    return 0;
  }
  // ---- end traces helper ----

  fg::CategoryRules rules = fg::CategoryRules::effective(rules_file);
  fg::CategoryMatcher matcher(rules);

  fg::ProfileLoadOptions lo;
  lo.lenient = vm["lenient"].as<bool>();
  pin.apply(lo);
  if (vm.count("unit")) lo.units = vm["unit"].as<std::string>();
  else if (vm.count("countname")) lo.units = vm["countname"].as<std::string>();
  std::string source;
  fg::FoldedProfile profile = fg::load_profiles(inputs, lo, &source);
  fg::ProfileCategories classified(profile, matcher);
  fg::CategoryReport report = fg::build_category_report(classified, top, source);
  fg::AtomicOutput out(output);
  if (format == "json") out.write(fg::format_report_json(report));
  else if (format == "csv") out.write(fg::format_report_csv(report));
  else out.write(fg::format_report_text(report));
  out.commit();
  return 0;
}

fg::cli::Registration reg{fg::cli::CommandInfo{
    "report", "time by category: resource (gemm, omp, page-fault, ...) x phase (data, forward, backward, ...)",
    "fgtool report [options] perf.data|FILE.folded... [-o OUT]",
    "  fgtool report train.folded                      # terminal tables\n"
    "  fgtool report perf.data --top 10\n"
    "  fgtool report train.folded --format json -o report.json   # schema: lib/categories/REPORT_SCHEMA.md\n"
    "  fgtool report train.folded --format csv --rules my_rules.json\n"
    "  ONEDNN_VERBOSE=1 ./app > v.log; fgtool report --onednn-verbose v.log   # time per oneDNN primitive/impl\n"
    "Resource = the category of the leaf-most frame a rule matches (what the CPU was doing);\n"
    "phase = the category of the outer-most matching frame (which part of the step). 'other' is what\n"
    "no rule matched: see its top functions to write rules (fgtool help rules).\n",
    run_report, 45}};

}  // namespace
