#include "render/diff_flamegraph.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <unordered_map>

#include "folded/folded_writer.h"
#include "folded/profile_loader.h"
#include "folded/weight_text.h"
#include "render/palette.h"
#include "render/svg_document.h"
#include "diagnostics/terminal_text.h"

namespace fg {

namespace {

// Maps every node of `side` into diff.tree, returning the tree node per side node.
std::vector<NodeId> map_into(FoldedProfile& tree, const FoldedProfile& side) {
  std::vector<FrameId> frames(side.frame_count());
  for (FrameId f = 0; f < side.frame_count(); ++f) frames[f] = tree.intern(side.frame_name(f));
  std::vector<NodeId> map(side.node_count(), 0);
  for (NodeId i = 1; i < side.node_count(); ++i) {
    const auto& n = side.node(i);
    map[i] = tree.child(map[n.parent], frames[n.frame]);
  }
  return map;
}

std::string signed_fixed(double v, const char* fmt) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  std::string s = buf;
  if (v >= 0 && s[0] != '-') s = "+" + s;
  if (s == "+-0.00" || s == "-0.00") s = "+0.00";
  return s;
}

}  // namespace

namespace {
// The weights per tree node are in place (A scaled): the tree's self
// weights are their sum, and each side's totals are summed up the tree.
void finish_diff(DiffProfile& d) {
  size_t n = d.tree.node_count();
  for (NodeId i = 1; i < n; ++i) {
    double s = d.self_a[i] + d.self_b[i];
    if (s != 0) d.tree.add_self(i, s);
  }
  d.tree.finalize();
  d.total_a = d.self_a;
  d.total_b = d.self_b;
  for (size_t i = n; i-- > 1;) {
    NodeId p = d.tree.node(static_cast<NodeId>(i)).parent;
    d.total_a[p] += d.total_a[i];
    d.total_b[p] += d.total_b[i];
  }
  d.sum_a = d.total_a[0];
  d.sum_b = d.total_b[0];
}
}  // namespace

DiffProfile build_diff(const FoldedProfile& a, const FoldedProfile& b, const DiffOptions& options) {
  DiffProfile d;
  d.tree.units = b.units;
  // B first, so B's node order (and therefore ties) come first.
  std::vector<NodeId> mb = map_into(d.tree, b);
  std::vector<NodeId> ma = map_into(d.tree, a);
  size_t n = d.tree.node_count();
  d.self_a.assign(n, 0);
  d.self_b.assign(n, 0);
  for (NodeId i = 1; i < a.node_count(); ++i) d.raw_sum_a += a.node(i).self;
  for (NodeId i = 1; i < b.node_count(); ++i) d.raw_sum_b += b.node(i).self;
  d.normalized = options.normalize;
  d.scale_a = (options.normalize && d.raw_sum_a > 0) ? d.raw_sum_b / d.raw_sum_a : 1.0;
  for (NodeId i = 1; i < a.node_count(); ++i) d.self_a[ma[i]] += a.node(i).self * d.scale_a;
  for (NodeId i = 1; i < b.node_count(); ++i) d.self_b[mb[i]] += b.node(i).self;
  finish_diff(d);
  return d;
}

DiffProfile build_diff(DiffUnion&& both, const DiffOptions& options) {
  DiffProfile d;
  d.tree = std::move(both.tree);
  d.raw_sum_a = both.raw_sum_a;
  d.raw_sum_b = both.raw_sum_b;
  d.normalized = options.normalize;
  d.scale_a = (options.normalize && d.raw_sum_a > 0) ? d.raw_sum_b / d.raw_sum_a : 1.0;
  d.self_a = std::move(both.self_a);
  d.self_b = std::move(both.self_b);
  size_t n = d.tree.node_count();
  d.self_a.resize(n, 0.0);
  d.self_b.resize(n, 0.0);
  d.self_a[0] = d.self_b[0] = 0;
  for (size_t i = 1; i < n; ++i) d.self_a[i] = 0.0 + d.self_a[i] * d.scale_a;  // as build_diff's "+="
  finish_diff(d);
  return d;
}

