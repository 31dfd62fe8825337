#include "render/svg_document.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "folded/weight_text.h"
#include "render/palette.h"
#include "render/xml_text.h"

namespace fg::detail {

namespace {

void appendf(std::string& out, const char* fmt, double v) {
  char buf[64];
  int n = std::snprintf(buf, sizeof buf, fmt, v);
  out.append(buf, n > 0 ? static_cast<size_t>(n) : 0);
}

// One decimal, no "-0.0".
void px(std::string& out, double v) {
  if (std::fabs(v) < 0.05) v = 0;
  appendf(out, "%.1f", v);
}

// Exact, compact numbers for fg:x / fg:w (counts, possibly fractional).
void exact(std::string& out, double v) {
  if (v == std::floor(v) && std::fabs(v) < 9e15) {
    char buf[32];
    int n = std::snprintf(buf, sizeof buf, "%.0f", v);
    out.append(buf, n);
  } else {
    appendf(out, "%.17g", v);
  }
}

// Only characters that cannot break out of a CSS declaration.
std::string css_font(std::string_view font) {
  std::string out;
  for (char c : font)
    if (std::isalnum(static_cast<unsigned char>(c)) || c == ' ' || c == ',' || c == '-' || c == '_') out += c;
  return out.empty() ? "Verdana" : out;
}

// Tooltip info lives inside the last "( )" of the title; the script strips
// that group to recover the name, so it must contain no '('.
void append_info(std::string& out, std::string_view info) {
  std::string clean(info);
  for (char& c : clean)
    if (c == '(') c = '[';
    else if (c == ')') c = ']';
  append_xml_escaped(out, clean);
}

}  // namespace

std::string format_display_count(double v) {
  char buf[64];
  bool integral = std::fabs(v - std::round(v)) < 1e-9 * std::max(1.0, std::fabs(v));
  std::snprintf(buf, sizeof buf, integral ? "%.0f" : "%.2f", integral ? std::round(v) : v);
  return group_thousands(buf);
}

std::string format_percent(double part, double whole) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f%%", whole > 0 ? 100.0 * part / whole : 0.0);
  return buf;
}

std::string format_share1(double part, double whole) {
  double v = whole > 0 ? 100.0 * part / whole : 0.0;
  // Rounded as the script rounds ("Matched"), so the two print the same text.
  double r = std::floor(v * 10 + 0.5) / 10;
  if (v > 0 && r == 0) return "<0.1%";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f%%", r);
  return buf;
}

void set_drawn_self(std::vector<DrawFrame>& frames, const std::vector<int32_t>& parent) {
  for (auto& f : frames) f.self = f.width;
  for (size_t i = 0; i < frames.size() && i < parent.size(); ++i)
    if (parent[i] >= 0) frames[static_cast<size_t>(parent[i])].self -= frames[i].width;
  for (auto& f : frames)
    if (f.self < 0) f.self = 0;  // children wider than the parent only by rounding
}

std::vector<LegendEntry> complete_legend(
    const std::vector<LegendEntry>& rows, const std::vector<DrawFrame>& frames, double total,
    const std::function<std::string(const std::string& category, double drawn_self)>& share_text,
    const std::function<double(const std::string& category, double drawn_self)>& order) {
  // Summed in frame order, as the script sums fg:s for a `cat:` search.
  std::map<std::string, double> drawn;
  std::vector<std::pair<std::string, std::string>> seen;  // category, first fill, in drawing order
  for (const DrawFrame& f : frames) {
    if (f.category.empty()) continue;
    auto [it, inserted] = drawn.emplace(f.category, 0.0);
    if (inserted) seen.emplace_back(f.category, f.fill);
    it->second += std::max(f.self, 0.0);
  }
  std::vector<LegendEntry> out;
  std::vector<double> key;  // drawn self, for ordering; -1 for rows given with a share
  std::set<std::string> listed;
  auto add = [&](LegendEntry e, double k) {
    out.push_back(std::move(e));
    key.push_back(k);
  };
  for (const LegendEntry& r : rows) {
    listed.insert(r.name);
    if (!r.share.empty()) {
      add(r, -1);
      continue;
    }
    auto it = drawn.find(r.name);
    if (it == drawn.end()) continue;
    LegendEntry e = r;
    e.share = share_text ? share_text(r.name, it->second) : format_share1(it->second, total);
    add(std::move(e), order ? order(r.name, it->second) : it->second);
  }
  if (!rows.empty())
    for (const auto& [name, fill] : seen)
      if (!listed.count(name)) {
        double w = drawn[name];
        add(LegendEntry{name, fill, share_text ? share_text(name, w) : format_share1(w, total), ""},
            order ? order(name, w) : w);
      }
  // Largest first within each section; sections keep their order.
  std::vector<std::string> sections;
  for (const auto& e : out)
    if (std::find(sections.begin(), sections.end(), e.section) == sections.end()) sections.push_back(e.section);
  std::vector<size_t> idx(out.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  auto section_of = [&](size_t i) {
    return std::find(sections.begin(), sections.end(), out[i].section) - sections.begin();
  };
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
    auto sa = section_of(a), sb = section_of(b);
    if (sa != sb) return sa < sb;
    if (key[a] >= 0 && key[b] >= 0) return key[a] > key[b];
    return false;
  });
  std::vector<LegendEntry> sorted;
  for (size_t i : idx) sorted.push_back(std::move(out[i]));
  return sorted;
}

