#include "render/palette.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <utility>

#include "folded/hash.h"

namespace fg {

std::string Rgb::css() const {
  return "rgb(" + std::to_string(r) + "," + std::to_string(g) + "," + std::to_string(b) + ")";
}

namespace {
const char* const kPalettes[] = {"hot", "mem", "io", "wakeup", "red", "green", "blue",
                                 "aqua", "yellow", "purple", "orange", "wall"};
bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
}  // namespace

bool is_known_palette(std::string_view name) {
  for (const char* p : kPalettes)
    if (name == p) return true;
  return false;
}

const char* known_palettes() { return "hot, mem, io, wakeup, red, green, blue, aqua, yellow, purple, orange, wall"; }

double name_hash_value(std::string_view name) {
  // Drop a "module`" prefix as flamegraph.pl does.
  size_t tick = name.find('`');
  if (tick != std::string_view::npos) name = name.substr(tick + 1);
  double vector = 0, weight = 1, max = 1;
  int mod = 10;
  for (char ch : name) {
    int i = static_cast<unsigned char>(ch) % mod;
    vector += (i / double(mod++ - 1)) * weight;
    max += weight;
    weight *= 0.70;
    if (mod > 12) break;
  }
  return 1 - vector / max;
}

double mixed_hash_value(std::string_view name, uint64_t salt) {
  uint64_t h = detail::mix64(detail::hash_bytes(name.data(), name.size()) ^ (salt * 0x9E3779B97F4A7C15ull));
  return double(h >> 11) / double(uint64_t(1) << 53);
}

Rgb palette_color(std::string_view palette, std::string_view name, double v1, double v2, double v3) {
  auto I = [](double x) { return static_cast<int>(x); };
  std::string_view p = palette;
  if (p == "hot" || p == "wall") {
    if (ends_with(name, "_[k]")) p = "orange";
    else if (ends_with(name, "_[j]")) p = "green";
    else if (ends_with(name, "_[i]")) p = "aqua";
  }
  if (p == "hot" || p == "wall") return {205 + I(50 * v3), I(230 * v1), I(55 * v2)};
  if (p == "mem") return {0, 190 + I(50 * v2), I(210 * v1)};
  if (p == "io" || p == "wakeup") {
    int r = 80 + I(60 * v1);
    return {r, r, 190 + I(55 * v2)};
  }
  if (p == "red") {
    int g = 50 + I(80 * v1);
    return {200 + I(55 * v1), g, g};
  }
  if (p == "green") {
    int r = 50 + I(60 * v1);
    return {r, 200 + I(55 * v1), r};
  }
  if (p == "blue") {
    int r = 80 + I(60 * v1);
    return {r, r, 205 + I(50 * v1)};
  }
  if (p == "yellow") {
    int r = 175 + I(55 * v1);
    return {r, r, 50 + I(20 * v1)};
  }
  if (p == "purple") {
    int r = 190 + I(65 * v1);
    return {r, 80 + I(60 * v1), r};
  }
  if (p == "aqua") {
    int g = 165 + I(55 * v1);
    return {50 + I(60 * v1), g, g};
  }
  if (p == "orange") return {190 + I(65 * v1), 90 + I(65 * v1), 0};
  return {0, 0, 0};
}

bool parse_css_color(std::string_view s, Rgb& out) {
  auto hex = [](char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  if (s.size() == 7 && s[0] == '#') {
    int v[6];
    for (int i = 0; i < 6; ++i)
      if ((v[i] = hex(s[1 + i])) < 0) return false;
    out = {v[0] * 16 + v[1], v[2] * 16 + v[3], v[4] * 16 + v[5]};
    return true;
  }
  if (s.size() < 10 || s.substr(0, 4) != "rgb(" || s.back() != ')') return false;
  int c[3];
  size_t pos = 4;
  for (int i = 0; i < 3; ++i) {
    size_t end = s.find(i < 2 ? ',' : ')', pos);
    if (end == std::string_view::npos || end == pos || end - pos > 3) return false;
    int v = 0;
    for (size_t k = pos; k < end; ++k) {
      if (s[k] < '0' || s[k] > '9') return false;
      v = v * 10 + (s[k] - '0');
    }
    if (v > 255) return false;
    c[i] = v;
    pos = end + 1;
  }
  if (pos != s.size()) return false;
  out = {c[0], c[1], c[2]};
  return true;
}

namespace {
double to_linear(int v) {
  double c = v / 255.0;
  return c <= 0.04045 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4);
}
int from_linear(double c) {
  double v = c <= 0.0031308 ? 12.92 * c : 1.055 * std::pow(c, 1 / 2.4) - 0.055;
  int i = static_cast<int>(std::lround(v * 255));
  return i < 0 ? 0 : i > 255 ? 255 : i;
}
}  // namespace

double relative_luminance(const Rgb& c) {
  return 0.2126 * to_linear(c.r) + 0.7152 * to_linear(c.g) + 0.0722 * to_linear(c.b);
}

double contrast_ratio(const Rgb& a, const Rgb& b) {
  double la = relative_luminance(a), lb = relative_luminance(b);
  if (la < lb) std::swap(la, lb);
  return (la + 0.05) / (lb + 0.05);
}

bool white_text_on(const Rgb& fill) {
  // contrast_ratio against white (1.05 / (l + 0.05)) and black ((l + 0.05) / 0.05), one luminance.
  double l = relative_luminance(fill);
  return 1.05 / (l + 0.05) > (l + 0.05) / 0.05;
}

Rgb mix_colors(const Rgb& a, const Rgb& b, double t) {
  t = t < 0 ? 0 : t > 1 ? 1 : t;
  auto m = [t](int x, int y) { return from_linear(to_linear(x) * (1 - t) + to_linear(y) * t); };
  return {m(a.r, b.r), m(a.g, b.g), m(a.b, b.b)};
}

void palette_background(std::string_view palette, std::string& top, std::string& bottom) {
  if (palette == "mem") {
    top = "#eef2ee";
    bottom = "#e0ffe0";
  } else if (palette == "io" || palette == "wakeup" || palette == "blue" || palette == "aqua") {
    top = "#f8f8f8";
    bottom = "#e8e8e8";
  } else {
    top = "#eeeeee";
    bottom = "#eeeeb0";
  }
}

bool background_colors(std::string_view spec, std::string& top, std::string& bottom) {
  // The gradients flamegraph.pl uses for these names.
  if (spec == "yellow") top = "#eeeeee", bottom = "#eeeeb0";
  else if (spec == "blue") top = "#eeeeee", bottom = "#e0e0ff";
  else if (spec == "green") top = "#eef2ee", bottom = "#e0ffe0";
  else if (spec == "grey" || spec == "gray") top = "#f8f8f8", bottom = "#e8e8e8";
  else if (spec.size() == 7 && spec[0] == '#' &&
           spec.find_first_not_of("0123456789abcdefABCDEF", 1) == std::string_view::npos)
    top = bottom = std::string(spec);
  else return false;
  return true;
}

}  // namespace fg
