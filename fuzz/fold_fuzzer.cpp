// libFuzzer target: the whole `fgtool fold` pipeline (reader, process table,
// DWARF unwinder, symbol cache, folding) on a fuzzed perf.data, on-CPU and
// wall views, on one thread or two. The build-id cache is pointed at a
// missing directory so that results do not depend on the fuzzing machine's
// ~/.debug.
#include "fuzz_target.h"
#include "diagnostics/input_error.h"
#include "fold/fold_perf_data.h"
#include "fuzz_input.h"
#include "perf_data_mutator.h"

FGTOOL_FUZZ_TARGET(fold, data, size) {
  fg::fuzz::MemFile file(data, size);
  fg::FoldOptions options;
  // A fifth of the inputs take the two-thread paths: the reading thread,
  // the symbolising thread (frame pointers) or the DWARF unwind helper with
  // its queued sample copies; a seventh a tiny raw-stack table, so that
  // stacks are forgotten and named again.
  options.threads = size % 5 == 0 ? 2 : 1;
  if (size % 7 == 0) options.max_raw_stacks = 4;
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
