#include "categories/category_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "diagnostics/csv_cell.h"
#include "diagnostics/terminal_text.h"
#include "categories/stack_gaps.h"
#include "folded/profile_loader.h"
#include "folded/weight_text.h"

namespace fg {

namespace {

double share_of(double w, double total) { return total > 0 ? w / total : 0; }
// Shares are rounded in JSON/CSV so that goldens do not depend on the last
// bits of floating-point summation order.
double round6(double x) { return std::round(x * 1e6) / 1e6; }

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}
std::string pct(double w, double total) { return fmt("%.1f%%", 100 * share_of(w, total)); }
// Time units read as ms/s, counts with separators: folded/weight_text.h,
// shared with the SVG tooltips and `diff --top`.
std::string pad(std::string s, size_t width, bool right = false) {
  if (s.size() >= width) return s;
  return right ? std::string(width - s.size(), ' ') + s : s + std::string(width - s.size(), ' ');
}

std::vector<CategoryShare> make_shares(const std::vector<Category>& cats) {
  std::vector<CategoryShare> out;
  for (const auto& c : cats) out.push_back(CategoryShare{c.name, c.color, c.description, 0, 0, {}});
  return out;
}

// Leaf frames named by their object only: "[libgomp.so.1.0.0]", not
// "[unknown]" (no object at all) nor "[off-cpu: S]" markers; heaviest first.
std::vector<UnresolvedObject> unresolved_objects(const FoldedProfile& p) {
  std::vector<UnresolvedObject> out;
  std::unordered_map<FrameId, double> by_object;
  for (NodeId id = 1; id < p.node_count(); ++id) {
    const FoldedProfile::Node& node = p.node(id);
    if (node.self == 0 || node.parent == 0) continue;
    std::string_view name = p.frame_name(node.frame);
    if (name.size() < 3 || name.front() != '[' || name.back() != ']' || name == "[unknown]" ||
        name.rfind("[off-cpu", 0) == 0)
      continue;
    by_object[node.frame] += node.self;
  }
  for (const auto& [f, w] : by_object) out.push_back(UnresolvedObject{std::string(p.frame_name(f)), w});
  std::sort(out.begin(), out.end(), [](const UnresolvedObject& a, const UnresolvedObject& b) {
    return a.weight != b.weight ? a.weight > b.weight : a.frame < b.frame;
  });
  return out;
}

// Each category's heaviest deciding frames, from weights keyed by
// (category << 32 | frame).
void top_functions(const FoldedProfile& p, const std::unordered_map<uint64_t, double>& top, size_t top_n,
                   std::vector<CategoryShare>& shares) {
  std::vector<std::vector<CategoryFunction>> lists(shares.size());
  for (const auto& [key, w] : top)
    lists[key >> 32].push_back(CategoryFunction{std::string(p.frame_name(FrameId(key & 0xffffffffu))), w});
  for (size_t c = 0; c < shares.size(); ++c) {
    auto& l = lists[c];
    std::sort(l.begin(), l.end(), [](const CategoryFunction& a, const CategoryFunction& b) {
      return a.weight != b.weight ? a.weight > b.weight : a.name < b.name;
    });
    if (l.size() > top_n) l.resize(top_n);
    shares[c].top = std::move(l);
  }
}

}  // namespace

