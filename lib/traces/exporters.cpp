#include "traces/exporters.h"

#include "diagnostics/terminal_text.h"
#include "diagnostics/utf8.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "folded/folded_writer.h"

namespace fg {

bool parse_export_format(std::string_view name, ExportFormat& out) {
  if (name == "speedscope") out = ExportFormat::Speedscope;
  else if (name == "d3" || name == "d3-flamegraph" || name == "d3-flame-graph") out = ExportFormat::D3;
  else if (name == "pprof-text" || name == "text") out = ExportFormat::TextTree;
  else return false;
  return true;
}

std::string speedscope_unit(const std::string& units) {
  if (units == "us") return "microseconds";
  if (units == "ns") return "nanoseconds";
  if (units == "ms") return "milliseconds";
  if (units == "s") return "seconds";
  if (units == "bytes") return "bytes";
  return "none";
}

namespace {

void append_number(std::string& out, double v) {
  if (!std::isfinite(v)) v = 0;
  append_count(out, v);
}

// "1234.5" style for the text tree: integers as integers, else 3 decimals trimmed.
std::string short_number(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) return format_count(v);
  char b[64];
  std::snprintf(b, sizeof b, "%.3f", v);
  std::string s = b;
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

std::string percent(double part, double whole) {
  char b[32];
  std::snprintf(b, sizeof b, "%6.2f%%", whole > 0 ? 100.0 * part / whole : 0.0);
  return b;
}

constexpr size_t kMaxIndent = 64;  // levels indented; deeper lines show their depth

std::string pad_left(const std::string& s, size_t w) { return s.size() >= w ? s : std::string(w - s.size(), ' ') + s; }

}  // namespace

void append_json_string(std::string& out, std::string_view s) {
  static const char hex[] = "0123456789abcdef";
  out += '"';
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
      ++i;
    } else if (c < 0x20) {
      switch (c) {
        case '\n': out += "\\n"; break;
        case '\t': out += "\\t"; break;
        case '\r': out += "\\r"; break;
        default: out += "\\u00"; out += hex[c >> 4]; out += hex[c & 15];
      }
      ++i;
    } else if (c < 0x80) {
      out += char(c);
      ++i;
    } else if (size_t n = utf8_sequence_length(s, i)) {
      out.append(s.data() + i, n);
      i += n;
    } else {
      out += "\xEF\xBF\xBD";  // U+FFFD for a byte that is not valid UTF-8
      ++i;
    }
  }
  out += '"';
}

void export_speedscope(FoldedProfile& profile, const ExportOptions& options, std::string& out) {
  profile.finalize();
  // Frame indexes in order of first use, so unused names are not written.
  std::vector<int64_t> index(profile.frame_count(), -1);
  std::vector<FrameId> used;
  std::string samples, weights;
  double total = 0;
  bool first = true;
  profile.for_each_stack([&](const std::vector<FrameId>& frames, double weight) {
    if (!(weight > 0)) return;
    samples += first ? "[" : ",[";
    for (size_t i = 0; i < frames.size(); ++i) {
      int64_t& ix = index[frames[i]];
      if (ix < 0) {
        ix = int64_t(used.size());
        used.push_back(frames[i]);
      }
      if (i) samples += ',';
      samples += std::to_string(ix);
    }
    samples += ']';
    if (!first) weights += ',';
    append_number(weights, weight);
    total += weight;
    first = false;
  });
  out += "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n\"shared\":{\"frames\":[";
  for (size_t i = 0; i < used.size(); ++i) {
    out += i ? ",\n{\"name\":" : "\n{\"name\":";
    append_json_string(out, profile.frame_name(used[i]));
    out += '}';
  }
  out += "]},\n\"profiles\":[{\"type\":\"sampled\",\"name\":";
  append_json_string(out, options.name);
  out += ",\"unit\":";
  append_json_string(out, speedscope_unit(profile.units));
  out += ",\"startValue\":0,\"endValue\":";
  append_number(out, total);
  out += ",\n\"samples\":[" + samples + "],\n\"weights\":[" + weights + "]}],\n\"name\":";
  append_json_string(out, options.name);
  out += ",\"activeProfileIndex\":0,\"exporter\":\"fgtool\"}\n";
}

