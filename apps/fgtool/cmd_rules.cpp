// `fgtool rules`: prints the effective category rules (the built-in ones,
// with a --rules file applied) as JSON that --rules accepts back, or checks a
// rules file; `fgtool rules --classify NAME` shows how one frame name is
// classified. The logic is lib/categories.
#include <iostream>

#include "categories/category_rules.h"
#include "command.h"
#include "diagnostics/terminal_text.h"
#include "diagnostics/atomic_output.h"
#include "diagnostics/input_error.h"

namespace {

namespace po = boost::program_options;

int run_rules(const std::vector<std::string>& args) {
  std::string rules_file, output = "-";
  std::vector<std::string> classify;
  std::string object;
  po::options_description options("Options");
  options.add_options()
    ("rules", po::value(&rules_file), "a rules JSON file to add to (or, with \"replace_defaults\", replace) the built-in rules")
    ("classify", po::value(&classify)->multitoken(), "print the resource and phase of these frame names instead")
    ("object", po::value(&object), "with --classify: the frame's object (DSO path)")
    ("output,o", po::value(&output), "output file ('-' = stdout, the default)")
    ("check", po::bool_switch(), "only check the rules file; print a one-line summary");
  po::positional_options_description positional;
  po::variables_map vm;
  if (!fg::cli::parse_args("rules", args, options, positional, vm)) return 0;

  fg::CategoryRules rules = fg::CategoryRules::effective(rules_file);
  fg::CategoryMatcher matcher(rules);  // validates the combined set
  fg::AtomicOutput out(output);
  if (!classify.empty()) {
    for (const auto& name : classify) {
      std::string line = fg::terminal_safe(name);
      for (int k = 0; k < fg::kCategoryKinds; ++k) {
        auto kind = fg::CategoryKind(k);
        fg::FrameMatch m = matcher.match(kind, name, object);
        line += std::string("\t") + fg::category_kind_name(kind) + "=" +
                (m ? matcher.categories(kind)[m.category].name + " (rule '" + rules.rules()[m.rule].name + "')"
                   : std::string("-"));
      }
      out.write(line + "\n");
    }
  } else if (vm["check"].as<bool>()) {
    out.write("rules OK: " + std::to_string(rules.rules().size()) + " rules, " +
              std::to_string(matcher.categories(fg::CategoryKind::resource).size()) + " resource and " +
              std::to_string(matcher.categories(fg::CategoryKind::phase).size()) + " phase categories (with other)\n");
  } else {
    out.write(rules.to_json());
  }
  out.commit();
  return 0;
}

fg::cli::Registration reg{fg::cli::CommandInfo{
    "rules", "print or check the frame category rules (gemm, omp, page-fault, ...; data, forward, ...)",
    "fgtool rules [--rules FILE.json] [--check | --classify NAME...] [-o OUT]",
    "  fgtool rules > my_rules.json                 # the effective rules, editable\n"
    "  fgtool rules --rules my_rules.json --check   # validate a rules file\n"
    "  fgtool rules --classify sgemm_kernel_SKYLAKEX '[libgomp.so.1.0.0]' 'clear_page_erms_[k]'\n"
    "\n"
    "Rules file syntax (JSON):\n"
    "  {\"version\": 1, \"replace_defaults\": false, \"rules\": [\n"
    "    {\"name\": \"my-gemm\", \"category\": \"gemm\", \"kind\": \"resource\", \"color\": \"#1864ab\",\n"
    "     \"symbols\": [\"my_sgemm_*\", \"*::MyMatMul::*\"], \"objects\": [\"libmyblas.so*\"],\n"
    "     \"absorbs\": [\"kernel\"]}]}\n"
    "  name      unique; a user rule replaces the built-in rule of the same name\n"
    "  category  the category it assigns (default: name); kind resource or phase\n"
    "  symbols   globs on the whole frame name: * any run, ? one byte, \\ escapes; no other syntax\n"
    "  objects   globs on the basename of the frame's object (DSO); in folded text a frame named\n"
    "            [libfoo.so.1] stands for object libfoo.so.1, and a _[k] suffix for [kernel.kallsyms]\n"
    "  absorbs   (resource) categories that become this one when called beneath a frame of this rule\n"
    "            (e.g. omp absorbs sync: a futex under a libgomp barrier is OpenMP time)\n"
    "  fallback  true: used only when no other rule of the kind matches anywhere on the stack\n"
    "User rules come first, so they win: within a kind the first rule matching a frame decides. A sample's\n"
    "resource is its leaf-most matching frame (then lifted by absorbs); its phase the outer-most one.\n",
    run_rules, 62}};

}  // namespace