CategoryReport build_category_report(const ProfileCategories& pc, size_t top_n, std::string source) {
  const FoldedProfile& p = pc.profile();
  const CategoryMatcher& m = pc.matcher();
  const int R = int(CategoryKind::resource), P = int(CategoryKind::phase);
  CategoryReport r;
  r.source = std::move(source);
  r.units = p.units;
  r.resource = make_shares(m.categories(CategoryKind::resource));
  r.phase = make_shares(m.categories(CategoryKind::phase));
  r.matrix.assign(r.phase.size(), std::vector<double>(r.resource.size(), 0.0));
  const CategoryId other_p = m.other(CategoryKind::phase);

  // The first frame below the process name, per node: where phase rules are
  // missing shows at the outer end of the stack, not at the leaf.
  size_t nn = p.node_count();
  std::vector<NodeId> entry(nn, 0);
  std::vector<uint8_t> depth(nn, 0);
  // Node ids need not be parent-first; resolve lazily with memo.
  auto entry_of = [&](NodeId id) {
    std::vector<NodeId> chain;
    NodeId cur = id;
    while (cur && !entry[cur]) {
      chain.push_back(cur);
      cur = p.node(cur).parent;
    }
    for (size_t i = chain.size(); i-- > 0;) {
      NodeId n = chain[i];
      NodeId parent = p.node(n).parent;
      uint8_t d = parent ? uint8_t(std::min(depth[parent] + 1, 3)) : 1;
      depth[n] = d;
      entry[n] = d <= 2 ? n : entry[parent];
    }
    return entry[id];
  };

  std::unordered_map<uint64_t, double> top[kCategoryKinds];
  for (NodeId id = 1; id < nn; ++id) {
    double w = p.node(id).self;
    if (w == 0) continue;
    r.total += w;
    CategoryId rc = pc.sample_category(CategoryKind::resource, id);
    CategoryId phc = pc.sample_category(CategoryKind::phase, id);
    r.resource[rc].self += w;
    r.phase[phc].self += w;
    r.matrix[phc][rc] += w;
    for (int k = 0; k < kCategoryKinds; ++k) {
      auto& shares = k == R ? r.resource : r.phase;
      uint64_t mask = pc.path_mask(CategoryKind(k), id);
      while (mask) {
        int bit = __builtin_ctzll(mask);
        mask &= mask - 1;
        if (size_t(bit) < shares.size()) shares[bit].inclusive += w;
      }
    }
    if (top_n) {
      NodeId rd = pc.decider(CategoryKind::resource, id);
      FrameId rf = p.node(rd ? rd : id).frame;
      top[R][(uint64_t(rc) << 32) | rf] += w;
      NodeId pd = pc.decider(CategoryKind::phase, id);
      FrameId pf = p.node(pd ? pd : (phc == other_p ? entry_of(id) : id)).frame;
      top[P][(uint64_t(phc) << 32) | pf] += w;
    }
  }
  r.cut_short = find_stack_gaps(p).cut_short;
  r.unresolved = unresolved_objects(p);
  top_functions(p, top[R], top_n, r.resource);
  top_functions(p, top[P], top_n, r.phase);
  return r;
}

// ---- text ----

// Indices of shares, largest self share first, "other" last.
static std::vector<size_t> by_share(const std::vector<CategoryShare>& shares) {
  std::vector<size_t> order(shares.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    bool oa = shares[a].name == "other", ob = shares[b].name == "other";
    if (oa != ob) return ob;
    return shares[a].self > shares[b].self;
  });
  return order;
}

static std::string share_table(const char* title, const std::vector<CategoryShare>& shares, double total,
                               const std::string& units) {
  size_t w = 10;
  for (const auto& s : shares) w = std::max(w, s.name.size() + 2);
  const std::string head = seconds_per_unit(units) > 0 ? "SELF TIME" : "SELF " + units;
  std::string out = pad(title, w) + pad("SELF", 8, true) + pad("INCL", 8, true) + pad(head, 18, true) + "\n";
  for (size_t i : by_share(shares)) {
    const CategoryShare& s = shares[i];
    if (s.self == 0 && s.inclusive == 0 && s.name != "other") continue;
    out += pad(s.name, w) + pad(pct(s.self, total), 8, true) + pad(pct(s.inclusive, total), 8, true) +
           pad(human_weight(s.self, units), 18, true) + "\n";
  }
  return out;
}

