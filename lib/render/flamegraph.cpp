#include "render/flamegraph.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "diagnostics/input_error.h"
#include "folded/weight_text.h"
#include "render/palette.h"
#include "render/svg_document.h"

namespace fg {

std::vector<double> inclusive_weights(const FoldedProfile& p) {
  size_t n = p.node_count();
  std::vector<double> w(n);
  for (size_t i = 0; i < n; ++i) w[i] = p.node(static_cast<NodeId>(i)).self;
  // Parents precede children in node order.
  for (size_t i = n; i-- > 1;) w[p.node(static_cast<NodeId>(i)).parent] += w[i];
  return w;
}

FlameLayout layout_flame(const FoldedProfile& p, double min_width, const std::vector<double>& given) {
  std::vector<double> computed;
  if (given.empty()) computed = inclusive_weights(p);
  const std::vector<double>& w = given.empty() ? computed : given;
  FlameLayout layout;
  layout.boxes.push_back({0, 0, w[0], 0});
  // Breadth-first over drawn boxes: a box's children start at its x.
  for (size_t i = 0; i < layout.boxes.size(); ++i) {
    FlameBox parent = layout.boxes[i];
    if (!p.has_children(parent.node)) continue;
    double x = parent.x;
    for (NodeId c : p.children(parent.node)) {
      double cw = w[c];
      if (cw > 0 && cw >= min_width) {
        layout.boxes.push_back({c, x, cw, parent.depth + 1});
        layout.max_depth = std::max(layout.max_depth, parent.depth + 1);
      }
      x += std::max(cw, 0.0);
    }
  }
  return layout;
}

double min_width_in_units(const std::string& spec, double total, double graph_width_px) {
  std::string s = spec;
  bool percent = !s.empty() && s.back() == '%';
  if (percent) s.pop_back();
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || !(v >= 0) || v > 1e12)
    throw UsageError("--minwidth '" + spec + "': expected pixels (0.1) or a percentage (0.5%)");
  if (percent) return total * v / 100.0;
  return graph_width_px > 0 ? v * total / graph_width_px : 0;
}

FoldedProfile reverse_stacks(const FoldedProfile& p) {
  FoldedProfile out;
  out.units = p.units;
  std::vector<FrameId> rev;
  std::vector<FrameId> map(p.frame_count(), FoldedProfile::kNoFrame);
  p.for_each_stack([&](const std::vector<FrameId>& frames, double weight) {
    rev.clear();
    for (size_t i = frames.size(); i-- > 0;) {
      FrameId f = frames[i];
      if (map[f] == FoldedProfile::kNoFrame) map[f] = out.intern(p.frame_name(f));
      rev.push_back(map[f]);
    }
    out.add(rev, weight);
  });
  return out;
}

namespace {

constexpr std::string_view kOffCpuPrefix = "[off-cpu";
// What a wall-clock graph's colours mean, unless the user gave a subtitle.
constexpr const char* kWallSubtitle = "warm: on-CPU, blue: off-CPU (blocked), blends: both (split in the tooltip)";

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.substr(0, prefix.size()) == prefix;
}

void check_options(const SvgOptions& o) {
  if (o.width < 50 || o.width > 100000) throw UsageError("--width must be between 50 and 100000 pixels");
  if (o.frame_height < 2 || o.frame_height > 1000) throw UsageError("--height must be between 2 and 1000 pixels");
  if (!(o.font_size > 0 && o.font_size < 500)) throw UsageError("--font-size must be above 0 and below 500");
  if (!(o.font_width > 0 && o.font_width < 10)) throw UsageError("--font-width must be above 0 and below 10");
  if (!(o.factor > 0) || o.factor > 1e300) throw UsageError("--factor must be positive");
  if (!(o.total >= 0)) throw UsageError("--total must not be negative");
  if (!o.colors.empty() && !is_known_palette(o.colors))
    throw UsageError("unknown palette '" + o.colors + "' (known: " + known_palettes() + ")");
}

std::string default_title(const SvgOptions& o, bool chart) {
  if (!o.title.empty()) return o.title;
  if (chart) return "Flame Chart";
  return o.inverted ? "Icicle Graph" : "Flame Graph";
}

// Fills and tooltips shared by graphs and charts.
struct FrameColorer {
  const SvgOptions& o;
  std::string palette;

