#include "synthetic_digits.h"

#include <algorithm>
#include <cmath>

namespace fg::trainers {
namespace {

constexpr int kSide = 28;

// splitmix64: tiny, fast and identical everywhere (std distributions are not).
struct SplitMix {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
};

// Segments of a unit box (x right, y down): a top, b upper right, c lower
// right, d bottom, e lower left, f upper left, g middle.
struct Segment { double x0, y0, x1, y1; };
constexpr Segment kSegments[7] = {
    {0, 0, 1, 0}, {1, 0, 1, 0.5}, {1, 0.5, 1, 1}, {0, 1, 1, 1}, {0, 0.5, 0, 1}, {0, 0, 0, 0.5}, {0, 0.5, 1, 0.5},
};
// Bit i set = segment i ("abcdefg") lit.
constexpr uint8_t kDigitSegments[10] = {
    0b0111111,  // 0: abcdef
    0b0000110,  // 1: bc
    0b1011011,  // 2: abdeg
    0b1001111,  // 3: abcdg
    0b1100110,  // 4: bcfg
    0b1101101,  // 5: acdfg
    0b1111101,  // 6: acdefg
    0b0000111,  // 7: abc
    0b1111111,  // 8: all
    0b1101111,  // 9: abcdfg
};

double distance_to_segment(double px, double py, double x0, double y0, double x1, double y1) {
  double dx = x1 - x0, dy = y1 - y0;
  double len2 = dx * dx + dy * dy;
  double t = len2 > 0 ? ((px - x0) * dx + (py - y0) * dy) / len2 : 0;
  t = std::clamp(t, 0.0, 1.0);
  double cx = x0 + t * dx - px, cy = y0 + t * dy - py;
  return std::sqrt(cx * cx + cy * cy);
}

void draw_digit(int digit, SplitMix& rng, uint8_t* out) {
  const double width = 11.0 * rng.uniform(0.8, 1.2);
  const double height = 17.0 * rng.uniform(0.85, 1.15);
  const double cx = 14.0 + rng.uniform(-3.5, 3.5);
  const double cy = 14.0 + rng.uniform(-2.0, 2.0);
  const double slant = rng.uniform(-0.4, 0.4);  // x shift per unit of height above centre
  const double half_stroke = rng.uniform(0.7, 1.3);
  const double ink = rng.uniform(170.0, 255.0);

  // Place the lit segments in pixel space, each endpoint wobbling a little.
  Segment lit[8];
  int n = 0;
  for (int s = 0; s < 7; ++s) {
    if (!(kDigitSegments[digit] >> s & 1)) continue;
    if (rng.uniform() < 0.04) continue;  // a missing stroke now and then, as in sloppy handwriting
    auto place = [&](double ux, double uy, double& x, double& y) {
      double yy = (uy - 0.5) * height;
      x = cx + (ux - 0.5) * width - slant * yy + rng.uniform(-0.8, 0.8);
      y = cy + yy + rng.uniform(-0.8, 0.8);
    };
    Segment& p = lit[n++];
    place(kSegments[s].x0, kSegments[s].y0, p.x0, p.y0);
    place(kSegments[s].x1, kSegments[s].y1, p.x1, p.y1);
  }
  if (rng.uniform() < 0.3) {  // a stray stroke anywhere on the canvas
    Segment& p = lit[n++];
    p.x0 = rng.uniform(2.0, 26.0);
    p.y0 = rng.uniform(2.0, 26.0);
    p.x1 = std::clamp(p.x0 + rng.uniform(-8.0, 8.0), 1.0, 27.0);
    p.y1 = std::clamp(p.y0 + rng.uniform(-8.0, 8.0), 1.0, 27.0);
  }

  for (int y = 0; y < kSide; ++y) {
    for (int x = 0; x < kSide; ++x) {
      double best = 1e9;
      for (int i = 0; i < n; ++i)
        best = std::min(best, distance_to_segment(x + 0.5, y + 0.5, lit[i].x0, lit[i].y0, lit[i].x1, lit[i].y1));
      // Anti-aliased edge one pixel wide around the stroke.
      double cover = std::clamp(1.0 - (best - half_stroke), 0.0, 1.0);
      double v = ink * cover;
      if (rng.uniform() < 0.03) v += rng.uniform(0.0, 120.0);  // speckle noise
      out[y * kSide + x] = uint8_t(std::clamp(v, 0.0, 255.0));
    }
  }
}

}  // namespace

SyntheticDigits generate_synthetic_digits(uint32_t count, uint64_t seed) {
  SyntheticDigits d;
  d.images.count = count;
  d.images.rows = d.images.cols = kSide;
  d.images.pixels.assign(size_t(count) * kSide * kSide, 0);
  d.labels.labels.resize(count);
  SplitMix rng{seed * 0x2545f4914f6cdd1dULL + 1};
  // Balanced classes in a shuffled order (Fisher-Yates with our own RNG).
  for (uint32_t i = 0; i < count; ++i) d.labels.labels[i] = uint8_t(i % 10);
  for (uint32_t i = count; i > 1; --i) std::swap(d.labels.labels[i - 1], d.labels.labels[rng.next() % i]);
  for (uint32_t i = 0; i < count; ++i)
    draw_digit(d.labels.labels[i], rng, d.images.pixels.data() + size_t(i) * kSide * kSide);
  return d;
}

}  // namespace fg::trainers
