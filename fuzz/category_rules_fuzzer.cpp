// libFuzzer target: a user's category rules file (fgtool --rules), applied
// over the built-in rules, compiled, used to classify a small profile, and
// written back: the rules JSON fgtool writes (to_json, `fgtool rules`) must
// parse again, and the report JSON must be valid JSON whatever the names.
#include "fuzz_target.h"
#include <cstdlib>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "categories/category_report.h"
#include "categories/category_rules.h"
#include "categories/profile_categories.h"
#include "diagnostics/input_error.h"
#include "folded/folded_reader.h"

namespace {
const char kProfile[] =
    "python;main;at::native::addmm;mkl_sgemm 5\n"
    "python;main;torch::autograd::backward;GOMP_parallel;[libgomp.so.1] 3\n"
    "python;main;malloc;page_fault_[k] 2\n"
    "python;main;foo 1\n";
}

FGTOOL_FUZZ_TARGET(category_rules, data, size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  fg::CategoryRules user;
  try {
    user = fg::CategoryRules::parse(text, "fuzz.json");
  } catch (const fg::InputError&) {
    return;
  }
  fg::CategoryRules rules = fg::CategoryRules::defaults();
  rules.apply_overrides(user);
  std::string written = rules.to_json();
  try {
    (void)fg::CategoryRules::parse(written, "written.json");
  } catch (const fg::InputError&) {
    std::abort();  // fgtool's own rules output must read back
  }
  try {
    fg::CategoryMatcher matcher(rules);
    fg::FoldedProfile profile;
    fg::read_folded_text(kProfile, "profile", profile);
    profile.finalize();
    fg::ProfileCategories classified(profile, matcher);
    fg::CategoryReport report = fg::build_category_report(classified, 3, "fuzz");
    std::string json = fg::format_report_json(report);
    if (!nlohmann::json::accept(json)) std::abort();
    (void)fg::format_report_text(report);
    (void)fg::format_report_csv(report);
  } catch (const fg::InputError&) {
  }
}
