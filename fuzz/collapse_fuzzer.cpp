// libFuzzer target: `perf script` text through the stackcollapse-perf
// compatible collapser, on-CPU and off-CPU (sched_switch pairing), strict and
// lenient; the first input byte picks the option set. With bit 64 (on-CPU),
// also differential: the text read from a file on one thread and on two
// (collapse_in_parallel, small chunks) must give the same folded text or the
// same error.
#include "fuzz_target.h"
#include <cstdlib>
#include <string>
#include <string_view>

#include "collapse/parallel_collapse.h"
#include "collapse/perf_script_collapser.h"
#include "diagnostics/input_error.h"
#include "folded/folded_writer.h"
#include "fuzz_input.h"

namespace {

std::string fold_file(const std::string& path, const fg::CollapseOptions& options, bool parallel) {
  std::string result;
  try {
    fg::InputStream in(path);
    fg::FoldedProfile p;
    if (parallel) {
      p = fg::collapse_in_parallel(in, 0, options, 2, 48);
    } else {
      fg::PerfScriptCollapser c(p, options, in.name());
      c.read(in);
    }
    fg::write_folded(p, result);
    result += "units " + p.units;
  } catch (const fg::InputError& e) {
    result = std::string("error ") + e.what();
  }
  return result;
}

}  // namespace

FGTOOL_FUZZ_TARGET(collapse, data, size) {
  if (size == 0) return;
  uint8_t mode = data[0];
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  fg::CollapseOptions options;
  options.off_cpu = mode & 1;
  options.lenient = mode & 2;
  options.root = (mode & 4) ? fg::CollapseOptions::Root::CommPidTid : fg::CollapseOptions::Root::Comm;
  options.tidy.annotate_kernel = mode & 8;
  options.keep_inline = mode & 16;
  options.count_samples = mode & 32;
  fg::FoldedProfile out;
  try {
    fg::PerfScriptCollapser collapser(out, options, "fuzz.txt");
    size_t start = 0;
    while (start <= text.size()) {
      size_t nl = text.find('\n', start);
      if (nl == std::string_view::npos) nl = text.size();
      collapser.feed(text.substr(start, nl - start));
      start = nl + 1;
    }
    collapser.finish();
    fg::FoldedProfile rounded = fg::with_rounded_weights(out);
    (void)rounded.total();
  } catch (const fg::InputError&) {
  }
  (void)fg::looks_like_perf_script(text);
  if (!options.off_cpu && (mode & 64)) {
    fg::fuzz::MemFile file(data + 1, size - 1);
    if (fold_file(file.path(), options, false) != fold_file(file.path(), options, true)) std::abort();
  }
}
