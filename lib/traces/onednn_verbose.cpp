#include "traces/onednn_verbose.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "folded/line_reader.h"
#include "diagnostics/csv_cell.h"
#include "diagnostics/input_error.h"
#include "folded/input_stream.h"
#include "diagnostics/terminal_text.h"

namespace fg {

namespace {

constexpr std::string_view kMarkers[] = {"onednn_verbose,", "dnnl_verbose,", "mkldnn_verbose,"};

std::string_view trim_left(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  return s.substr(i);
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

bool is_number(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || c == '.')) return false;
  return true;
}

bool is_version(std::string_view s) {  // "v1" in oneDNN 3.x lines
  return s.size() >= 2 && s[0] == 'v' && std::all_of(s.begin() + 1, s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool parse_ms(std::string_view s, double& out) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r')) s.remove_suffix(1);
  if (s.empty()) return false;
  auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size() && std::isfinite(out) && out >= 0 && out < 1e12;
}

void split_commas(std::string_view line, std::vector<std::string_view>& out) {
  out.clear();
  size_t start = 0;
  for (;;) {
    size_t c = line.find(',', start);
    if (c == std::string_view::npos) {
      out.push_back(line.substr(start));
      return;
    }
    out.push_back(line.substr(start, c - start));
    start = c + 1;
  }
}

std::string_view or_none(std::string_view s) { return s.empty() ? std::string_view("[none]") : s; }

}  // namespace

bool looks_like_onednn_verbose(std::string_view head) {
  size_t pos = 0;
  while (pos < head.size()) {
    size_t nl = head.find('\n', pos);
    std::string_view line = trim_left(head.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos));
    for (auto m : kMarkers)
      if (starts_with(line, m)) return true;
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  return false;
}

OnednnVerboseParser::Kind OnednnVerboseParser::parse(std::string_view line, OnednnExec& out) {
  line = trim_left(line);
  std::string_view marker;
  for (auto m : kMarkers)
    if (starts_with(line, m)) marker = m.substr(0, m.size() - 1);
  if (marker.empty()) return Kind::NotVerbose;
  split_commas(line, fields_);
  const auto& f = fields_;
  if (read_template()) return Kind::Other;

  // The operation field: after the marker come an optional version ("v1"),
  // an optional timestamp and an optional component ("primitive").
  size_t exec = 0;
  for (size_t i = 1; i < f.size() && i < 5; ++i) {
    if (f[i] == "exec") {
      exec = i;
      break;
    }
    if (is_version(f[i]) || is_number(f[i]) || f[i] == "primitive") continue;
    return Kind::Other;  // info, create:..., exec:check, graph, ...
  }
  if (!exec) return Kind::Other;

  out = OnednnExec{};
  out.marker = marker;
  Kind k = read_exec(exec, out);
  if (k == Kind::Exec && out.primitive.empty()) {
    error_ = "exec line without a primitive name";
    return Kind::Malformed;
  }
  return k;
}

bool OnednnVerboseParser::read_template() {
  const auto& f = fields_;
  // A template line names the fields: "...,info,prim_template:operation,engine,..."
  // (DNNL 1.3+, oneDNN 2.x) or "...,primitive,info,template:timestamp,operation,..." (3.x).
  for (size_t i = 1; i < f.size() && i < 5; ++i) {
    std::string_view first;
    if (starts_with(f[i], "prim_template:")) first = f[i].substr(14);
    else if (starts_with(f[i], "template:")) first = f[i].substr(9);
    else continue;
    std::vector<std::string_view> names{first};
    for (size_t j = i + 1; j < f.size(); ++j) names.push_back(f[j]);
    int op = -1;
    for (size_t j = 0; j < names.size(); ++j)
      if (names[j] == "operation") op = int(j);
    if (op < 0) return true;
    auto at = [&](std::string_view name) {
      for (size_t j = 0; j < names.size(); ++j)
        if (names[j] == name) return int(j) - op;
      return -1;
    };
    engine_ = at("engine");
    primitive_ = at("primitive");
    implementation_ = at("implementation");
    prop_kind_ = at("prop_kind");
    problem_ = at("problem_desc");
    time_ = at("exec_time");
    have_template_ = primitive_ > 0 && implementation_ > 0 && time_ > 0;
    return true;
  }
  return false;
}

OnednnVerboseParser::Kind OnednnVerboseParser::read_exec(size_t exec, OnednnExec& out) {
  const auto& f = fields_;
  size_t n = f.size();
  if (have_template_) {
    auto field = [&](int off) -> std::string_view {
      return off > 0 && exec + size_t(off) < n ? f[exec + off] : std::string_view();
    };
    if (exec + size_t(time_) >= n) {
      error_ = "exec line with " + std::to_string(n) + " fields, fewer than its template's";
      return Kind::Malformed;
    }
    out.engine = field(engine_);
    out.primitive = field(primitive_);
    out.implementation = field(implementation_);
    out.prop_kind = field(prop_kind_);
    out.problem = field(problem_);
    // The time is the last field even if a later version adds fields in between.
    if (!parse_ms(f[exec + time_], out.time_ms) && !parse_ms(f[n - 1], out.time_ms)) {
      error_ = "exec time '" + std::string(f[n - 1].substr(0, 40)) + "' is not a number of milliseconds";
      return Kind::Malformed;
    }
    return Kind::Exec;
  }
  size_t e = exec + 1;
  if (e < n && (f[e] == "cpu" || f[e] == "gpu")) out.engine = f[e++];
  // PRIM, IMPL, PROP, at least one descriptor field, PROBLEM, TIME.
  if (n < e + 6) {
    error_ = "exec line with only " + std::to_string(n) + " fields";
    return Kind::Malformed;
  }
  out.primitive = f[e];
  out.implementation = f[e + 1];
  out.prop_kind = f[e + 2];
  out.problem = f[n - 2];
  if (!parse_ms(f[n - 1], out.time_ms)) {
    error_ = "exec time '" + std::string(f[n - 1].substr(0, 40)) + "' is not a number of milliseconds";
    return Kind::Malformed;
  }
  return Kind::Exec;
}

std::vector<std::string> OnednnVerboseStats::warnings() const {
  std::vector<std::string> w;
  if (malformed)
    w.push_back(std::to_string(malformed) + " malformed exec lines skipped (first: " + first_malformed + ")");
  return w;
}

void read_onednn_verbose(const std::string& path, const std::function<void(const OnednnExec&)>& fn,
                         OnednnVerboseStats* stats, const OnednnVerboseOptions& options) {
  OnednnVerboseStats local;
  OnednnVerboseStats& st = stats ? *stats : local;
  st = OnednnVerboseStats{};
  InputStream in(path);
  LineReader reader(in, 1 << 16);
  OnednnVerboseParser parser;
  OnednnExec exec;
  std::string_view line;
  bool too_long = false;
  uint64_t verbose_lines = 0;
  while (reader.next(line, too_long)) {
    ++st.lines;
    switch (parser.parse(line, exec)) {
      case OnednnVerboseParser::Kind::NotVerbose: ++st.not_verbose; break;
      case OnednnVerboseParser::Kind::Other: ++st.other_verbose; ++verbose_lines; break;
      case OnednnVerboseParser::Kind::Malformed:
        ++verbose_lines;
        if (!st.malformed++)
          st.first_malformed =
              in.name() + ":" + std::to_string(reader.line_number()) + ": " + (too_long ? "line too long" : parser.error());
        break;
      case OnednnVerboseParser::Kind::Exec:
        ++verbose_lines;
        if (too_long) {  // the time (last field) was cut off
          if (!st.malformed++) st.first_malformed = in.name() + ":" + std::to_string(reader.line_number()) + ": line too long";
          break;
        }
        ++st.exec_lines;
        st.total_ms += exec.time_ms;
        fn(exec);
        break;
    }
  }
  if (!verbose_lines)
    throw InputError(in.name() + ": no oneDNN verbose lines (onednn_verbose,... dnnl_verbose,... mkldnn_verbose,...) "
                                 "in " + std::to_string(st.lines) + " lines: run with ONEDNN_VERBOSE=1 "
                                 "(DNNL_VERBOSE=1, MKLDNN_VERBOSE=1 for older versions)");
  if (st.malformed && !st.exec_lines && !options.lenient)
    throw InputError(st.first_malformed + " (all " + std::to_string(st.malformed) +
                     " exec lines are malformed: nothing could be read)");
}

FoldedProfile fold_onednn_verbose(const std::string& path, OnednnVerboseStats* stats,
                                  const OnednnVerboseOptions& options) {
  FoldedProfile profile;
  std::vector<int64_t> self_ns;  // per node, summed as integers so weights carry no float noise
  read_onednn_verbose(
      path,
      [&](const OnednnExec& e) {
        FrameId frames[3] = {profile.intern_from_input(or_none(e.primitive)),
                             profile.intern_from_input(or_none(e.implementation)),
                             profile.intern_from_input(or_none(e.problem))};
        NodeId nodes[3];
        profile.add_path(0, frames, 3, nodes);
        if (nodes[2] >= self_ns.size()) self_ns.resize(std::max<size_t>(nodes[2] + 1, self_ns.size() * 2), 0);
        self_ns[nodes[2]] += std::llround(e.time_ms * 1e6);
      },
      stats, options);
  for (NodeId n = 0; n < self_ns.size(); ++n)
    if (self_ns[n] > 0) profile.add_self(n, double(self_ns[n]) / 1000.0);
  profile.units = "us";
  return profile;
}

OnednnSummary summarize_onednn_verbose(const std::vector<std::string>& paths, OnednnVerboseStats* stats,
                                       const OnednnVerboseOptions& options) {
  struct Acc {
    uint64_t count = 0;
    int64_t ns = 0;
  };
  std::map<std::string, Acc, std::less<>> prim;
  std::map<std::pair<std::string, std::string>, Acc> impl;
  OnednnSummary s;
  OnednnVerboseStats total;
  for (const auto& path : paths) {
    OnednnVerboseStats st;
    read_onednn_verbose(
        path,
        [&](const OnednnExec& e) {
          int64_t ns = std::llround(e.time_ms * 1e6);
          auto it = prim.find(e.primitive);
          if (it == prim.end()) it = prim.emplace(std::string(e.primitive), Acc{}).first;
          it->second.count++;
          it->second.ns += ns;
          Acc& a = impl[{std::string(e.primitive), std::string(or_none(e.implementation))}];
          a.count++;
          a.ns += ns;
          s.count++;
        },
        &st, options);
    total.lines += st.lines;
    total.exec_lines += st.exec_lines;
    total.other_verbose += st.other_verbose;
    total.not_verbose += st.not_verbose;
    if (st.malformed && !total.malformed) total.first_malformed = st.first_malformed;
    total.malformed += st.malformed;
    total.total_ms += st.total_ms;
    s.source += (s.source.empty() ? "" : " + ") + path;
  }
  if (stats) *stats = total;
  int64_t total_ns = 0;
  for (auto& [name, a] : prim) {
    s.primitives.push_back({name, "", a.count, double(a.ns) / 1000.0});
    total_ns += a.ns;
  }
  s.total_us = double(total_ns) / 1000.0;
  auto by_time = [](const OnednnSummary::Row& a, const OnednnSummary::Row& b) {
    return a.us != b.us ? a.us > b.us : a.primitive + "," + a.implementation < b.primitive + "," + b.implementation;
  };
  std::sort(s.primitives.begin(), s.primitives.end(), by_time);
  for (const auto& p : s.primitives) {
    size_t first = s.implementations.size();
    for (auto& [key, a] : impl)
      if (key.first == p.primitive) s.implementations.push_back({key.first, key.second, a.count, double(a.ns) / 1000.0});
    std::sort(s.implementations.begin() + first, s.implementations.end(), by_time);
  }
  return s;
}

namespace {
std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}
std::string pct(double part, double whole) { return whole > 0 ? fmt("%.1f%%", 100.0 * part / whole) : "-"; }
std::string pad(std::string s, size_t w, bool right = false) {
  if (s.size() >= w) return s;
  return right ? std::string(w - s.size(), ' ') + s : s + std::string(w - s.size(), ' ');
}
}  // namespace

