// `fgtool report` and `fgtool diff --by category`: where the time went by
// resource (gemm, omp, page-fault, ...) and by training phase (data,
// forward, backward, ...), with a phase x resource matrix, the top functions
// of each category, and the share no rule explained ("other"). Output as a
// terminal table, JSON (schema in lib/categories/REPORT_SCHEMA.md) or CSV.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "categories/category_rules.h"
#include "categories/profile_categories.h"
#include "folded/folded_profile.h"

namespace fg {

struct CategoryFunction {
  std::string name;
  double weight = 0;
};

struct CategoryShare {
  std::string name, color, description;
  double self = 0;       // samples whose category (leaf-most / outer-most rule) is this one
  double inclusive = 0;  // samples with this category anywhere on the stack
  std::vector<CategoryFunction> top;  // heaviest deciding functions (leaves for "other"), by self weight
};

// Self weight in frames named only by their object ("[libgomp.so.1.0.0]"):
// code whose symbols were not found.
struct UnresolvedObject {
  std::string frame;
  double weight = 0;
};

struct CategoryReport {
  std::string source;   // input name, for titles
  std::string units;
  double total = 0;
  std::vector<CategoryShare> resource, phase;  // in rule order, "other" last (the text sorts by share)
  double cut_short = 0;  // weight of stacks whose callers are missing (root-side "[unknown]", see stack_gaps.h)
  std::vector<UnresolvedObject> unresolved;  // heaviest first
  // matrix[p][r]: weight of samples in phase p whose resource is r.
  std::vector<std::vector<double>> matrix;
};

// Builds the report from a classified profile. `top_n` functions per category.
CategoryReport build_category_report(const ProfileCategories& classified, size_t top_n, std::string source = {});

std::string format_report_text(const CategoryReport& r);
// The "what this means" lines under the tables: the top finding with the knob
// to try, then unresolved objects and cut-short stacks that matter, each with
// how to fix it. Empty when there is nothing to say.
std::vector<std::string> report_findings(const CategoryReport& r);
std::string format_report_json(const CategoryReport& r);
std::string format_report_csv(const CategoryReport& r);

// `diff --by category`: A and B side by side per category (self shares), with
// the change in percentage points and the relative change in weight.
std::string format_category_diff_text(const CategoryReport& a, const CategoryReport& b);
std::string format_category_diff_json(const CategoryReport& a, const CategoryReport& b);
// One line per resource category whose share moved, e.g.
// "gemm 41.2% -> 38.0% (-3.2 pp)", largest change first, for a diff SVG legend.
std::vector<std::string> category_diff_summary(const CategoryReport& a, const CategoryReport& b,
                                               size_t max_lines = 8);

}  // namespace fg