  Rgb color_in(std::string_view pal, std::string_view name, uint64_t salt) const {
    double v1, v2, v3;
    if (o.hash) {
      v1 = name_hash_value(name);
      std::string rev(name.rbegin(), name.rend());
      v2 = v3 = name_hash_value(rev);
    } else {
      v1 = mixed_hash_value(name, salt * 3 + 1);
      v2 = mixed_hash_value(name, salt * 3 + 2);
      v3 = mixed_hash_value(name, salt * 3 + 3);
    }
    return palette_color(pal, name, v1, v2, v3);
  }
  // `off_share`: the part of the frame's time spent off the CPU (wall
  // palette): 0 draws it warm, 1 cold (blue), anything between a blend.
  std::string color(std::string_view name, double off_share, uint64_t salt) const {
    if (palette != "wall") return color_in(palette, name, salt).css();
    if (off_share <= 0) return color_in("hot", name, salt).css();
    Rgb cold = color_in("io", name, salt);
    if (off_share >= 1) return cold.css();
    return mix_colors(color_in("hot", name, salt), cold, off_share).css();
  }
};

// The on/off-CPU split of a frame in a wall-clock graph, for its tooltip.
std::string wall_split(double off, double total) {
  if (!(total > 0)) return "";
  double f = std::min(1.0, std::max(0.0, off / total));
  char buf[96];
  std::snprintf(buf, sizeof buf, ", on-CPU %.1f%%, off-CPU %.1f%% of this frame", 100 * (1 - f), 100 * f);
  return buf;
}

std::string info_text(const SvgOptions& o, const std::string& count_name, double weight, double total,
                      const std::string& category) {
  // "12.3 ms" for time units, "12,345 samples" for counts (folded/weight_text.h).
  std::string s = human_weight_with_unit(weight * o.factor, count_name);
  s += ", ";
  s += detail::format_percent(weight, total);
  if (!category.empty()) s += ", category " + category;
  return s;
}

// A stack whose callers were lost folds with "[unknown]" right under its
// process frame (depth 2): the fold's marker, as `perf script` prints it.
bool is_cut_short_marker(std::string_view name, uint32_t depth) { return depth == 2 && name == "[unknown]"; }
constexpr const char* kCutShortWhy =
    "; callers lost: the user-stack copy ran out or a frame-pointer chain broke; record with fgtool record --dwarf "
    "--stack-size 65528";

// Legend rows as given, plus the cut-short row when such a frame is drawn.
std::vector<LegendEntry> legend_rows(const SvgOptions& o, const std::vector<detail::DrawFrame>& frames) {
  std::vector<LegendEntry> rows = o.legend;
  bool drawn = std::any_of(frames.begin(), frames.end(), [](const detail::DrawFrame& f) { return f.category == kCutShortName; });
  bool listed = std::any_of(rows.begin(), rows.end(), [](const LegendEntry& e) { return e.name == kCutShortName; });
  if (drawn && !listed) rows.push_back(LegendEntry{kCutShortName, kCutShortFill, "", "stacks"});
  return rows;
}

// Marker frames count their whole width in the legend and a `cat:` search:
// the share of samples whose callers are unknown (markers never nest).
void count_cut_short_width(std::vector<detail::DrawFrame>& frames) {
  for (auto& f : frames)
    if (f.category == kCutShortName) f.self = f.width;
}

std::string resolve_palette(const SvgOptions& o, const FoldedProfile& names) {
  if (!o.colors.empty()) return o.colors;
  for (FrameId f = 0; f < names.frame_count(); ++f)
    if (starts_with(names.frame_name(f), kOffCpuPrefix)) return "wall";
  return "hot";
}

FrameStyle style_of(const SvgOptions& o, NodeId node, FrameId frame, bool has_node) {
  FrameStyle st;
  if (has_node && o.node_style) st = o.node_style(node);
  if (st.fill.empty() && st.category.empty() && o.frame_style) st = o.frame_style(frame);
  return st;
}

}  // namespace

