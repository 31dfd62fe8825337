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

// Background gradient (top, bottom) for a palette.
void palette_background(std::string_view palette, std::string& top, std::string& bottom);
// flamegraph.pl's --bgcolors: a gradient name (yellow, blue, green, grey) or
// a flat "#rrggbb". False (top/bottom untouched) for anything else.
bool background_colors(std::string_view spec, std::string& top, std::string& bottom);

}  // namespace fg