std::string diff_fill(double delta, double max_abs) {
  if (delta == 0 || !(max_abs > 0)) return "rgb(250,250,250)";
  double strength = std::min(1.0, std::fabs(delta) / max_abs);
  int fade = static_cast<int>(210 * (1 - strength));
  char buf[48];
  if (delta > 0) std::snprintf(buf, sizeof buf, "rgb(255,%d,%d)", fade, fade);
  else std::snprintf(buf, sizeof buf, "rgb(%d,%d,255)", fade, fade);
  return buf;
}

namespace {

// A frame's tooltip: both sides' weights and shares, the change in points of
// share and as a weight, and markers ([new], [gone], callers lost).
std::string diff_tooltip(const DiffProfile& d, const SvgOptions& o, const std::string& count_name, const FlameBox& b,
                         std::string_view name, const std::string& category) {
  const double raw_a = d.scale_a > 0 ? 1.0 / d.scale_a : 1.0;
  double ta = d.total_a[b.node], tb = d.total_b[b.node];
  double delta = d.self_b[b.node] - d.self_a[b.node];
  double share_a = d.sum_a > 0 ? ta / d.sum_a : 0, share_b = d.sum_b > 0 ? tb / d.sum_b : 0;
  std::string info = "A " + human_weight_with_unit(ta * raw_a * o.factor, count_name) + " " +
                     detail::format_percent(ta, d.sum_a) + ", B " + human_weight_with_unit(tb * o.factor, count_name) +
                     " " + detail::format_percent(tb, d.sum_b) + ", ";
  info += signed_fixed(100 * (share_b - share_a), "%.2f") + " pp";
  if (ta > 0) info += " [" + signed_fixed(100 * (tb - ta) / ta, "%.1f") + "%" + (d.normalized ? " normalised" : "") + "]";
  else if (tb > 0) info += " [new]";
  if (tb == 0 && ta > 0) info += " [gone]";
  info += ", self " + signed_fixed(d.sum_b > 0 ? 100 * delta / d.sum_b : 0, "%.2f") + " pp";
  // The same change as a weight, in B's units (A scaled when normalised).
  if (delta != 0) {
    std::string w = human_weight_with_unit(delta * o.factor, count_name);
    info += " [" + (w[0] == '-' ? w : "+" + w) + "]";
  }
  if (!category.empty()) info += ", category " + category;
  // The fold's marker of stacks whose callers were lost (see flamegraph.cpp);
  // colour shows change here, so only the tooltip says it.
  if (b.depth == 2 && name == "[unknown]")
    info += "; callers lost: the user-stack copy ran out or a frame-pointer chain broke; record with fgtool record "
            "--dwarf --stack-size 65528";
  return info;
}

// The category legend of a diff: each category's share in A and in B and
// the change, largest change first.
template <class CategoryOf>
std::vector<LegendEntry> diff_legend(const DiffProfile& d, const DiffOptions& dopt, const SvgOptions& o,
                                     const detail::SvgDocument& doc, CategoryOf&& category_of) {
  std::map<std::string, double> cat_a;
  if (!o.legend.empty() && !dopt.negate)
    for (NodeId n = 1; n < d.tree.node_count(); ++n)
      if (d.self_a[n] != 0) cat_a[category_of(n)] += d.self_a[n];
  // Both sides' shares of a category: the shaping side's from the drawn
  // frames (what a `cat:` search matches), the other from the whole tree.
  std::map<std::string, double> cat_b;
  if (!o.legend.empty() && dopt.negate)
    for (NodeId n = 1; n < d.tree.node_count(); ++n)
      if (d.self_b[n] != 0) cat_b[category_of(n)] += d.self_b[n];
  auto shares = [&](const std::string& cat, double drawn) {
    double sa = dopt.negate ? drawn / doc.total : (d.sum_a > 0 ? cat_a[cat] / d.sum_a : 0);
    double sb = dopt.negate ? (d.sum_b > 0 ? cat_b[cat] / d.sum_b : 0) : drawn / doc.total;
    return std::make_pair(sa, sb);
  };
  return detail::complete_legend(
      o.legend, doc.frames, doc.total,
      [&](const std::string& cat, double drawn) {
        auto [sa, sb] = shares(cat, drawn);
        char buf[96];
        std::snprintf(buf, sizeof buf, " (%+.1f pp)", 100 * (sb - sa));
        return detail::format_share1(sa, 1) + " -> " + detail::format_share1(sb, 1) + buf;
      },
      // Largest change first: what moved is what a diff is read for.
      [&](const std::string& cat, double drawn) {
        auto [sa, sb] = shares(cat, drawn);
        return std::fabs(sb - sa);
      });
}

}  // namespace

