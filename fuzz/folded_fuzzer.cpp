// libFuzzer target: folded-stack text (strict, lenient, three-column diff
// form), then what fgtool svg does with it: write it back as folded text
// (which must read back without error) and render the SVG flamegraph; and
// the tree built on the reader's worker thread, below a root frame, must be
// the tree built inline.
#include "fuzz_target.h"
#include <cstdlib>
#include <string>
#include <string_view>

#include "diagnostics/input_error.h"
#include "folded/folded_reader.h"
#include "folded/folded_writer.h"
#include "render/flamegraph.h"

FGTOOL_FUZZ_TARGET(folded, data, size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  fg::FoldedReadOptions quiet;
  quiet.warn = [](const std::string&) {};
  for (bool lenient : {false, true}) {
    quiet.lenient = lenient;
    fg::FoldedProfile p;
    try {
      fg::read_folded_text(text, "fuzz.folded", p, quiet);
    } catch (const fg::InputError&) {
      continue;
    }
    std::string out;
    fg::write_folded(p, out);
    fg::FoldedProfile again;
    quiet.lenient = false;
    try {
      fg::read_folded_text(out, "rewritten.folded", again, quiet);
    } catch (const fg::InputError&) {
      std::abort();  // fgtool's own folded output must read back
    }
    quiet.lenient = lenient;
    if (size < 4096) {
      std::string svg;
      fg::SvgOptions svg_options;
      svg_options.embed_script = false;
      svg_options.title = std::string(text.substr(0, 64));
      fg::render_flamegraph(p, svg_options, svg);
    }
  }
  // The tree built on a thread of its own (as past 16 K stacks), and below
  // a root frame, must be the tree built inline.
  {
    fg::FoldedReadOptions inline_tree = quiet, threaded = quiet;
    inline_tree.lenient = threaded.lenient = true;
    inline_tree.tree_thread_after = 0;
    threaded.tree_thread_after = 1;
    threaded.root_frame = "host=fuzz";
    fg::FoldedProfile x, y;
    bool x_ok = true, y_ok = true;
    try {
      fg::read_folded_text(text, "fuzz.folded", x, inline_tree);
    } catch (const fg::InputError&) {
      x_ok = false;
    }
    try {
      fg::read_folded_text(text, "fuzz.folded", y, threaded);
    } catch (const fg::InputError&) {
      y_ok = false;
    }
    if (x_ok != y_ok) std::abort();
    if (x_ok) {
      fg::FoldedProfile below;
      below.merge(x, "host=fuzz");
      std::string want, got;
      fg::write_folded(below, want);
      fg::write_folded(y, got);
      if (want != got) std::abort();
    }
  }
  fg::FoldedProfile a, b;
  try {
    (void)fg::looks_like_diff_folded_text(text);
    fg::read_diff_folded_text(text, "fuzz.diff", a, b, quiet);
  } catch (const fg::InputError&) {
  }
}