std::string format_onednn_summary_text(const OnednnSummary& s) {
  std::string out = "oneDNN primitives: " + s.source + ": " + std::to_string(s.count) + " executions, " +
                    fmt("%.3f", s.total_us / 1000.0) + " ms\n\n";
  size_t w = 14;
  for (const auto& r : s.primitives) w = std::max(w, r.primitive.size() + 2);
  size_t wi = 16;
  for (const auto& r : s.implementations) wi = std::max(wi, r.implementation.size() + 2);
  out += pad("primitive", w) + pad("time ms", 12, true) + pad("share", 8, true) + pad("count", 9, true) + "\n";
  for (const auto& r : s.primitives)
    out += pad(r.primitive, w) + pad(fmt("%.3f", r.us / 1000.0), 12, true) + pad(pct(r.us, s.total_us), 8, true) +
           pad(std::to_string(r.count), 9, true) + "\n";
  out += "\n" + pad("primitive", w) + pad("implementation", wi) + pad("time ms", 12, true) +
         pad("of prim", 9, true) + pad("share", 8, true) + pad("count", 9, true) + "\n";
  for (const auto& r : s.implementations) {
    double prim_us = 0;
    for (const auto& p : s.primitives)
      if (p.primitive == r.primitive) prim_us = p.us;
    out += pad(r.primitive, w) + pad(r.implementation, wi) + pad(fmt("%.3f", r.us / 1000.0), 12, true) +
           pad(pct(r.us, prim_us), 9, true) + pad(pct(r.us, s.total_us), 8, true) +
           pad(std::to_string(r.count), 9, true) + "\n";
  }
  return terminal_safe(out, true);  // names from the input reach a terminal
}