void render_diff_flamegraph(const DiffProfile& d, const DiffOptions& dopt, const SvgOptions& o, std::string& out) {
  const std::vector<double>& shape = dopt.negate ? d.total_a : d.total_b;
  detail::SvgDocument doc;
  doc.title = o.title.empty() ? "Differential Flame Graph" : o.title;
  if (o.subtitle.empty()) {
    char factor[64] = "";
    if (d.normalized) std::snprintf(factor, sizeof factor, " (scaled x%.4g to B's total)", d.scale_a);
    std::string a = dopt.name_a.empty() ? "before" : dopt.name_a, b = dopt.name_b.empty() ? "after" : dopt.name_b;
    doc.subtitle = "A = " + a + factor + ", B = " + b + "; width: " + (dopt.negate ? "A" : "B") +
                   "; red: self grew in B, blue: shrank";
  } else {
    doc.subtitle = o.subtitle;
  }
  doc.total = std::max(o.total, shape[0]);
  doc.background_top = "#eeeeee";
  doc.background_bottom = "#eeeeee";
  if (!o.background.empty()) background_colors(o.background, doc.background_top, doc.background_bottom);
  double min_width = min_width_in_units(o.min_width, doc.total, o.width - 20.0);
  FlameLayout layout = layout_flame(d.tree, min_width, shape);
  doc.max_depth = layout.max_depth;
  double max_abs = 0;
  for (const FlameBox& b : layout.boxes) max_abs = std::max(max_abs, std::fabs(d.self_b[b.node] - d.self_a[b.node]));
  const std::string count_name = o.count_name.empty() ? d.tree.units : o.count_name;
  auto category_of = [&](NodeId n) {
    FrameStyle st;
    if (n != 0 && o.node_style) st = o.node_style(n);
    if (st.category.empty() && n != 0 && o.frame_style) st.category = o.frame_style(d.tree.node(n).frame).category;
    return st.category;
  };
  std::vector<int32_t> box_of(d.tree.node_count(), -1), parent_box;
  for (const FlameBox& b : layout.boxes) {
    box_of[b.node] = static_cast<int32_t>(doc.frames.size());
    parent_box.push_back(b.node == 0 ? -1 : box_of[d.tree.node(b.node).parent]);
    detail::DrawFrame f;
    f.x = b.x;
    f.width = b.width;
    f.depth = b.depth;
    f.name = b.node == 0 ? std::string_view("all") : d.tree.frame_name(d.tree.node(b.node).frame);
    f.fill = diff_fill(d.self_b[b.node] - d.self_a[b.node], max_abs);  // colour always shows the change
    f.category = category_of(b.node);
    f.info = diff_tooltip(d, o, count_name, b, f.name, f.category);
    doc.frames.push_back(std::move(f));
  }
  detail::set_drawn_self(doc.frames, parent_box);
  doc.legend = diff_legend(d, dopt, o, doc, category_of);
  detail::write_svg_document(o, doc, out);
}

namespace {
template <class Flush>
void diff_folded_lines(const DiffProfile& d, std::string& out, Flush&& flush) {
  StackText text(d.tree);
  d.tree.for_each_stack_node([&](NodeId node, const std::vector<FrameId>& frames) {
    out += text.of(frames);
    out += ' ';
    append_count(out, d.self_a[node]);
    out += ' ';
    append_count(out, d.self_b[node]);
    out += '\n';
    flush(false);
  });
  flush(true);
}
}  // namespace

void write_diff_folded(const DiffProfile& d, std::string& out) {
  diff_folded_lines(d, out, [](bool) {});
}

