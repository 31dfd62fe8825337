#include "folded_agreement.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>
#include <vector>

namespace fg::test {
namespace {

std::string tidy_frame(std::string f) {
  for (const char* suffix : {"_[k]", "_[j]", "_[i]"}) {
    size_t n = std::char_traits<char>::length(suffix);
    if (f.size() >= n && f.compare(f.size() - n, n, suffix) == 0) f.resize(f.size() - n);
  }
  size_t plus = f.rfind("+0x");
  if (plus != std::string::npos && f.find_first_not_of("0123456789abcdef", plus + 3) == std::string::npos) f.resize(plus);
  size_t at = f.find('@');
  if (at != std::string::npos && at > 0) f.resize(at);
  size_t paren = 0;
  while ((paren = f.find('(', paren)) != std::string::npos) {
    if (f.compare(paren, 21, "(anonymous namespace)") == 0) {
      paren += 21;
      continue;
    }
    f.resize(paren);
    break;
  }
  f.erase(std::remove_if(f.begin(), f.end(), [](char c) { return c == '"' || c == '\''; }), f.end());
  return f;
}

// fgtool cuts a frame-pointer chain that leaves mapped memory to one
// [unknown] marker; perf prints one [unknown] per garbage frame (a thread
// switched out on its way back from clone3 still has its parent's frame
// pointer: one address repeated, 121 times in a recording here, up to
// perf's 127-frame limit). Scoring counts such a run as one frame.
std::map<std::string, double> merge_unknown_runs(const std::map<std::string, double>& in) {
  std::map<std::string, double> out;
  for (const auto& kv : in) {
    std::string merged, frame;
    std::istringstream frames(kv.first);
    bool first = true, after_unknown = false;
    while (std::getline(frames, frame, ';')) {
      const bool unknown = frame == "[unknown]";
      if (unknown && after_unknown) continue;
      merged += (first ? "" : ";") + frame;
      first = false;
      after_unknown = unknown;
    }
    out[merged] += kv.second;
  }
  return out;
}

}  // namespace

std::map<std::string, double> parse_folded_normalised(const std::string& text) {
  std::map<std::string, double> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    size_t sp = line.rfind(' ');
    if (sp == std::string::npos) continue;
    double w = std::atof(line.c_str() + sp + 1);
    std::string stack, frame;
    std::istringstream fs(line.substr(0, sp));
    bool first = true;
    while (std::getline(fs, frame, ';')) {
      stack += (first ? "" : ";") + tidy_frame(frame);
      first = false;
    }
    out[stack] += w;
  }
  return out;
}

Agreement folded_agreement(const std::string& a_text, const std::string& b_text) {
  auto a = merge_unknown_runs(parse_folded_normalised(a_text));
  auto b = merge_unknown_runs(parse_folded_normalised(b_text));
  Agreement r;
  for (auto& kv : a) r.total_a += kv.second;
  for (auto& kv : b) r.total_b += kv.second;
  if (r.total_a <= 0 || r.total_b <= 0) return r;
  std::set<std::string> keys;
  for (auto& kv : a) keys.insert(kv.first);
  for (auto& kv : b) keys.insert(kv.first);
  std::vector<std::pair<double, std::string>> diffs;
  double agree = 0;
  for (const auto& k : keys) {
    double sa = a.count(k) ? a[k] / r.total_a : 0, sb = b.count(k) ? b[k] / r.total_b : 0;
    agree += std::min(sa, sb);
    if (std::fabs(sa - sb) > 0.0005) diffs.emplace_back(sb - sa, k);
  }
  std::sort(diffs.begin(), diffs.end(), [](auto& x, auto& y) { return std::fabs(x.first) > std::fabs(y.first); });
  std::ostringstream w;
  for (size_t i = 0; i < diffs.size() && i < 6; ++i)
    w << "  " << (diffs[i].first > 0 ? "+" : "") << diffs[i].first * 100 << "%  " << diffs[i].second.substr(0, 200) << "\n";
  r.percent = agree * 100;
  r.worst = w.str();
  return r;
}

}  // namespace fg::test
