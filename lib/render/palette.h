// Frame colours in the style of flamegraph.pl: a palette (hot, mem, io, ...)
// picks a hue family and a per-frame value in [0,1) varies it. Colours are
// deterministic: by name hash (--hash: similar names, similar colours) or by
// a seeded mix of name and position, never by an unseeded random generator.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace fg {

struct Rgb {
  int r = 0, g = 0, b = 0;
  std::string css() const;  // "rgb(r,g,b)"
  bool operator==(const Rgb& o) const { return r == o.r && g == o.g && b == o.b; }
};

// hot, mem, io, wakeup, red, green, blue, aqua, yellow, purple, orange,
// and wall (warm on-CPU, blue off-CPU; handled by the renderer).
bool is_known_palette(std::string_view name);
const char* known_palettes();  // "hot, mem, ..." for messages

// flamegraph.pl's namehash: weights the first characters, so names with a
// common prefix get similar values.
double name_hash_value(std::string_view name);
// A well-mixed value in [0,1) from a name and a salt.
double mixed_hash_value(std::string_view name, uint64_t salt);

// The colour of a frame in `palette` for variation values v1, v2, v3.
// Names ending in "_[k]" (kernel), "_[j]" (JIT) and "_[i]" (inlined) get
// flamegraph.pl's special hues in the hot palette.
Rgb palette_color(std::string_view palette, std::string_view name, double v1, double v2, double v3);

// "#rrggbb" or "rgb(r,g,b)" -> out; false (out unchanged) for anything else.
bool parse_css_color(std::string_view css, Rgb& out);
// WCAG 2.x relative luminance (0 black .. 1 white) and contrast ratio (1..21).
double relative_luminance(const Rgb& c);
double contrast_ratio(const Rgb& a, const Rgb& b);
// Frame labels are black or white, whichever contrasts more with the fill:
// the better of the two is always at least 4.58:1 (WCAG AA asks 4.5:1).
bool white_text_on(const Rgb& fill);

// `a` blended towards `b` by t in [0,1] (per channel, in linear light so
// that a half/half mix is not darker than both).
Rgb mix_colors(const Rgb& a, const Rgb& b, double t);

// The fill the script gives frames that match a search. Its luminance sits
// where black and white labels both keep 4.5:1, and no category colour,
// palette or diff shade is near it (magenta).
constexpr const char* kSearchHighlight = "rgb(208,0,208)";

// Stacks cut short (their callers lost: a DWARF user-stack copy that ran
// out, or a frame-pointer chain that left every mapping) fold with a
// root-side "[unknown]" frame right under the process frame. Such a frame
// is drawn with a hatched pattern (white with slate stripes, defined in the
// SVG as id "fg_cutshort"): a texture no category, palette or diff shade
// has, and on which black labels read (tests/categories/category_style_test).
constexpr const char* kCutShortFill = "url(#fg_cutshort)";
constexpr const char* kCutShortBase = "rgb(255,255,255)";
constexpr const char* kCutShortStripe = "rgb(152,152,184)";
// Its legend row (section "stacks") and `cat:` name.
constexpr const char* kCutShortName = "cut short (callers unknown)";

// Background gradient (top, bottom) for a palette.
void palette_background(std::string_view palette, std::string& top, std::string& bottom);
// flamegraph.pl's --bgcolors: a gradient name (yellow, blue, green, grey) or
// a flat "#rrggbb". False (top/bottom untouched) for anything else.
bool background_colors(std::string_view spec, std::string& top, std::string& bottom);

}  // namespace fg