std::string format_report_text(const CategoryReport& r) {
  std::string out;
  out += "Category report" + (r.source.empty() ? std::string() : " for " + r.source) + ": total " +
         (seconds_per_unit(r.units) > 0 ? human_weight(r.total, r.units) + " (" + count_text(r.total) + " " +
                                          r.units + ")"
                                    : human_weight(r.total, r.units) + " " + r.units) +
         "\n";
  out += "SELF: samples whose own category it is (resource: leaf-most matching frame; phase: outer-most).\n";
  out += "INCL: samples with the category anywhere on the stack.\n\n";
  out += share_table("RESOURCE", r.resource, r.total, r.units);
  for (const std::string& line : report_findings(r)) out += "=> " + line + "\n";
  out += "\n";
  out += share_table("PHASE", r.phase, r.total, r.units) + "\n";

  // Matrix: rows are resources, columns phases (fewer of them), percent of total.
  std::vector<size_t> cols, rows;
  for (size_t p = 0; p < r.phase.size(); ++p)
    if (r.phase[p].self > 0) cols.push_back(p);
  for (size_t c : by_share(r.resource))
    if (r.resource[c].self > 0) rows.push_back(c);
  size_t w = 12;
  for (size_t c : rows) w = std::max(w, r.resource[c].name.size() + 2);
  out += "RESOURCE x PHASE (% of total)\n" + pad("", w);
  std::vector<size_t> cw;
  for (size_t p : cols) {
    cw.push_back(std::max<size_t>(7, r.phase[p].name.size() + 2));
    out += pad(r.phase[p].name, cw.back(), true);
  }
  out += "\n";
  for (size_t c : rows) {
    out += pad(r.resource[c].name, w);
    for (size_t i = 0; i < cols.size(); ++i) {
      double v = r.matrix[cols[i]][c];
      out += pad(v > 0 ? fmt("%.1f", 100 * share_of(v, r.total)) : std::string("."), cw[i], true);
    }
    out += "\n";
  }
  out += "\n";

  auto tops = [&](const char* title, const std::vector<CategoryShare>& shares) {
    out += std::string("TOP FUNCTIONS BY ") + title + " (% of total)\n";
    for (const auto& s : shares) {
      if (s.self == 0) continue;
      out += "  " + s.name + " " + pct(s.self, r.total) + "\n";
      for (const auto& f : s.top) out += "    " + pad(pct(f.weight, r.total), 7, true) + "  " + f.name + "\n";
    }
  };
  tops("RESOURCE", r.resource);
  out += "\n";
  tops("PHASE", r.phase);
  out += "\n";
  double ro = r.resource.empty() ? 0 : r.resource.back().self, po = r.phase.empty() ? 0 : r.phase.back().self;
  out += "Left in other: resource " + pct(ro, r.total) + ", phase " + pct(po, r.total) + "\n";
  return terminal_safe(out, true);  // names from the input reach a terminal
}

// What the top resource category means and the knob to try. The share is of
// the profile's weight (on-CPU time for an on-CPU profile).
static std::string finding_for(const std::string& name, const std::string& pct_text) {
  const std::string p = pct_text + " of the profile";
  if (name == "omp")
    return p + " is OpenMP/thread-pool runtime, mostly threads waiting at barriers or spinning for work: try "
               "OMP_NUM_THREADS=1 (or fewer threads: torch::set_num_threads) for this model size";
  if (name == "blas-threads")
    return p + " is OpenBLAS's own worker threads waiting or spinning for work: try OPENBLAS_NUM_THREADS=1 "
               "(or fewer), separately from OMP_NUM_THREADS";
  if (name == "gemm")
    return p + " is matrix multiplication, the model's real work: larger batches or a faster BLAS "
               "(oneDNN, MKL) are what move it";
  if (name == "conv") return p + " is convolution kernels, the model's real work: check the layout (channels-last) and batch size";
  if (name == "eltwise")
    return p + " is element-wise, reduction and layout kernels: fusing ops or avoiding copies/reorders helps";
  if (name == "alloc")
    return p + " is allocation and memset/memcpy: reuse tensors instead of allocating in every step";
  if (name == "page-fault")
    return p + " is page faults on fresh memory: reuse buffers (a caching allocator) instead of mapping new ones";
  if (name == "sync") return p + " is locks and condition variables outside OpenMP: look for contended mutexes";
  if (name == "framework")
    return p + " is PyTorch dispatch and bookkeeping: tensors are small for the per-op overhead; batch more work per op";
  if (name == "python") return p + " is the Python interpreter: move loops into tensor operations";
  if (name == "dynamic-linker")
    return p + " is the dynamic linker (loading and relocating libraries): profile a longer run";
  if (name == "off-cpu") return p + " is off-CPU (blocked): see where in an --off-cpu or --wall graph";
  if (name == "kernel") return p + " is other kernel work (system calls, scheduling, interrupts)";
  if (name == "onednn") return p + " is oneDNN library code outside its kernels (primitive creation, drivers)";
  if (name == "other") return p + " matched no rule: add rules ('fgtool help rules') or resolve the frames (below)";
  return p + " is " + name;
}