void render_flamegraph(const FoldedProfile& p, const SvgOptions& o, std::string& out) {
  check_options(o);
  if (o.reverse) {
    SvgOptions plain = o;
    plain.reverse = false;
    plain.node_style = nullptr;  // node ids of the reversed tree differ; frame_style still applies
    plain.mark_cut_short = false;  // leaf-first stacks: depth 2 is not the root side
    render_flamegraph(reverse_stacks(p), plain, out);
    return;
  }
  std::vector<double> w = inclusive_weights(p);
  detail::SvgDocument doc;
  doc.title = default_title(o, false);
  doc.subtitle = o.subtitle;
  doc.total = std::max(o.total, w[0]);
  double min_width = min_width_in_units(o.min_width, doc.total, o.width - 20.0);
  FlameLayout layout = layout_flame(p, min_width, w);
  doc.max_depth = layout.max_depth;
  FrameColorer colorer{o, resolve_palette(o, p)};
  palette_background(colorer.palette, doc.background_top, doc.background_bottom);
  if (!o.background.empty()) background_colors(o.background, doc.background_top, doc.background_bottom);
  const std::string count_name = o.count_name.empty() ? p.units : o.count_name;
  const bool wall = colorer.palette == "wall";
  if (wall && doc.subtitle.empty()) doc.subtitle = kWallSubtitle;
  // Wall-clock graphs: the off-CPU weight under every node (samples whose
  // stack holds an "[off-cpu..." frame), so each frame shows its split.
  std::vector<double> off;
  if (wall) {
    size_t n = p.node_count();
    std::vector<uint8_t> off_path(n, 0);
    off.assign(n, 0);
    for (size_t i = 1; i < n; ++i) {
      const auto& node = p.node(static_cast<NodeId>(i));
      off_path[i] = off_path[node.parent] || starts_with(p.frame_name(node.frame), kOffCpuPrefix);
      if (off_path[i]) off[i] = node.self;
    }
    for (size_t i = n; i-- > 1;) off[p.node(static_cast<NodeId>(i)).parent] += off[i];
  }
  std::vector<int32_t> box_of(p.node_count(), -1), parent_box;
  doc.frames.reserve(layout.boxes.size());
  parent_box.reserve(layout.boxes.size());
  for (const FlameBox& b : layout.boxes) {
    box_of[b.node] = static_cast<int32_t>(doc.frames.size());
    parent_box.push_back(b.node == 0 ? -1 : box_of[p.node(b.node).parent]);
    detail::DrawFrame f;
    f.x = b.x;
    f.width = b.width;
    f.depth = b.depth;
    if (b.node == 0) {
      f.name = "all";
      f.fill = "rgb(250,250,250)";
      f.info = info_text(o, count_name, b.width, doc.total, "");
      if (wall) f.info += wall_split(off[0], w[0]);
      doc.frames.push_back(std::move(f));
      continue;
    }
    const auto& n = p.node(b.node);
    f.name = p.frame_name(n.frame);
    double off_share = wall && w[b.node] > 0 ? off[b.node] / w[b.node] : 0;
    FrameStyle st = style_of(o, b.node, n.frame, true);
    f.fill = st.fill.empty() ? colorer.color(f.name, off_share, b.depth) : st.fill;
    f.category = st.category;
    bool cut_short = o.mark_cut_short && is_cut_short_marker(f.name, b.depth);
    if (cut_short) {
      // Drawn hatched, in its own legend row, whatever the palette.
      f.fill = kCutShortFill;
      f.category = kCutShortName;
    }
    f.info = info_text(o, count_name, b.width, doc.total, cut_short ? "" : st.category);
    if (wall) f.info += wall_split(off[b.node], w[b.node]);
    if (cut_short) f.info += kCutShortWhy;
    doc.frames.push_back(std::move(f));
  }
  detail::set_drawn_self(doc.frames, parent_box);
  count_cut_short_width(doc.frames);
  doc.legend = detail::complete_legend(legend_rows(o, doc.frames), doc.frames, doc.total);
  detail::write_svg_document(o, doc, out);
}

void render_flamegraph(const FoldedProfile& profile, const SvgOptions& options, AtomicOutput& out) {
  std::string s;
  render_flamegraph(profile, options, s);
  out.write(s);
}

struct FlameChartBuilder::Impl {
  struct ChartNode {
    FrameId frame;
    uint32_t parent;
    uint32_t depth;
    double start, width;
    double off;  // weight of the stacks through here that hold an "[off-cpu..." frame
  };
  FoldedProfile names;
  std::vector<ChartNode> nodes{ChartNode{0, 0, 0, 0, 0, 0}};  // [0] = "all"
  std::vector<uint32_t> path;  // current rightmost path (node indexes), root excluded
  std::vector<FrameId> frames;
  double cursor = 0;
};