std::string format_onednn_summary_json(const OnednnSummary& s) {
  nlohmann::json j;
  j["source"] = s.source;
  j["units"] = "us";
  j["total_us"] = s.total_us;
  j["executions"] = s.count;
  j["primitives"] = nlohmann::json::array();
  for (const auto& r : s.primitives) {
    nlohmann::json p{{"primitive", r.primitive}, {"us", r.us}, {"count", r.count},
                     {"share", s.total_us > 0 ? r.us / s.total_us : 0.0}};
    p["implementations"] = nlohmann::json::array();
    for (const auto& i : s.implementations)
      if (i.primitive == r.primitive)
        p["implementations"].push_back({{"implementation", i.implementation}, {"us", i.us}, {"count", i.count},
                                        {"share_of_primitive", r.us > 0 ? i.us / r.us : 0.0}});
    j["primitives"].push_back(p);
  }
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string format_onednn_summary_csv(const OnednnSummary& s) {
  std::string out = "primitive,implementation,us,count,share\n";
  auto row = [&](const OnednnSummary::Row& r) {
    // Names come from the log: neutralised against formula injection.
    out += csv_cell(r.primitive) + "," + csv_cell(r.implementation) + "," + fmt("%.3f", r.us) + "," +
           std::to_string(r.count) + "," + fmt("%.6f", s.total_us > 0 ? r.us / s.total_us : 0.0) + "\n";
  };
  for (const auto& r : s.primitives) {
    row(r);  // implementation empty: the primitive's total
    for (const auto& i : s.implementations)
      if (i.primitive == r.primitive) row(i);
  }
  return out;
}

}  // namespace fg
