// Flamegraph colouring by category: each frame takes the colour of its own
// category (its resource rule, else its phase rule, else "other"), with the
// name in the tooltip and searchable as "cat:NAME", plus legend rows with each
// category's share. The render stage comes after this one, so the result is
// plain data; cmd_svg copies it into SvgOptions::node_style and legend.
#pragma once

#include <string>
#include <vector>

#include "categories/category_report.h"
#include "categories/profile_categories.h"

namespace fg {

struct CategoryFrameStyle {
  std::string fill;      // "#rrggbb"
  std::string category;  // category name (tooltip, "cat:NAME" search)
};

struct CategoryLegendRow {
  std::string name;   // "gemm", or "forward (phase)" for phase categories
  std::string fill;
  std::string share;  // "41.2%": self share of the total
};

class CategoryStyle {
 public:
  // `classified` must outlive this object.
  explicit CategoryStyle(const ProfileCategories& classified);

  // Style of the frame at a tree node. Frames of one category share a hue;
  // lightness varies a little by name so neighbouring frames stay distinct.
  CategoryFrameStyle style(NodeId node) const;

  // Resource categories with weight (self share), then the phase categories
  // that colour some frame (phase self share); "other" last.
  std::vector<CategoryLegendRow> legend() const;

  // Legend rows for a differential flamegraph: "gemm 41.2% -> 38.0% (-3.2 pts)".
  static std::vector<CategoryLegendRow> diff_legend(const CategoryReport& a, const CategoryReport& b,
                                                    const CategoryMatcher& matcher, size_t max_rows = 8);

 private:
  const ProfileCategories* pc_;
  CategoryReport report_;
  std::vector<bool> phase_used_;
};

}  // namespace fg
