// libFuzzer target: Chrome trace-event JSON (lib/traces), strict and lenient,
// in the CPU view, the GPU view (with idle gaps) and the op view, then the
// speedscope and d3 exports of the result, which must be valid JSON.
// The hand-written scanner is checked against nlohmann's parser: a document
// nlohmann accepts must not be "malformed JSON", and one it rejects must
// fail (except a bare array cut after an event, which the format allows).
#include <cstdlib>
#include <cstring>
#include <string>

#include <nlohmann/json.hpp>

#include "diagnostics/input_error.h"
#include "fuzz_input.h"
#include "fuzz_target.h"
#include "traces/chrome_trace.h"
#include "traces/exporters.h"
#include "traces/framework_ops.h"

FGTOOL_FUZZ_TARGET(chrome_trace, data, size) {
  fg::fuzz::MemFile file(data, size);
  // nlohmann's lexer takes a NUL byte for the end of input ("4\0[..." is the
  // valid document "4" to it); JSON allows no raw NUL outside strings, and
  // none inside them, so such inputs are not compared.
  const bool has_nul = std::memchr(data, 0, size) != nullptr;
  const bool valid = !has_nul && nlohmann::json::accept(std::string(reinterpret_cast<const char*>(data), size));
  for (int mode = 0; mode < 3; ++mode) {
    fg::ChromeTraceOptions options;
    options.lenient = mode != 0;
    options.nanoseconds = size % 2;
    if (mode == 2) {
      options.view = fg::ChromeTraceOptions::View::Gpu;
      options.gpu_idle = true;
      options.root_label = "rank 0";
    }
    try {
      fg::ChromeTraceStats stats;
      fg::FoldedProfile p = fg::fold_chrome_trace(file.path(), options, &stats);
      (void)stats.warnings();
      if (!valid && !stats.missing_close) std::abort();  // accepted JSON nlohmann rejects
      if (!(p.total() >= 0)) std::abort();
      fg::FoldedProfile ops = mode == 2 ? fg::trace_op_view(p) : fg::framework_op_view(p);
      if (ops.total() > p.total() * (1 + 1e-9) + 1e-9) std::abort();  // a view never adds time
      std::string out;
      fg::export_speedscope(p, fg::ExportOptions{}, out);
      if (!nlohmann::json::accept(out)) std::abort();
      out.clear();
      fg::export_d3_json(p, fg::ExportOptions{}, out);
      if (!nlohmann::json::accept(out)) std::abort();
    } catch (const fg::InputError& e) {
      if (valid && std::string(e.what()).find("malformed JSON") != std::string::npos) std::abort();
    }
  }
}
