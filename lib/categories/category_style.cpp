#include "categories/category_style.h"

#include <cstdio>
#include <string_view>

namespace fg {

namespace {

// Scales a "#rrggbb" colour's channels towards black or white by `t` in [-1, 1].
std::string shade(const std::string& hex, double t) {
  if (hex.size() != 7) return hex;
  auto ch = [&](int i) { return std::stoi(hex.substr(1 + 2 * i, 2), nullptr, 16); };
  char buf[8];
  int c[3];
  for (int i = 0; i < 3; ++i) {
    double v = ch(i);
    v = t >= 0 ? v + (255 - v) * t : v * (1 + t);
    c[i] = v < 0 ? 0 : v > 255 ? 255 : int(v + 0.5);
  }
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", c[0], c[1], c[2]);
  return buf;
}

uint32_t name_hash(std::string_view s) {
  uint32_t h = 2166136261u;
  for (unsigned char ch : s) h = (h ^ ch) * 16777619u;
  return h;
}

std::string percent(double w, double total) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", total > 0 ? 100 * w / total : 0.0);
  return buf;
}

}  // namespace

CategoryStyle::CategoryStyle(const ProfileCategories& classified)
    : pc_(&classified), report_(build_category_report(classified, 0)) {
  phase_used_.assign(classified.matcher().categories(CategoryKind::phase).size(), false);
  const FoldedProfile& p = classified.profile();
  for (NodeId n = 1; n < p.node_count(); ++n) {
    CategoryKind kind;
    CategoryId c = classified.frame_color_category(n, kind);
    if (kind == CategoryKind::phase) phase_used_[c] = true;
  }
}

CategoryFrameStyle CategoryStyle::style(NodeId node) const {
  CategoryKind kind;
  CategoryId c = pc_->frame_color_category(node, kind);
  const Category& cat = pc_->matcher().categories(kind)[c];
  std::string_view name = node ? pc_->profile().frame_name(pc_->profile().node(node).frame) : std::string_view();
  double t = (double(name_hash(name) % 1000) / 1000.0 - 0.5) * 0.3;  // +-15%
  return CategoryFrameStyle{shade(cat.color, t), cat.name};
}

std::vector<CategoryLegendRow> CategoryStyle::legend() const {
  std::vector<CategoryLegendRow> rows;
  const auto& res = report_.resource;
  for (size_t i = 0; i + 1 < res.size(); ++i)
    if (res[i].self > 0) rows.push_back({res[i].name, res[i].color, percent(res[i].self, report_.total)});
  const auto& ph = report_.phase;
  for (size_t i = 0; i + 1 < ph.size(); ++i)
    // The row name is what `cat:NAME` searches for, so it must be the bare category.
    if (phase_used_[i]) rows.push_back({ph[i].name, ph[i].color, "(phase) " + percent(ph[i].self, report_.total)});
  if (!res.empty()) rows.push_back({res.back().name, res.back().color, percent(res.back().self, report_.total)});
  return rows;
}

std::vector<CategoryLegendRow> CategoryStyle::diff_legend(const CategoryReport& a, const CategoryReport& b,
                                                          const CategoryMatcher& matcher, size_t max_rows) {
  std::vector<CategoryLegendRow> rows;
  const auto& cats = matcher.categories(CategoryKind::resource);
  for (const std::string& line : category_diff_summary(a, b, max_rows)) {
    std::string name = line.substr(0, line.find(' '));
    std::string fill = "#ced4da";
    for (const auto& c : cats)
      if (c.name == name) fill = c.color;
    rows.push_back({name, fill, line.substr(name.size() + 1)});
  }
  return rows;
}

}  // namespace fg
