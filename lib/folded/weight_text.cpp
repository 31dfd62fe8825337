#include "folded/weight_text.h"

#include <cmath>
#include <algorithm>
#include <cstdio>

#include "folded/profile_loader.h"

namespace fg {

namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

bool integral(double w) { return std::fabs(w - std::round(w)) < 1e-9 * std::max(1.0, std::fabs(w)); }

}  // namespace

std::string group_thousands(std::string s) {
  size_t start = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
  size_t end = s.find('.');
  if (end == std::string::npos) end = s.size();
  for (size_t i = end; i > start + 3; i -= 3) s.insert(i - 3, ",");
  return s;
}

std::string count_text(double w) {
  if (std::fabs(w - std::round(w)) < 1e-9 && std::fabs(w) < 1e15) return group_thousands(fmt("%.0f", w));
  return group_thousands(fmt("%.3f", w));
}

std::string human_weight(double w, const std::string& units) {
  double sec = seconds_per_unit(units);
  if (sec > 0) {
    double s = w * sec;
    // Thresholds where the rounded text changes, so that 0.99999999 s (a
    // scaled count) reads "1.00 s", not "1,000.0 ms".
    if (std::fabs(s) >= 9.995) return group_thousands(fmt("%.1f", s)) + " s";
    if (std::fabs(s) >= 0.9995) return fmt("%.2f", s) + " s";
    return group_thousands(fmt("%.1f", s * 1e3)) + " ms";
  }
  return count_text(w);
}

std::string human_weight_with_unit(double w, const std::string& units) {
  if (double sec = seconds_per_unit(units); sec > 0) {
    // Below a millisecond a tooltip still tells frames apart: us, then ns.
    double s = std::fabs(w * sec);
    if (s > 0 && s < 1e-6) return fmt("%.0f", w * sec * 1e9) + " ns";
    if (s > 0 && s < 1e-3) return fmt("%.1f", w * sec * 1e6) + " us";
    return human_weight(w, units);
  }
  std::string n = integral(w) && std::fabs(w) < 1e15 ? fmt("%.0f", std::round(w)) : fmt("%.2f", w);
  if (n == "-0") n = "0";
  return group_thousands(n) + (units.empty() ? "" : " " + units);
}

}  // namespace fg