FlameChartBuilder::FlameChartBuilder() : impl_(std::make_unique<Impl>()) {}
FlameChartBuilder::~FlameChartBuilder() = default;

void FlameChartBuilder::add(std::string_view s, double weight) {
  Impl& m = *impl_;
  if (s.empty() || !(weight > 0)) return;
  m.frames.clear();
  size_t start = 0;
  for (;;) {
    size_t semi = s.find(';', start);
    m.frames.push_back(m.names.intern(s.substr(start, semi == std::string_view::npos ? semi : semi - start)));
    if (semi == std::string_view::npos) break;
    start = semi + 1;
  }
  // Only the previous stack's path can be extended: that is what keeps the
  // chart in input order.
  size_t keep = 0;
  while (keep < m.path.size() && keep < m.frames.size() && m.nodes[m.path[keep]].frame == m.frames[keep]) ++keep;
  m.path.resize(keep);
  for (size_t i = keep; i < m.frames.size(); ++i) {
    uint32_t parent = i ? m.path[i - 1] : 0;
    m.nodes.push_back({m.frames[i], parent, static_cast<uint32_t>(i + 1), m.cursor, 0, 0});
    m.path.push_back(static_cast<uint32_t>(m.nodes.size() - 1));
  }
  bool off = false;
  for (FrameId f : m.frames) off = off || starts_with(m.names.frame_name(f), kOffCpuPrefix);
  for (uint32_t n : m.path) {
    m.nodes[n].width += weight;
    if (off) m.nodes[n].off += weight;
  }
  m.nodes[0].width += weight;
  if (off) m.nodes[0].off += weight;
  m.cursor += weight;
}

void FlameChartBuilder::render(const SvgOptions& o, std::string& out) const {
  check_options(o);
  const Impl& m = *impl_;
  detail::SvgDocument doc;
  doc.title = default_title(o, true);
  doc.subtitle = o.subtitle;
  doc.total = std::max(o.total, m.nodes[0].width);
  double min_width = min_width_in_units(o.min_width, doc.total, o.width - 20.0);
  FrameColorer colorer{o, resolve_palette(o, m.names)};
  palette_background(colorer.palette, doc.background_top, doc.background_bottom);
  if (!o.background.empty()) background_colors(o.background, doc.background_top, doc.background_bottom);
  const std::string count_name = o.count_name.empty() ? m.names.units : o.count_name;
  const bool wall = colorer.palette == "wall";
  if (wall && doc.subtitle.empty()) doc.subtitle = kWallSubtitle;
  std::vector<int32_t> drawn_index(m.nodes.size(), -1), parent_index;
  for (size_t i = 0; i < m.nodes.size(); ++i) {
    const auto& n = m.nodes[i];
    if (i > 0 && n.width < min_width) continue;  // parents are wider, so pruning is consistent
    detail::DrawFrame f;
    f.x = n.start;
    f.width = n.width;
    f.depth = n.depth;
    doc.max_depth = std::max(doc.max_depth, n.depth);
    if (i == 0) {
      f.name = "all";
      f.fill = "rgb(250,250,250)";
      f.info = info_text(o, count_name, n.width, doc.total, "");
    } else {
      f.name = m.names.frame_name(n.frame);
      FrameStyle st = style_of(o, 0, n.frame, false);
      f.fill = st.fill.empty() ? colorer.color(f.name, wall && n.width > 0 ? n.off / n.width : 0, n.depth) : st.fill;
      f.category = st.category;
      if (o.mark_cut_short && is_cut_short_marker(f.name, n.depth)) {
        f.fill = kCutShortFill;
        f.category = kCutShortName;
      }
      f.info = info_text(o, count_name, n.width, doc.total, f.category == kCutShortName ? "" : st.category);
    }
    if (wall) f.info += wall_split(n.off, n.width);
    if (f.category == kCutShortName) f.info += kCutShortWhy;
    drawn_index[i] = static_cast<int32_t>(doc.frames.size());
    parent_index.push_back(i == 0 ? -1 : drawn_index[n.parent]);
    doc.frames.push_back(std::move(f));
  }
  detail::set_drawn_self(doc.frames, parent_index);
  count_cut_short_width(doc.frames);
  doc.legend = detail::complete_legend(legend_rows(o, doc.frames), doc.frames, doc.total);
  detail::write_svg_document(o, doc, out);
}

}  // namespace fg
