// Flamegraph colouring by category, with one definition shared by the
// frame's colour, its tooltip, the legend and `cat:NAME` search: a frame
// takes the category a sample ending at that frame would have in
// `fgtool report` (its resource; for samples with no resource, its phase;
// else "other"). So the width drawn in a category's colour (each frame's own
// part) is that category's share in the report, which is what the legend
// prints and a `cat:` search reports as "Matched". See
// docs/reading-flamegraphs.md. cmd_svg/cmd_diff copy the result into
// SvgOptions::node_style and legend (the renderer computes the shares).
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
  std::string name;
  std::string fill;
  std::string section;  // "resource", "phase" (samples with no resource), or "" for "other"
};

class CategoryStyle {
 public:
  // `classified` must outlive this object.
  explicit CategoryStyle(const ProfileCategories& classified);

  // Style of the frame at a tree node. Frames of one category share a hue;
  // lightness varies a little by name so neighbouring frames stay distinct.
  CategoryFrameStyle style(NodeId node) const;

  // One row per category that colours some frame: resources, then phases,
  // then "other" (shares are left to the renderer: the drawn widths).
  // `neutral_fill`, when set, replaces every swatch colour (diff graphs,
  // where frame colour means growth or shrinkage, not category).
  std::vector<CategoryLegendRow> legend(const std::string& neutral_fill = "") const;

 private:
  const ProfileCategories* pc_;
  struct Choice {
    CategoryKind kind;
    CategoryId id;
  };
  Choice choose(NodeId node) const;
  std::vector<bool> used_[kCategoryKinds];
};

}  // namespace fg