void export_d3_json(FoldedProfile& profile, const ExportOptions& options, std::string& out) {
  profile.finalize();
  // Iterative depth-first walk: stacks can be far deeper than the C++ stack allows recursion.
  struct Item {
    std::vector<NodeId> children;
    size_t next = 0;
    bool wrote = false;
  };
  std::vector<Item> stack;
  auto open = [&](NodeId id) {
    out += "{\"name\":";
    if (id == 0) append_json_string(out, options.name);
    else append_json_string(out, profile.frame_name(profile.node(id).frame));
    out += ",\"value\":";
    append_number(out, profile.node(id).total);
    if (!profile.has_children(id)) {
      out += '}';
      return;
    }
    out += ",\"children\":[";
    stack.push_back(Item{profile.children(id), 0, false});
  };
  open(0);
  while (!stack.empty()) {
    Item& top = stack.back();
    if (top.next == top.children.size()) {
      out += "]}";
      stack.pop_back();
      continue;
    }
    NodeId child = top.children[top.next++];
    if (profile.node(child).total == 0 && !profile.has_children(child)) continue;
    if (top.wrote) out += ',';
    top.wrote = true;
    out += '\n';
    open(child);
  }
  out += '\n';
}

void export_text_tree(FoldedProfile& profile, const ExportOptions& options, std::string& out) {
  profile.finalize();
  double whole = profile.node(0).total;
  double min_total = whole * options.min_percent / 100.0;
  // A text tree is read on a terminal: names from the input are escaped.
  out += "# " + terminal_safe(options.name) + ": " + short_number(whole) + " " + profile.units + " in " +
         std::to_string(profile.stack_count()) + " stacks\n";
  out += "# top-down; total = the frame and its callees, self = the frame alone, both as % of the whole;\n";
  out += "# children by total, largest first\n";
  out += "  total%    self%         total          self  frame\n";
  struct Item {
    std::vector<NodeId> children;
    size_t next = 0;
  };
  auto sorted_children = [&](NodeId id) {
    std::vector<NodeId> c = profile.children(id);
    std::stable_sort(c.begin(), c.end(),
                     [&](NodeId a, NodeId b) { return profile.node(a).total > profile.node(b).total; });
    return c;
  };
  uint64_t omitted = 0;
  std::vector<Item> stack;
  stack.push_back(Item{sorted_children(0), 0});
  while (!stack.empty()) {
    Item& top = stack.back();
    if (top.next == top.children.size()) {
      stack.pop_back();
      continue;
    }
    NodeId id = top.children[top.next++];
    const FoldedProfile::Node& n = profile.node(id);
    if (n.total <= 0) continue;
    if (n.total < min_total) {
      ++omitted;
      continue;
    }
    size_t depth = stack.size() - 1;
    out += percent(n.total, whole) + "  " + percent(n.self, whole) + "  " + pad_left(short_number(n.total), 12) +
           "  " + pad_left(short_number(n.self), 12) + "  " + std::string(std::min<size_t>(depth, kMaxIndent) * 2, ' ');
    if (depth > kMaxIndent) out += "[" + std::to_string(depth) + "] ";  // keeps the output linear in depth
    out += terminal_safe(profile.frame_name(n.frame));
    out += '\n';
    if (profile.has_children(id)) stack.push_back(Item{sorted_children(id), 0});
  }
  if (omitted)
    out += "# " + std::to_string(omitted) + " subtrees below " + short_number(options.min_percent) + "% left out\n";
}

void export_profile(FoldedProfile& profile, ExportFormat format, const ExportOptions& options, std::string& out) {
  switch (format) {
    case ExportFormat::Speedscope: export_speedscope(profile, options, out); break;
    case ExportFormat::D3: export_d3_json(profile, options, out); break;
    case ExportFormat::TextTree: export_text_tree(profile, options, out); break;
  }
}

}  // namespace fg
