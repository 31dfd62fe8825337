// libFuzzer target: the whole `fgtool fold` pipeline (reader, process table,
// DWARF unwinder, symbol cache, folding) on a fuzzed perf.data, on-CPU and
// wall views. The build-id cache is pointed at a missing directory so that
// results do not depend on the fuzzing machine's ~/.debug.
#include "fuzz_target.h"
#include "diagnostics/input_error.h"
#include "fold/fold_perf_data.h"
#include "fuzz_input.h"
#include "perf_data_mutator.h"

FGTOOL_FUZZ_TARGET(fold, data, size) {
  fg::fuzz::MemFile file(data, size);
  fg::FoldOptions options;
  options.threads = 1;
  options.symbols.buildid_dir = "/nonexistent-fgtool-fuzz";
  options.partial = size % 2;
  options.max_memory = 8u << 20;  // see perf_data_common.h
  options.view = (size % 3 == 0) ? fg::FoldView::wall : fg::FoldView::on_cpu;
  try {
    fg::FoldStats stats;
    fg::FoldedProfile p = fg::fold_perf_data(file.path(), options, &stats);
    (void)p.total();
  } catch (const fg::InputError&) {
  } catch (const fg::UsageError&) {  // e.g. the wall view on a file without sched_switch
  }
}
