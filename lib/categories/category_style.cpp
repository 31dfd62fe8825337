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

}  // namespace

CategoryStyle::Choice CategoryStyle::choose(NodeId node) const {
  const CategoryMatcher& m = pc_->matcher();
  CategoryId r = pc_->sample_category(CategoryKind::resource, node);
  if (r != m.other(CategoryKind::resource)) return {CategoryKind::resource, r};
  CategoryId p = pc_->sample_category(CategoryKind::phase, node);
  if (p != m.other(CategoryKind::phase)) return {CategoryKind::phase, p};
  return {CategoryKind::resource, r};
}

CategoryStyle::CategoryStyle(const ProfileCategories& classified) : pc_(&classified) {
  for (int k = 0; k < kCategoryKinds; ++k)
    used_[k].assign(classified.matcher().categories(CategoryKind(k)).size(), false);
  for (NodeId n = 1; n < classified.profile().node_count(); ++n) {
    Choice c = choose(n);
    used_[int(c.kind)][c.id] = true;
  }
}

CategoryFrameStyle CategoryStyle::style(NodeId node) const {
  Choice c = choose(node);
  const Category& cat = pc_->matcher().categories(c.kind)[c.id];
  std::string_view name = node ? pc_->profile().frame_name(pc_->profile().node(node).frame) : std::string_view();
  // +-6%: enough to tell neighbours apart, too little to meet another category's colour.
  double t = (double(name_hash(name) % 1000) / 1000.0 - 0.5) * 0.12;
  return CategoryFrameStyle{shade(cat.color, t), cat.name};
}

std::vector<CategoryLegendRow> CategoryStyle::legend(const std::string& neutral_fill) const {
  std::vector<CategoryLegendRow> rows;
  const CategoryMatcher& m = pc_->matcher();
  const CategoryId other = m.other(CategoryKind::resource);
  auto fill = [&](const Category& c) { return neutral_fill.empty() ? c.color : neutral_fill; };
  const auto& res = m.categories(CategoryKind::resource);
  for (CategoryId i = 0; i < res.size(); ++i)
    if (used_[int(CategoryKind::resource)][i] && i != other) rows.push_back({res[i].name, fill(res[i]), "resource"});
  const auto& ph = m.categories(CategoryKind::phase);
  for (CategoryId i = 0; i < ph.size(); ++i)
    if (used_[int(CategoryKind::phase)][i]) rows.push_back({ph[i].name, fill(ph[i]), "phase"});
  if (used_[int(CategoryKind::resource)][other]) rows.push_back({res[other].name, fill(res[other]), ""});
  return rows;
}

}  // namespace fg
