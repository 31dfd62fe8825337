// libFuzzer target: oneDNN / MKL-DNN verbose logs (lib/traces): the folded
// view and the per-primitive summary, whose JSON must be valid.
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "diagnostics/input_error.h"
#include "fuzz_input.h"
#include "fuzz_target.h"
#include "traces/onednn_verbose.h"

FGTOOL_FUZZ_TARGET(onednn_verbose, data, size) {
  fg::fuzz::MemFile file(data, size);
  try {
    fg::OnednnVerboseStats stats;
    fg::FoldedProfile p = fg::fold_onednn_verbose(file.path(), &stats);
    (void)p.total();
    fg::OnednnSummary s = fg::summarize_onednn_verbose({file.path()});
    if (!nlohmann::json::accept(fg::format_onednn_summary_json(s))) std::abort();
    (void)fg::format_onednn_summary_text(s);
    (void)fg::format_onednn_summary_csv(s);
  } catch (const fg::InputError&) {
  }
}
