#include "input_formats.h"

#include <mutex>

#include "collapse/perf_script_collapser.h"
#include "fold/fold_perf_data.h"
#include "pprof/pprof_reader.h"
#include "traces/trace_inputs.h"

namespace fg::cli {

void register_input_formats() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Tried in this order on the file's first 4096 bytes; the first loader
    // whose predicate accepts them reads the file, and what none claims is
    // folded text (plain or gzip), which has no signature of its own. The
    // order is from the surest test to the loosest, so that a looser
    // heuristic never takes a file a surer one would recognise:
    //  1. perf.data (file and pipe mode): the 8-byte magic "PERFILE2".
    //  2. pprof: a protobuf Profile prefix that decodes field by field
    //     (inflated first when gzip); binary, so no text format matches it.
    //  3. oneDNN verbose log (plain or gzip): a line starting with a fixed
    //     marker ("onednn_verbose,", "dnnl_verbose,", "mkldnn_verbose,").
    //  4. Chrome / Kineto trace JSON (plain or gzip): '{' or '[' first and a
    //     "traceEvents", "ph" or Kineto header key in the head. 3 and 4 come
    //     from one test (detect_trace_input_head) and never both match.
    //  5. perf script text: a sample header line ("comm pid time: event:");
    //     the loosest test, it runs after the others and refuses folded lines.
    register_perf_data_loader();       // lib/fold
    register_pprof_loader();           // lib/pprof
    register_onednn_verbose_loader();  // lib/traces
    register_chrome_trace_loader();    // lib/traces
    register_perf_script_loader();     // lib/collapse
  });
}

}  // namespace fg::cli