std::vector<std::string> report_findings(const CategoryReport& r) {
  std::vector<std::string> out;
  if (r.total <= 0) return out;
  const CategoryShare* top = nullptr;
  for (const auto& s : r.resource)
    if (s.self > 0 && (!top || s.self > top->self)) top = &s;
  if (top) out.push_back(finding_for(top->name, pct(top->self, r.total)));
  // Unresolved objects that matter: 5% or more of the profile each.
  std::string objs;
  size_t n = 0;
  for (const auto& u : r.unresolved) {
    if (share_of(u.weight, r.total) < 0.05 || n == 3) break;
    objs += (n++ ? ", " : "") + pct(u.weight, r.total) + " in " + u.frame;
  }
  if (n)
    out.push_back(objs + " has no symbols: install the Debian -dbgsym package of that library (debian-debug "
                         "archive), point --symfs at a tree with symbols, or set DEBUGINFOD_URLS "
                         "(https://debuginfod.debian.net)");
  if (share_of(r.cut_short, r.total) >= 0.01)
    out.push_back(pct(r.cut_short, r.total) + " is in stacks cut short (callers missing, shown as a root-side "
                  "[unknown]); " + stack_gap_advice());
  return out;
}

// ---- JSON ----

static nlohmann::ordered_json shares_json(const std::vector<CategoryShare>& shares, double total) {
  auto arr = nlohmann::ordered_json::array();
  for (const auto& s : shares) {
    nlohmann::ordered_json j;
    j["name"] = s.name;
    j["color"] = s.color;
    j["self"] = s.self;
    j["self_share"] = round6(share_of(s.self, total));
    j["inclusive"] = s.inclusive;
    j["inclusive_share"] = round6(share_of(s.inclusive, total));
    auto top = nlohmann::ordered_json::array();
    for (const auto& f : s.top)
      top.push_back(nlohmann::ordered_json{{"function", f.name}, {"weight", f.weight}, {"share", round6(share_of(f.weight, total))}});
    j["top"] = std::move(top);
    arr.push_back(std::move(j));
  }
  return arr;
}