namespace {

// Frame labels: the whole name when it fits; else flamegraph.pl's first
// chars-2 characters and "..", except for qualified C++ names ending in an
// identifier ("at::native::cpu_kernel"), which keep their tail so the
// function name stays readable: "..ive::cpu_kernel". Nothing below three
// characters. The script's place() applies the same rule when zooming.
bool keeps_tail(std::string_view name) {
  if (name.find("::") == std::string_view::npos || name.empty()) return false;
  unsigned char c = static_cast<unsigned char>(name.back());
  return std::isalnum(c) || c == '_';
}

void append_label(std::string& out, const std::string& clean, size_t chars) {
  if (chars < 3) return;
  size_t len = utf8_length(clean);
  if (len <= chars) {
    append_xml_escaped(out, clean);
  } else if (keeps_tail(clean)) {
    out += "..";
    append_xml_escaped(out, utf8_suffix(clean, chars - 2));
  } else {
    append_xml_escaped(out, utf8_prefix(clean, chars - 2));
    out += "..";
  }
}

// `s` cut to at most `chars` code points with ".." when it is longer.
std::string fit_text(const std::string& s, double chars) {
  std::string clean = sanitize_xml_utf8(s);
  size_t n = chars > 0 ? static_cast<size_t>(chars) : 0;
  if (utf8_length(clean) <= n) return clean;
  if (n < 3) return "";
  return std::string(utf8_prefix(clean, n - 2)) + "..";
}

}  // namespace

