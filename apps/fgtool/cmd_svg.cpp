// `fgtool svg`: folded stacks (or any input a loader is registered for, such
// as perf.data) -> an interactive SVG flamegraph. Inputs are read through
// fg::load_profile, so new input kinds need no change here.
#include <cstdio>
#include <iostream>

#include "categories/category_style.h"
#include "command.h"
#include "pprof_cli.h"
#include "diagnostics/atomic_output.h"
#include "diagnostics/input_error.h"
#include "folded/folded_reader.h"
#include "folded/profile_loader.h"
#include "perf/perf_data_reader.h"
#include "render/diff_flamegraph.h"
#include "render/flamegraph.h"
#include "perf_subtitle.h"
#include "svg_cli.h"

namespace {

namespace po = boost::program_options;

int run_svg(const std::vector<std::string>& args) {
  std::vector<std::string> inputs;
  std::string output = "-";
  fg::SvgOptions svg;
  bool flamechart = false, lenient = false, diff_input = false, no_diff_input = false;
  std::string rules_file;  // --colors category (lib/categories)
  po::options_description options("Options");
  options.add_options()
      ("input", po::value(&inputs), "folded stacks (plain or gzip; '-' = stdin), or another input kind fgtool "
                                    "reads (several are merged)")
      ("output,o", po::value(&output), "SVG file ('-' = stdout, the default)")
      ("reverse", po::bool_switch(&svg.reverse), "reverse every stack (leaf first) before merging")
      ("flamechart", po::bool_switch(&flamechart), "flame chart: input order kept, no merging (time on x)")
      ("lenient", po::bool_switch(&lenient), "skip malformed lines and count them on stderr")
      ("diff-input", po::bool_switch(&diff_input),
       "the input is three-column 'stack countA countB' (difffolded.pl): draw the differential flamegraph. "
       "Without it a file is read so when every line has two counts (never for stdin)")
      ("no-diff-input", po::bool_switch(&no_diff_input), "read the input as plain folded stacks, even if every line "
                                                         "ends in two numbers")
      ("rules", po::value(&rules_file), "with --colors category: a category rules file (see 'fgtool help rules')");
  fg::cli::add_svg_options(options, svg);
  fg::cli::PprofInputCli pin;  // pprof input: --sample-index, --tag
  fg::cli::add_pprof_input_options(options, pin);
  po::positional_options_description positional;
  positional.add("input", -1);
  po::variables_map vm;
  if (!fg::cli::parse_args("svg", args, options, positional, vm)) return 0;
  if (inputs.empty()) inputs.push_back("-");
  if (diff_input && no_diff_input) throw fg::UsageError("--diff-input and --no-diff-input conflict");
  if (diff_input && (inputs.size() != 1 || flamechart))
    throw fg::UsageError("--diff-input takes one three-column file and no --flamechart");
  // "--colors category" colours frames by category (gemm, omp, ...; the
  // default for perf.data input); it is not a palette, so take it out first.
  bool by_category = svg.colors == "category";
  if (svg.colors.empty() && !flamechart && inputs.size() == 1) {
    const fg::ProfileLoader* l = fg::find_profile_loader(fg::read_file_head(inputs[0]));
    by_category = l && l->name == "perf.data";
  }
  if (by_category) svg.colors.clear();
  if (svg.subtitle.empty() && inputs.size() == 1 && !flamechart) {
    const fg::ProfileLoader* l = fg::find_profile_loader(fg::read_file_head(inputs[0]));
    if (l && l->name == "perf.data") svg.subtitle = fg::cli::perf_data_subtitle(inputs[0]);
  }
  if (by_category && (flamechart || svg.reverse))
    throw fg::UsageError("--colors category cannot be combined with --flamechart or --reverse");
  fg::cli::finish_svg_options(vm, svg);

  std::string doc;
  if (flamechart) {
    if (svg.reverse) throw fg::UsageError("--flamechart and --reverse cannot be combined");
    fg::FlameChartBuilder chart;
    fg::FoldedReadOptions ro;
    ro.lenient = lenient;
    for (const auto& in : inputs)
      fg::for_each_folded_line(in, [&](std::string_view stack, double w) { chart.add(stack, w); }, ro);
    chart.render(svg, doc);
  } else if (diff_input || (!no_diff_input && inputs.size() == 1 && fg::looks_like_diff_folded(inputs[0]))) {
    // difffolded.pl output: draw the differential flamegraph, as flamegraph.pl does.
    fg::FoldedProfile a, b;
    fg::FoldedReadOptions ro;
    ro.lenient = lenient;
    fg::read_diff_folded(inputs[0], a, b, ro);
    fg::DiffOptions dopt;
    dopt.normalize = false;
    fg::render_diff_flamegraph(fg::build_diff(a, b, dopt), dopt, svg, doc);
  } else {
    fg::ProfileLoadOptions lo;
    lo.lenient = lenient;
    pin.apply(lo);
    lo.units = svg.count_name;  // --countname names the unit of foreign folded files
    fg::FoldedProfile profile = fg::load_profiles(inputs, lo);
    if (profile.total() <= 0) std::cerr << "fgtool svg: warning: no samples in the input\n";
    if (by_category) {
      fg::CategoryRules rules = fg::CategoryRules::effective(rules_file);
      fg::CategoryMatcher matcher(rules);
      fg::ProfileCategories classified(profile, matcher);
      fg::CategoryStyle style(classified);
      svg.node_style = [&style](fg::NodeId n) {
        fg::CategoryFrameStyle s = style.style(n);
        return fg::FrameStyle{s.fill, s.category};
      };
      for (const auto& row : style.legend()) svg.legend.push_back(fg::LegendEntry{row.name, row.fill, "", row.section});
      fg::render_flamegraph(profile, svg, doc);
    } else {
      fg::render_flamegraph(profile, svg, doc);
    }
  }
  fg::AtomicOutput out(output);
  out.write(doc);
  out.commit();
  return 0;
}

fg::cli::Registration reg{fg::cli::CommandInfo{
    "svg", "render an interactive SVG flamegraph from folded stacks",
    "fgtool svg [options] [FILE...] [-o OUT.svg]",
    "  fgtool svg out.folded -o out.svg                      # flamegraph (open in a browser)\n"
    "  fgtool svg a.folded b.folded.gz -o merged.svg         # several inputs are merged\n"
    "  fgtool fold perf.data | fgtool svg --title Train > t.svg\n"
    "  curl -s host:6060/debug/pprof/profile | fgtool svg - -o go.svg  # any input kind, pipes too\n"
    "  fgtool svg --inverted --colors mem --minwidth 0.5% x.folded -o icicle.svg\n"
    "  fgtool svg --flamechart --countname us trace.folded -o chart.svg\n"
    "  fgtool svg --hash --width 1800 --no-javascript x.folded -o static.svg\n"
    "  fgtool svg --colors category train.folded -o cat.svg  # gemm, omp, page-fault, ... with a legend\n"
    "  fgtool diff --format folded a.folded b.folded | fgtool svg --diff-input > diff.svg\n"
    "In the browser: click to zoom, Ctrl-F to search (regex, or cat:NAME), the view is kept in the URL.\n",
    run_svg, 40}};

}  // namespace
