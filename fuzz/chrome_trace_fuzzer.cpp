// libFuzzer target: Chrome trace-event JSON (lib/traces), strict and lenient,
// then the speedscope and d3 exports of the result, which must be valid JSON.
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "diagnostics/input_error.h"
#include "fuzz_input.h"
#include "fuzz_target.h"
#include "traces/chrome_trace.h"
#include "traces/exporters.h"

FGTOOL_FUZZ_TARGET(chrome_trace, data, size) {
  fg::fuzz::MemFile file(data, size);
  for (bool lenient : {false, true}) {
    fg::ChromeTraceOptions options;
    options.lenient = lenient;
    options.nanoseconds = size % 2;
    try {
      fg::ChromeTraceStats stats;
      fg::FoldedProfile p = fg::fold_chrome_trace(file.path(), options, &stats);
      (void)stats.warnings();
      std::string out;
      fg::export_speedscope(p, fg::ExportOptions{}, out);
      if (!nlohmann::json::accept(out)) std::abort();
      out.clear();
      fg::export_d3_json(p, fg::ExportOptions{}, out);
      if (!nlohmann::json::accept(out)) std::abort();
    } catch (const fg::InputError&) {
    }
  }
}
