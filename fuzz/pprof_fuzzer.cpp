// libFuzzer target: pprof profile.proto input (raw protobuf, and the same
// bytes gzip-compressed, the form pprof files take), as every command reads
// it, and as fgtool merge's whole-profile merge reads it; then what fgtool
// export -f pprof does with the result, which must read back to the same
// folded text; the tree built on the reader's worker thread must be the one
// built inline.
#include "fuzz_target.h"
#include <cstdlib>
#include <string>
#include <string_view>

#include "diagnostics/input_error.h"
#include "folded/folded_writer.h"
#include "pprof/pprof_builder.h"
#include "pprof/pprof_export.h"
#include "pprof/pprof_merge.h"
#include "pprof/pprof_reader.h"

FGTOOL_FUZZ_TARGET(pprof, data, size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  (void)fg::looks_like_pprof(bytes.substr(0, 4096));
  std::string gz;
  if (size < 16384) gz = fg::gzip_bytes(bytes, 1);
  for (std::string_view in : {bytes, std::string_view(gz)}) {
    if (in.empty()) continue;
    fg::FoldedProfile p;
    fg::PprofReadOptions options;
    if (size > 0 && (data[0] & 1)) options.tags = {{"comm", "a"}};
    try {
      // fgtool merge's whole-profile merge reads it too (keeping addresses).
      fg::PprofMerger merger;
      if (merger.add(in, "fuzz.pb", {{"host", "a"}})) (void)merger.finish(false, 1);
    } catch (const fg::InputError&) {
    }
    try {
      fg::read_pprof_data(in, "fuzz.pb", p, options);
    } catch (const fg::InputError&) {
      continue;
    } catch (const fg::UsageError&) {
      continue;
    }
    std::string folded;
    fg::write_folded(p, folded);
    // The tree built on a worker thread (as for 16 K samples or more) is the same.
    if (in.data() == bytes.data()) {
      fg::PprofReadOptions threaded = options;
      threaded.tree_thread_after = 1;
      fg::FoldedProfile t;
      fg::read_pprof_data(in, "fuzz.pb", t, threaded);  // what read inline must read so too
      std::string folded_t;
      fg::write_folded(t, folded_t);
      if (folded_t != folded || t.node_count() != p.node_count()) std::abort();
    }
    std::string pb = fg::pprof_from_folded(p, fg::PprofExportOptions{});
    fg::FoldedProfile again;
    try {
      fg::read_pprof_data(pb, "rewritten.pb", again, {});
    } catch (const std::exception&) {
      std::abort();  // fgtool's own pprof output must read back
    }
    std::string folded_again;
    fg::write_folded(again, folded_again);
    // Weights are rounded to integers in pprof; compare only integral profiles.
    bool integral = true;
    p.for_each_stack([&](const std::vector<fg::FrameId>&, double w) { integral &= w == double(int64_t(w)); });
    if (integral && folded_again != folded) std::abort();
  }
}