namespace {

struct LegendPos {
  double x;
  int row;
  bool label;  // a section label, not an entry
  size_t entry;
};

// Where everything goes on the page, from the options and the document.
struct PageLayout {
  double fs, xpad, graph_width, fh, char_px, title_fs;
  int width;
  double search_right;
  std::string title, subtitle;
  double title_base, subtitle_base;
  std::vector<LegendPos> legend_pos;
  double legend_top, row_h, swatch;
  double ypad1, ypad2, height;
};

// Legend rows (wrapped to the width), each section opening with a label.
// Returns the number of rows.
int place_legend(const SvgDocument& doc, const PageLayout& l, double gap, double slack,
                 std::vector<LegendPos>& legend_pos) {
  int legend_rows = 0;
  double x = l.xpad;
  auto place_item = [&](double w) {
    if (x > l.xpad && x + w > l.width - l.xpad) {
      x = l.xpad;
      ++legend_rows;
    }
    double at = x;
    x += w;
    return at;
  };
  for (size_t i = 0; i < doc.legend.size(); ++i) {
    const auto& e = doc.legend[i];
    double w = l.swatch + 4 + (utf8_length(sanitize_xml_utf8(e.name + " " + e.share)) + 2) * l.char_px * slack;
    if (!e.section.empty() && (i == 0 || doc.legend[i - 1].section != e.section)) {
      // A section label wraps together with its first entry, never alone
      // at the end of a row.
      if (x > l.xpad) x += gap / 2;
      double label_w = (utf8_length(sanitize_xml_utf8(e.section)) + 2) * l.char_px * slack;
      double at = place_item(label_w + w);
      legend_pos.push_back({at, legend_rows, true, i});
      legend_pos.push_back({at + label_w, legend_rows, false, i});
      continue;
    }
    double at = place_item(w);
    legend_pos.push_back({at, legend_rows, false, i});
  }
  if (!doc.legend.empty()) ++legend_rows;
  return legend_rows;
}

PageLayout lay_out(const SvgOptions& o, const SvgDocument& doc) {
  PageLayout l;
  l.fs = o.font_size;
  l.width = o.width;
  l.xpad = 10;
  l.graph_width = l.width - 2 * l.xpad;
  l.fh = o.frame_height;
  l.char_px = l.fs * o.font_width;
  l.title_fs = l.fs + 5;
  const double fs = l.fs, width = l.width, xpad = l.xpad, char_px = l.char_px;

  // Header rows, top to bottom: [Reset Zoom | title | Search ic], the
  // subtitle, then the legend rows. Widths are estimated from font_width;
  // a little slack (10%) covers fonts wider than the estimate.
  const double slack = 1.1;
  const double gap = fs;
  const double ic_w = 2 * char_px * slack;
  l.search_right = width - xpad - ic_w - gap / 2;           // Search is right-aligned here
  const double search_w = 12 * char_px * slack;             // "Reset Search"
  const double unzoom_right = xpad + 10 * char_px * slack;  // "Reset Zoom"
  const double title_half = std::min(width / 2.0 - unzoom_right, l.search_right - search_w - width / 2.0) - gap;
  l.title = fit_text(doc.title, 2 * title_half / (l.title_fs * o.font_width * slack));
  l.subtitle = doc.subtitle.empty() ? "" : fit_text(doc.subtitle, (l.graph_width) / (char_px * slack));
  l.title_base = fs * 2;
  l.subtitle_base = fs * 4;
  double header_bottom = l.subtitle.empty() ? l.title_base + 0.3 * l.title_fs : l.subtitle_base + 0.3 * fs;

  l.row_h = fs * 1.3 + 4;
  l.swatch = std::round(fs * 0.8);
  int legend_rows = place_legend(doc, l, gap, slack, l.legend_pos);
  l.legend_top = header_bottom + 4;
  // Without a legend the frames start where flamegraph.pl starts them.
  l.ypad1 = doc.legend.empty() ? fs * 3 + (l.subtitle.empty() ? 0 : fs * 2) : l.legend_top + legend_rows * l.row_h + 4;
  l.ypad2 = fs * 2 + 10;
  l.height = (doc.max_depth + 1) * l.fh + l.ypad1 + l.ypad2;
  return l;
}

// The XML prologue, <svg>, notes, gradients and patterns, style, script and
// the script's settings.
void write_head(const SvgOptions& o, const SvgDocument& doc, const PageLayout& l, std::string& out) {
  const int width = l.width;
  out += "<?xml version=\"1.0\" standalone=\"no\"?>\n"
         "<!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\" \"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd\">\n";
  if (o.fluid) {
    out += "<svg version=\"1.1\" width=\"100%\" preserveAspectRatio=\"xMinYMin meet\"";
  } else {
    out += "<svg version=\"1.1\" width=\"" + std::to_string(width) + "\" height=\"";
    px(out, l.height);
    out += "\"";
  }
  if (o.embed_script) out += " onload=\"init(evt)\"";
  out += " viewBox=\"0 0 " + std::to_string(width) + " ";
  px(out, l.height);
  out += "\" xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\""
         " xmlns:fg=\"http://fgtool.invalid/ns\">\n";
  out += "<!-- Flame graph stack visualization by fgtool. See https://www.brendangregg.com/flamegraphs.html -->\n";
  if (!o.notes.empty()) {
    out += "<desc id=\"notes\">";
    append_xml_escaped(out, o.notes);
    out += "</desc>\n";
  }
  out += "<defs>\n<linearGradient id=\"background\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">"
         "<stop stop-color=\"" + doc.background_top + "\" offset=\"5%\"/>"
         "<stop stop-color=\"" + doc.background_bottom + "\" offset=\"95%\"/></linearGradient>\n";
  // The hatching of cut-short stacks' marker frames, only where one is drawn.
  bool cut_short = std::any_of(doc.frames.begin(), doc.frames.end(), [](const DrawFrame& f) { return f.fill == kCutShortFill; }) ||
                   std::any_of(doc.legend.begin(), doc.legend.end(), [](const LegendEntry& e) { return e.fill == kCutShortFill; });
  if (cut_short)
    out += std::string("<pattern id=\"fg_cutshort\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
                       "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"") + kCutShortBase +
           "\"/><rect width=\"3\" height=\"6\" fill=\"" + kCutShortStripe + "\"/></pattern>\n";
  out += "</defs>\n";
  out += "<style type=\"text/css\">\n"
         "text { font-family:" + css_font(o.font_type) + "; font-size:";
  appendf(out, "%g", l.fs);
  out += "px; fill:rgb(0,0,0); }\n"
         "text.w { fill:rgb(255,255,255); }\n"
         "#search, #ignorecase { opacity:0.1; cursor:pointer; text-anchor:end; }\n"
         "#search:hover, #search.show, #ignorecase:hover, #ignorecase.show { opacity:1; }\n"
         "#matched { text-anchor:end; }\n"
         "#subtitle { text-anchor:middle; fill:rgb(100,100,100); }\n"
         "#title { text-anchor:middle; font-size:";
  appendf(out, "%g", l.title_fs);
  out += "px; }\n"
         "#unzoom { cursor:pointer; }\n"
         "#legend > g { cursor:pointer; }\n"
         "#legend > text { fill:rgb(90,90,90); }\n"
         "#frames > *:hover { stroke:black; stroke-width:0.5; cursor:pointer; }\n"
         ".hide { display:none; }\n"
         ".parent { opacity:0.5; }\n"
         "</style>\n";
  if (o.embed_script) {
    out += "<script type=\"text/ecmascript\"><![CDATA[\n";
    out += kFlamegraphJs;
    out += "]]></script>\n";
  }
  // Settings for the script, as attributes (never inside the script).
  out += "<g id=\"fg_config\" fg:xpad=\"";
  exact(out, l.xpad);
  out += "\" fg:width=\"" + std::to_string(width) + "\" fg:fontsize=\"";
  appendf(out, "%g", l.fs);
  out += "\" fg:fontwidth=\"";
  appendf(out, "%g", o.font_width);
  out += "\" fg:total=\"";
  exact(out, doc.total);
  out += "\" fg:inverted=\"";
  out += o.inverted ? "1" : "0";
  out += "\" fg:nametype=\"";
  append_xml_escaped(out, o.name_type);
  out += "\"/>\n";
}

// The background and the fixed texts: title, subtitle, details line, the
// zoom and search controls.
void write_controls(const PageLayout& l, std::string& out) {
  const int width = l.width;
  out += "<rect x=\"0.0\" y=\"0\" width=\"" + std::to_string(width) + ".0\" height=\"";
  px(out, l.height);
  out += "\" fill=\"url(#background)\"/>\n";
  auto text = [&](const char* id, double x, double y, std::string_view s, const char* extra = "") {
    out += "<text id=\"";
    out += id;
    out += "\" x=\"";
    px(out, x);
    out += "\" y=\"";
    px(out, y);
    out += "\"";
    out += extra;
    out += ">";
    append_xml_escaped(out, s);
    out += "</text>\n";
  };
  text("title", width / 2.0, l.title_base, l.title);
  if (!l.subtitle.empty()) text("subtitle", width / 2.0, l.subtitle_base, l.subtitle);
  text("details", l.xpad, l.height - l.ypad2 / 2, " ");
  text("unzoom", l.xpad, l.title_base, "Reset Zoom", " class=\"hide\"");
  text("search", l.search_right, l.title_base, "Search");
  text("ignorecase", width - l.xpad, l.title_base, "ic");
  text("matched", width - l.xpad, l.height - l.ypad2 / 2, " ");
}

void write_legend(const SvgDocument& doc, const PageLayout& l, std::string& out) {
  if (doc.legend.empty()) return;
  out += "<g id=\"legend\">\n";
  for (const LegendPos& pos : l.legend_pos) {
    const auto& e = doc.legend[pos.entry];
    double y = l.legend_top + pos.row * l.row_h + l.fs;  // text baseline
    if (pos.label) {
      out += "<text x=\"";
      px(out, pos.x);
      out += "\" y=\"";
      px(out, y);
      out += "\">";
      append_xml_escaped(out, e.section + ":");
      out += "</text>\n";
      continue;
    }
    out += "<g fg:cat=\"";
    append_xml_escaped(out, e.name);
    out += "\"><title>";
    append_xml_escaped(out, e.name + (e.share.empty() ? "" : " " + e.share) +
                                (e.section.empty() ? "" : " (" + e.section + ")") + ": click to search");
    out += "</title><rect x=\"";
    px(out, pos.x);
    out += "\" y=\"";
    px(out, y - l.swatch + 1);
    out += "\" width=\"";
    px(out, l.swatch);
    out += "\" height=\"";
    px(out, l.swatch);
    out += "\" fill=\"";
    append_xml_escaped(out, e.fill);
    out += "\" stroke=\"rgb(90,90,90)\" stroke-width=\"0.5\" rx=\"2\" ry=\"2\"/><text x=\"";
    px(out, pos.x + l.swatch + 4);
    out += "\" y=\"";
    px(out, y);
    out += "\">";
    append_xml_escaped(out, e.name);
    if (!e.share.empty()) {
      out += ' ';
      append_xml_escaped(out, e.share);
    }
    out += "</text></g>\n";
  }
  out += "</g>\n";
}

// One frame: its group (position and weights for the script), tooltip, box and label.
void write_frame(const SvgOptions& o, const PageLayout& l, double scale, const DrawFrame& f, std::string& clean,
                 std::string& out) {
  const double framepad = 1;
  double x1 = l.xpad + f.x * scale, w = f.width * scale;
  double y1, y2;
  if (o.inverted) {
    y1 = l.ypad1 + f.depth * l.fh;
    y2 = l.ypad1 + (f.depth + 1) * l.fh - framepad;
  } else {
    y1 = l.height - l.ypad2 - (f.depth + 1) * l.fh + framepad;
    y2 = l.height - l.ypad2 - f.depth * l.fh;
  }
  clean = sanitize_xml_utf8(f.name);
  out += "<g fg:x=\"";
  exact(out, f.x);
  out += "\" fg:w=\"";
  exact(out, f.width);
  out += "\"";
  if (!f.category.empty()) {
    out += " fg:c=\"";
    append_xml_escaped(out, f.category);
    out += "\" fg:s=\"";
    exact(out, std::max(f.self, 0.0));
    out += "\"";
  }
  out += "><title>";
  append_xml_escaped(out, clean);
  out += " (";
  append_info(out, f.info);
  out += ")</title><rect x=\"";
  px(out, x1);
  out += "\" y=\"";
  px(out, y1);
  out += "\" width=\"";
  px(out, w);
  out += "\" height=\"";
  px(out, y2 - y1);
  out += "\" fill=\"";
  append_xml_escaped(out, f.fill);
  out += "\" rx=\"2\" ry=\"2\"/><text";
  Rgb fill;
  if (parse_css_color(f.fill, fill) && white_text_on(fill)) out += " class=\"w\"";
  out += " x=\"";
  px(out, x1 + 3);
  out += "\" y=\"";
  px(out, 3 + (y1 + y2) / 2);
  out += "\">";
  append_label(out, clean, l.char_px > 0 ? static_cast<size_t>(w / l.char_px) : 0);
  out += "</text></g>\n";
}

}  // namespace

void write_svg_document(const SvgOptions& o, const SvgDocument& doc, std::string& out) {
  const PageLayout l = lay_out(o, doc);
  out.reserve(out.size() + 2048 + doc.frames.size() * 220);
  write_head(o, doc, l, out);
  write_controls(l, out);
  write_legend(doc, l, out);
  out += "<g id=\"frames\">\n";
  const double scale = doc.total > 0 ? l.graph_width / doc.total : 0;
  std::string clean;
  for (const DrawFrame& f : doc.frames) write_frame(o, l, scale, f, clean, out);
  out += "</g>\n</svg>\n";
}

}  // namespace fg::detail
