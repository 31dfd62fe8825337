// `fgtool diff`: two folded profiles (before, after) -> a differential
// flamegraph, difffolded.pl's three columns, or a table of the functions that
// gained and lost most. Logic in lib/render/diff_flamegraph.
#include <iostream>
#include <memory>
#include <optional>

#include "categories/category_style.h"
#include "command.h"
#include "pprof_cli.h"
#include "diagnostics/atomic_output.h"
#include "diagnostics/input_error.h"
#include "diagnostics/terminal_text.h"
#include "folded/folded_reader.h"
#include "folded/profile_loader.h"
#include "render/diff_flamegraph.h"
#include "svg_cli.h"
#include "traces/framework_ops.h"  // traces helper: --ops, --gpu
#include "traces/trace_inputs.h"

namespace {

namespace po = boost::program_options;

int run_diff(const std::vector<std::string>& args) {
  std::vector<std::string> inputs;
  std::string output, format = "svg";
  std::string by, rules_file;  // --by category (lib/categories)
  fg::SvgOptions svg;
  fg::DiffOptions dopt;
  bool no_normalize = false, lenient = false;
  size_t top = 0;
  bool ops = false, gpu = false;  // traces helper (lib/traces)
  po::options_description options("Options");
  options.add_options()
      ("input", po::value(&inputs), "BEFORE AFTER folded profiles, or one three-column file (stack countA countB)")
      ("output,o", po::value(&output), "output file ('-' = stdout, the default)")
      ("format", po::value(&format)->default_value(format), "svg, or folded (difffolded.pl's 'stack countA countB')")
      ("normalize", po::bool_switch(), "scale A (before) to B's total (the default; an empty side is an error)")
      ("no-normalize", po::bool_switch(&no_normalize), "compare raw counts (an empty side is allowed)")
      ("negate", po::bool_switch(&dopt.negate), "shape the graph by A (shows frames that disappeared)")
      ("top", po::value(&top), "print the N functions that gained and lost most share (self and inclusive)")
      ("lenient", po::bool_switch(&lenient), "skip malformed lines and count them on stderr")
      ("by", po::value(&by), "'category': the category table of A and B side by side (text; --format json for "
                             "JSON); with -o OUT.svg also the diff SVG, its legend summarising the change")
      ("ops", po::bool_switch(&ops), "compare op by op: perf.data and folded inputs in fgtool fold --ops's "
                                      "framework-op view, traces reduced to their ops and [gpu] leaves")
      ("gpu", po::bool_switch(&gpu), "trace inputs (PyTorch/Kineto JSON) in fgtool fold --gpu's view: GPU kernel "
                                      "time under the ops that launched it")
      ("rules", po::value(&rules_file), "with --by category: a category rules file (see 'fgtool help rules')");
  fg::cli::add_svg_options(options, svg, false, "Differential Flame Graph");
  fg::cli::PprofInputCli pin;  // pprof input: --sample-index, --tag
  fg::cli::add_pprof_input_options(options, pin);
  po::positional_options_description positional;
  positional.add("input", -1);
  po::variables_map vm;
  if (!fg::cli::parse_args("diff", args, options, positional, vm)) return 0;
  fg::cli::finish_svg_options(vm, svg);
  if (no_normalize && vm["normalize"].as<bool>()) throw fg::UsageError("--normalize and --no-normalize conflict");
  dopt.normalize = !no_normalize;
  if (!by.empty() && by != "category") throw fg::UsageError("--by: only 'category' is known");
  if (format == "json" && by.empty()) throw fg::UsageError("--format json needs --by category");
  if (format != "svg" && format != "folded" && format != "json") throw fg::UsageError("--format must be svg or folded");
  if (inputs.empty() || inputs.size() > 2)
    throw fg::UsageError("expected BEFORE AFTER, or one three-column file (see 'fgtool help diff')");

  fg::FoldedProfile a, b;
  std::optional<fg::DiffUnion> both;  // both sides in one tree (folded inputs)
  fg::FoldedReadOptions ro;
  ro.lenient = lenient;
  if (inputs.size() == 1) {
    // Read as three columns whatever its first lines look like: a line that
    // is not is reported with its number.
    try {
      fg::read_diff_folded(inputs[0], a, b, ro);
    } catch (const fg::InputError& e) {
      throw fg::InputError(std::string(e.what()) + "; one input must be three-column 'stack countA countB', "
                                                   "to compare two profiles give BEFORE AFTER");
    }
  } else {
    fg::ProfileLoadOptions lo;
    lo.lenient = lenient;
    pin.apply(lo);
    // Two folded files go into one tree (a third of the memory); the
    // category table, traces in a --gpu/--ops view and sides in different
    // units need each side apart.
    if (by.empty() && !gpu && !ops) {
      both.emplace();
      if (!fg::load_diff_union(inputs[0], inputs[1], *both, lo)) both.reset();
    }
    if (!both) {
      // A trace is folded in the view asked for; with --ops every input is
      // reduced to its ops (traces helper: lib/traces).
      auto load = [&](const std::string& path, fg::FoldedProfile& into) {
        fg::TraceInputKind kind = path == "-" ? fg::TraceInputKind::None : fg::detect_trace_input(path);
        if (kind == fg::TraceInputKind::ChromeTrace && (gpu || ops)) {
          fg::TraceFoldOptions to;
          to.lenient = lenient;
          to.gpu = gpu;
          into = fg::fold_trace_input(path, kind, to, [&](const std::string& w) {
            std::cerr << "fgtool diff: " << fg::terminal_safe(path) << ": " << fg::terminal_safe(w) << "\n";
          });
        } else {
          fg::load_profile(path, into, lo);
        }
        if (ops)
          into = kind == fg::TraceInputKind::ChromeTrace ? fg::trace_op_view(into)
                                                         : fg::framework_op_view(into, /*keep_root=*/false);
      };
      load(inputs[0], a);
      load(inputs[1], b);
      if (a.units != b.units && !a.units.empty() && !b.units.empty()) {
        // Never silent: time units are converted to B's, shares of other
        // units compared only when normalised (and said), raw counts refused.
        if (double factor = fg::time_unit_factor(a.units, b.units); factor > 0) {
          std::cerr << "fgtool diff: note: " << inputs[0] << " is in " << a.units << ", converted to " << b.units
                    << " (the unit of " << inputs[1] << ")\n";
          fg::FoldedProfile converted;
          converted.units = b.units;
          converted.merge(a, factor);
          a = std::move(converted);
        } else if (!dopt.normalize) {
          throw fg::UsageError(inputs[0] + " is in " + a.units + " but " + inputs[1] + " is in " + b.units +
                               ": raw counts of different units cannot be compared (drop --no-normalize)");
        } else {
          std::cerr << "fgtool diff: warning: comparing shares of " << a.units << " (" << inputs[0] << ") with "
                    << b.units << " (" << inputs[1] << ")\n";
        }
      }
    }
  }
  // A side with nothing in it: scaling A to B's total (or shares of a zero
  // total) would turn every frame into 0 or NaN and draw an empty graph.
  // That is an error naming the file; --no-normalize draws the raw counts.
  if (dopt.normalize || by == "category") {
    for (int side = 0; side < 2; ++side) {
      double total = both ? (side ? both->raw_sum_b : both->raw_sum_a) : (side ? b : a).total();
      if (total > 0) continue;
      std::string name = inputs.size() == 2 ? inputs[side] : inputs[0] + (side ? " (column 3, B)" : " (column 2, A)");
      throw fg::InputError(name + ": no samples (total 0): nothing to compare " + (side ? "against" : "with") +
                           (by == "category" ? "" : "; --no-normalize draws the raw counts"));
    }
  }
  if (by == "category") {
    fg::CategoryRules rules = fg::CategoryRules::effective(rules_file);
    fg::CategoryMatcher matcher(rules);
    fg::ProfileCategories ca(a, matcher), cb(b, matcher);
    fg::CategoryReport ra = fg::build_category_report(ca, 0, inputs[0]);
    fg::CategoryReport rb = fg::build_category_report(cb, 0, inputs.size() > 1 ? inputs[1] : inputs[0] + " (B)");
    if (format == "json") {
      fg::AtomicOutput out(output.empty() ? "-" : output);
      out.write(fg::format_category_diff_json(ra, rb));
      out.commit();
      return 0;
    }
    std::cout << fg::format_category_diff_text(ra, rb);
    std::cout.flush();
    if (output.empty()) return 0;
  }
  // File names without their folders: the subtitle has one line.
  auto base = [](const std::string& p) { return p.substr(p.find_last_of('/') == std::string::npos ? 0 : p.find_last_of('/') + 1); };
  dopt.name_a = base(inputs[0]);
  dopt.name_b = inputs.size() > 1 ? base(inputs[1]) : base(inputs[0]) + " (B)";
  fg::DiffProfile diff = both ? fg::build_diff(std::move(*both), dopt) : fg::build_diff(a, b, dopt);
  both.reset();
  // --by category: diff frames carry their category (tooltip, legend,
  // cat:NAME search); legend swatches are neutral, red/blue mean change here.
  std::unique_ptr<fg::CategoryRules> diff_rules;
  std::unique_ptr<fg::CategoryMatcher> diff_matcher;
  std::unique_ptr<fg::ProfileCategories> diff_classified;
  std::unique_ptr<fg::CategoryStyle> diff_style;
  if (by == "category") {
    diff_rules = std::make_unique<fg::CategoryRules>(fg::CategoryRules::effective(rules_file));
    diff_matcher = std::make_unique<fg::CategoryMatcher>(*diff_rules);
    diff_classified = std::make_unique<fg::ProfileCategories>(diff.tree, *diff_matcher);
    diff_style = std::make_unique<fg::CategoryStyle>(*diff_classified);
    svg.node_style = [s = diff_style.get()](fg::NodeId n) { return fg::FrameStyle{"", s->style(n).category}; };
    for (const auto& row : diff_style->legend("none")) svg.legend.push_back(fg::LegendEntry{row.name, row.fill, "", row.section});
  }
  if (top > 0) {
    std::cout << fg::diff_top_table(diff, top, svg.count_name.empty() ? diff.tree.units : svg.count_name);
    std::cout.flush();
    if (output.empty()) return 0;
  }
  if (output.empty()) output = "-";
  fg::AtomicOutput out(output);
  if (format == "folded") {
    fg::write_diff_folded(diff, out);
  } else {
    std::string doc;
    fg::render_diff_flamegraph(diff, dopt, svg, doc);
    out.write(doc);
  }
  out.commit();
  return 0;
}

fg::cli::Registration reg{fg::cli::CommandInfo{
    "diff", "differential flamegraph of two profiles (red grew, blue shrank)",
    "fgtool diff [options] BEFORE AFTER [-o OUT.svg]   |   fgtool diff [options] DIFF3COL",
    "  fgtool diff before.folded after.folded -o diff.svg       # shaped by AFTER, A scaled to B's total\n"
    "  fgtool diff --negate before.folded after.folded -o gone.svg  # shaped by BEFORE\n"
    "  fgtool diff --no-normalize a.folded b.folded -o raw.svg\n"
    "  fgtool diff --format folded a.folded b.folded > ab.diff  # stack countA countB\n"
    "  fgtool diff --by category before.folded after.folded     # gemm/omp/... shares, A vs B\n"
    "  fgtool diff --by category --format json a.folded b.folded -o cat_diff.json\n"
    "  fgtool diff ab.diff -o diff.svg                           # three-column input\n"
    "  fgtool diff --top 10 before.folded after.folded           # table of biggest gains/losses\n",
    run_diff, 41}};

}  // namespace