void write_diff_folded(const DiffProfile& d, AtomicOutput& out) {
  std::string buf;
  diff_folded_lines(d, buf, [&](bool last) {
    if (last || buf.size() >= (1 << 20)) {
      out.write(buf);
      buf.clear();
    }
  });
}

std::vector<DiffFrameSummary> summarize_diff_by_frame(const DiffProfile& d) {
  const FoldedProfile& t = d.tree;
  std::vector<DiffFrameSummary> out(t.frame_count());
  for (FrameId f = 0; f < t.frame_count(); ++f) out[f].name = std::string(t.frame_name(f));
  std::vector<uint32_t> active(t.frame_count(), 0);  // ancestors on the current path with this frame
  struct Item {
    NodeId node;
    bool exit;
  };
  std::vector<Item> stack{{0, false}};
  while (!stack.empty()) {
    Item it = stack.back();
    stack.pop_back();
    if (it.node != 0) {
      FrameId f = t.node(it.node).frame;
      if (it.exit) {
        --active[f];
        continue;
      }
      out[f].self_a += d.self_a[it.node];
      out[f].self_b += d.self_b[it.node];
      if (active[f] == 0) {
        out[f].incl_a += d.total_a[it.node];
        out[f].incl_b += d.total_b[it.node];
      }
      ++active[f];
      stack.push_back({it.node, true});
    }
    for (NodeId c : t.children(it.node)) stack.push_back({c, false});
  }
  return out;
}

std::string diff_top_table(const DiffProfile& d, size_t n, const std::string& count_name) {
  std::vector<DiffFrameSummary> rows = summarize_diff_by_frame(d);
  const double ra = d.scale_a > 0 ? 1.0 / d.scale_a : 1.0;
  auto share = [](double v, double total) { return total > 0 ? 100.0 * v / total : 0.0; };
  // Time units in ms/s ("12.3 ms"), counts with separators, as `report` prints them.
  const bool time = seconds_per_unit(count_name) > 0;
  auto cell = [&](double v) { return time ? human_weight_with_unit(v, count_name) : human_weight(v, count_name); };
  std::string out;
  char line[256];
  for (int inclusive = 0; inclusive < 2; ++inclusive) {
    auto a_of = [&](const DiffFrameSummary& r) { return inclusive ? r.incl_a : r.self_a; };
    auto b_of = [&](const DiffFrameSummary& r) { return inclusive ? r.incl_b : r.self_b; };
    auto change = [&](const DiffFrameSummary& r) { return share(b_of(r), d.sum_b) - share(a_of(r), d.sum_a); };
    std::vector<const DiffFrameSummary*> sorted;
    for (const auto& r : rows)
      if (a_of(r) != 0 || b_of(r) != 0) sorted.push_back(&r);
    for (int gains = 1; gains >= 0; --gains) {
      std::stable_sort(sorted.begin(), sorted.end(), [&](const DiffFrameSummary* x, const DiffFrameSummary* y) {
        double cx = change(*x), cy = change(*y);
        if (cx != cy) return gains ? cx > cy : cx < cy;
        return x->name < y->name;
      });
      out += std::string(inclusive ? "Inclusive" : "Self") + " share, largest " + (gains ? "gains" : "losses") +
             " (B vs A):\n";
      std::snprintf(line, sizeof line, "  %9s %8s %8s %14s %14s  %s\n", "change pp", "A", "B", (time ? "A time" : "A " + count_name).c_str(),
                    (time ? "B time" : "B " + count_name).c_str(), "function");
      out += line;
      size_t shown = 0;
      for (const DiffFrameSummary* r : sorted) {
        if (shown == n) break;
        double c = change(*r);
        if (gains ? c <= 0 : c >= 0) break;
        std::snprintf(line, sizeof line, "  %+9.2f %7.2f%% %7.2f%% %14s %14s  ", c, share(a_of(*r), d.sum_a),
                      share(b_of(*r), d.sum_b), cell(a_of(*r) * ra).c_str(), cell(b_of(*r)).c_str());
        out += line;
        out += r->name;
        out += '\n';
        ++shown;
      }
      if (shown == 0) out += "  (none)\n";
      out += '\n';
    }
  }
  return terminal_safe(out, true);  // names from the input reach a terminal
}

}  // namespace fg
