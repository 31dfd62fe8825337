#include "render/svg_document.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

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
  std::string s = buf;
  size_t dot = s.find('.');
  size_t int_end = dot == std::string::npos ? s.size() : dot;
  size_t start = (s[0] == '-') ? 1 : 0;
  std::string out = s.substr(0, start);
  for (size_t i = start; i < int_end; ++i) {
    out += s[i];
    size_t left = int_end - i - 1;
    if (left && left % 3 == 0) out += ',';
  }
  out += s.substr(int_end);
  return out;
}

std::string format_percent(double part, double whole) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f%%", whole > 0 ? 100.0 * part / whole : 0.0);
  return buf;
}

void write_svg_document(const SvgOptions& o, const SvgDocument& doc, std::string& out) {
  const double fs = o.font_size;
  const int width = o.width;
  const double xpad = 10;
  const double graph_width = width - 2 * xpad;
  const double fh = o.frame_height;
  const double framepad = 1;

  // Legend rows (wrapped to the width).
  struct LegendPos {
    double x;
    int row;
  };
  std::vector<LegendPos> legend_pos;
  int legend_rows = 0;
  {
    double x = xpad;
    for (const auto& e : o.legend) {
      double w = 16 + (utf8_length(sanitize_xml_utf8(e.name + " " + e.share)) + 2) * fs * o.font_width;
      if (x > xpad && x + w > width - xpad) {
        x = xpad;
        ++legend_rows;
      }
      legend_pos.push_back({x, legend_rows});
      x += w;
    }
    if (!o.legend.empty()) ++legend_rows;
  }
  const double title_block = fs * 3 + (doc.subtitle.empty() ? 0 : fs * 2);
  const double ypad1 = title_block + legend_rows * (fs + 8);
  const double ypad2 = fs * 2 + 10;
  const double height = (doc.max_depth + 1) * fh + ypad1 + ypad2;

  out.reserve(out.size() + 2048 + doc.frames.size() * 220);
  out += "<?xml version=\"1.0\" standalone=\"no\"?>\n"
         "<!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\" \"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd\">\n";
  out += "<svg version=\"1.1\" width=\"" + std::to_string(width) + "\" height=\"";
  px(out, height);
  out += "\"";
  if (o.embed_script) out += " onload=\"init(evt)\"";
  out += " viewBox=\"0 0 " + std::to_string(width) + " ";
  px(out, height);
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
         "<stop stop-color=\"" + doc.background_bottom + "\" offset=\"95%\"/></linearGradient>\n</defs>\n";
  out += "<style type=\"text/css\">\n"
         "text { font-family:" + css_font(o.font_type) + "; font-size:";
  appendf(out, "%g", fs);
  out += "px; fill:rgb(0,0,0); }\n"
         "#search, #ignorecase { opacity:0.1; cursor:pointer; }\n"
         "#search:hover, #search.show, #ignorecase:hover, #ignorecase.show { opacity:1; }\n"
         "#subtitle { text-anchor:middle; fill:rgb(160,160,160); }\n"
         "#title { text-anchor:middle; font-size:";
  appendf(out, "%g", fs + 5);
  out += "px; }\n"
         "#unzoom { cursor:pointer; }\n"
         "#legend > g { cursor:pointer; }\n"
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
  exact(out, xpad);
  out += "\" fg:width=\"" + std::to_string(width) + "\" fg:fontsize=\"";
  appendf(out, "%g", fs);
  out += "\" fg:fontwidth=\"";
  appendf(out, "%g", o.font_width);
  out += "\" fg:total=\"";
  exact(out, doc.total);
  out += "\" fg:inverted=\"";
  out += o.inverted ? "1" : "0";
  out += "\" fg:nametype=\"";
  append_xml_escaped(out, o.name_type);
  out += "\"/>\n";

  out += "<rect x=\"0.0\" y=\"0\" width=\"" + std::to_string(width) + ".0\" height=\"";
  px(out, height);
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
  text("title", width / 2.0, fs * 2, doc.title);
  if (!doc.subtitle.empty()) text("subtitle", width / 2.0, fs * 4, doc.subtitle);
  text("details", xpad, height - ypad2 / 2, " ");
  text("unzoom", xpad, fs * 2, "Reset Zoom", " class=\"hide\"");
  text("search", width - xpad - 100, fs * 2, "Search");
  text("ignorecase", width - xpad - 16, fs * 2, "ic");
  text("matched", width - xpad - 100, height - ypad2 / 2, " ");

  if (!o.legend.empty()) {
    out += "<g id=\"legend\">\n";
    for (size_t i = 0; i < o.legend.size(); ++i) {
      const auto& e = o.legend[i];
      double y = title_block + legend_pos[i].row * (fs + 8);
      out += "<g fg:cat=\"";
      append_xml_escaped(out, e.name);
      out += "\"><title>";
      append_xml_escaped(out, e.name + (e.share.empty() ? "" : " " + e.share) + " (click to search)");
      out += "</title><rect x=\"";
      px(out, legend_pos[i].x);
      out += "\" y=\"";
      px(out, y - fs + 2);
      out += "\" width=\"12.0\" height=\"12.0\" fill=\"";
      append_xml_escaped(out, e.fill);
      out += "\" rx=\"2\" ry=\"2\"/><text x=\"";
      px(out, legend_pos[i].x + 16);
      out += "\" y=\"";
      px(out, y + 1);
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

  out += "<g id=\"frames\">\n";
  const double scale = doc.total > 0 ? graph_width / doc.total : 0;
  const double char_px = fs * o.font_width;
  std::string clean;
  for (const DrawFrame& f : doc.frames) {
    double x1 = xpad + f.x * scale, w = f.width * scale;
    double y1, y2;
    if (o.inverted) {
      y1 = ypad1 + f.depth * fh;
      y2 = ypad1 + (f.depth + 1) * fh - framepad;
    } else {
      y1 = height - ypad2 - (f.depth + 1) * fh + framepad;
      y2 = height - ypad2 - f.depth * fh;
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
    out += "\" rx=\"2\" ry=\"2\"/><text x=\"";
    px(out, x1 + 3);
    out += "\" y=\"";
    px(out, 3 + (y1 + y2) / 2);
    out += "\">";
    // flamegraph.pl's truncation: whole name if it fits, else the first
    // chars-2 characters and "..", nothing below three characters.
    size_t chars = char_px > 0 ? static_cast<size_t>(w / char_px) : 0;
    if (chars >= 3) {
      size_t len = utf8_length(clean);
      if (len <= chars) {
        append_xml_escaped(out, clean);
      } else {
        append_xml_escaped(out, utf8_prefix(clean, chars - 2));
        out += "..";
      }
    }
    out += "</text></g>\n";
  }
  out += "</g>\n</svg>\n";
}

}  // namespace fg::detail