std::string format_report_json(const CategoryReport& r) {
  nlohmann::ordered_json j;
  j["schema"] = "fgtool-category-report/1";
  j["source"] = r.source;
  j["units"] = r.units;
  j["total"] = r.total;
  j["resource"] = shares_json(r.resource, r.total);
  j["phase"] = shares_json(r.phase, r.total);
  nlohmann::ordered_json mx;
  auto names = [](const std::vector<CategoryShare>& s) {
    auto a = nlohmann::ordered_json::array();
    for (const auto& x : s) a.push_back(x.name);
    return a;
  };
  mx["phases"] = names(r.phase);
  mx["resources"] = names(r.resource);
  auto rows = nlohmann::ordered_json::array();
  for (const auto& row : r.matrix) rows.push_back(row);
  mx["weight"] = std::move(rows);
  j["matrix"] = std::move(mx);
  j["cut_short_share"] = round6(share_of(r.cut_short, r.total));
  auto unresolved = nlohmann::ordered_json::array();
  for (const auto& u : r.unresolved)
    if (share_of(u.weight, r.total) >= 0.01)
      unresolved.push_back(nlohmann::ordered_json{{"frame", u.frame}, {"weight", u.weight}, {"share", round6(share_of(u.weight, r.total))}});
  j["unresolved_objects"] = std::move(unresolved);
  j["findings"] = report_findings(r);
  j["other_share"] = {{"resource", round6(share_of(r.resource.empty() ? 0 : r.resource.back().self, r.total))},
                      {"phase", round6(share_of(r.phase.empty() ? 0 : r.phase.back().self, r.total))}};
  // Frame names come from the input and may be invalid UTF-8: replaced by U+FFFD, never a throw.
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

// ---- CSV ----

// Category and frame names come from the input: each goes through csv_cell
// (quoted and neutralised against formula injection).

std::string format_report_csv(const CategoryReport& r) {
  // One flat table: section,kind,category,key,weight,share
  //   share rows:  share,resource,gemm,self|inclusive,W,S
  //   matrix rows: matrix,phase-x-resource,PHASE,RESOURCE,W,S
  //   top rows:    top,resource,gemm,FUNCTION,W,S
  std::string out = "section,kind,category,key,weight,share\n";
  auto num = [](double v) { return fmt("%.17g", v); };
  auto sh = [&](double w) { return fmt("%.6f", round6(share_of(w, r.total))); };
  for (int k = 0; k < kCategoryKinds; ++k) {
    const auto& shares = k == 0 ? r.resource : r.phase;
    const char* kind = category_kind_name(CategoryKind(k));
    for (const auto& s : shares) {
      out += std::string("share,") + kind + "," + csv_cell(s.name) + ",self," + num(s.self) + "," + sh(s.self) + "\n";
      out += std::string("share,") + kind + "," + csv_cell(s.name) + ",inclusive," + num(s.inclusive) + "," +
             sh(s.inclusive) + "\n";
    }
  }
  for (size_t p = 0; p < r.phase.size(); ++p)
    for (size_t c = 0; c < r.resource.size(); ++c)
      if (r.matrix[p][c] > 0)
        out += "matrix,phase-x-resource," + csv_cell(r.phase[p].name) + "," + csv_cell(r.resource[c].name) + "," +
               num(r.matrix[p][c]) + "," + sh(r.matrix[p][c]) + "\n";
  for (int k = 0; k < kCategoryKinds; ++k) {
    const auto& shares = k == 0 ? r.resource : r.phase;
    const char* kind = category_kind_name(CategoryKind(k));
    for (const auto& s : shares)
      for (const auto& f : s.top)
        out += std::string("top,") + kind + "," + csv_cell(s.name) + "," + csv_cell(f.name) + "," + num(f.weight) +
               "," + sh(f.weight) + "\n";
  }
  return out;
}

// ---- diff ----

namespace {

struct DiffRow {
  std::string name;
  double wa = 0, wb = 0, sa = 0, sb = 0;
};

std::vector<DiffRow> diff_rows(const std::vector<CategoryShare>& a, double ta, const std::vector<CategoryShare>& b,
                               double tb) {
  // Union of category names, in A's order then B's new ones (rules may differ).
  std::vector<DiffRow> rows;
  auto find = [&](const std::string& n) -> DiffRow& {
    for (auto& r : rows)
      if (r.name == n) return r;
    rows.push_back(DiffRow{n});
    return rows.back();
  };
  for (const auto& s : a) find(s.name).wa = s.self;
  for (const auto& s : b) find(s.name).wb = s.self;
  // Keep "other" last.
  std::stable_partition(rows.begin(), rows.end(), [](const DiffRow& r) { return r.name != "other"; });
  for (auto& r : rows) {
    r.sa = share_of(r.wa, ta);
    r.sb = share_of(r.wb, tb);
  }
  return rows;
}

std::string relative_change(double wa, double wb) {
  if (wa == 0) return wb == 0 ? "0%" : "new";
  return fmt("%+.1f%%", 100 * (wb - wa) / wa);
}

}  // namespace

std::string format_category_diff_text(const CategoryReport& a, const CategoryReport& b) {
  auto total = [](const CategoryReport& r) {
    return seconds_per_unit(r.units) > 0 ? human_weight(r.total, r.units) : human_weight(r.total, r.units) + " " + r.units;
  };
  std::string out = "Category diff: A = " + (a.source.empty() ? std::string("A") : a.source) + " (" + total(a) +
                    "), B = " + (b.source.empty() ? std::string("B") : b.source) + " (" + total(b) + ")\n";
  out += "Shares are self shares of each profile's total; CHANGE is B - A in percentage points; WEIGHT is the "
         "relative change in weight.\n\n";
  for (int k = 0; k < kCategoryKinds; ++k) {
    auto rows = k == 0 ? diff_rows(a.resource, a.total, b.resource, b.total) : diff_rows(a.phase, a.total, b.phase, b.total);
    size_t w = 12;
    for (const auto& r : rows) w = std::max(w, r.name.size() + 2);
    std::string title = k == 0 ? "RESOURCE" : "PHASE";
    out += pad(title, w) + pad("A", 8, true) + pad("B", 8, true) + pad("CHANGE", 11, true) + pad("WEIGHT", 11, true) + "\n";
    for (const auto& r : rows) {
      if (r.wa == 0 && r.wb == 0 && r.name != "other") continue;
      out += pad(r.name, w) + pad(fmt("%.1f%%", 100 * r.sa), 8, true) + pad(fmt("%.1f%%", 100 * r.sb), 8, true) +
             pad(fmt("%+.1f pp", 100 * (r.sb - r.sa)), 11, true) + pad(relative_change(r.wa, r.wb), 11, true) + "\n";
    }
    out += "\n";
  }
  return terminal_safe(out, true);  // names from the input reach a terminal
}

std::string format_category_diff_json(const CategoryReport& a, const CategoryReport& b) {
  nlohmann::ordered_json j;
  j["schema"] = "fgtool-category-diff/1";
  j["a"] = {{"source", a.source}, {"units", a.units}, {"total", a.total}};
  j["b"] = {{"source", b.source}, {"units", b.units}, {"total", b.total}};
  for (int k = 0; k < kCategoryKinds; ++k) {
    auto rows = k == 0 ? diff_rows(a.resource, a.total, b.resource, b.total) : diff_rows(a.phase, a.total, b.phase, b.total);
    auto arr = nlohmann::ordered_json::array();
    for (const auto& r : rows) {
      nlohmann::ordered_json e;
      e["name"] = r.name;
      e["a_weight"] = r.wa;
      e["b_weight"] = r.wb;
      e["a_share"] = round6(r.sa);
      e["b_share"] = round6(r.sb);
      e["change_points"] = round6(100 * (r.sb - r.sa));
      if (r.wa > 0) e["change_percent"] = round6(100 * (r.wb - r.wa) / r.wa);
      else e["change_percent"] = nullptr;
      arr.push_back(std::move(e));
    }
    j[category_kind_name(CategoryKind(k))] = std::move(arr);
  }
  // Frame names come from the input and may be invalid UTF-8: replaced by U+FFFD, never a throw.
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::vector<std::string> category_diff_summary(const CategoryReport& a, const CategoryReport& b, size_t max_lines) {
  auto rows = diff_rows(a.resource, a.total, b.resource, b.total);
  std::stable_sort(rows.begin(), rows.end(), [](const DiffRow& x, const DiffRow& y) {
    return std::fabs(x.sb - x.sa) > std::fabs(y.sb - y.sa);
  });
  std::vector<std::string> out;
  for (const auto& r : rows) {
    if (out.size() >= max_lines) break;
    if (r.wa == 0 && r.wb == 0) continue;
    out.push_back(r.name + " " + fmt("%.1f%%", 100 * r.sa) + " -> " + fmt("%.1f%%", 100 * r.sb) + " (" +
                  fmt("%+.1f pp", 100 * (r.sb - r.sa)) + ")");
  }
  return out;
}

}  // namespace fg
