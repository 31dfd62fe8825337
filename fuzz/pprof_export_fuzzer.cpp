// libFuzzer target: `fgtool export -f pprof` on a fuzzed perf.data: the fold
// with its raw-stack observer (PerfDataCollector: locations by object offset
// following the path memo, or per process on the collector's own thread),
// then the profile built and encoded. Raw stacks, maps and the memo's slots
// all come from the hostile file; only fg::InputError may leave.
#include "diagnostics/input_error.h"
#include "fuzz_input.h"
#include "fuzz_target.h"
#include "perf_data_mutator.h"
#include "pprof/pprof_export.h"

FGTOOL_FUZZ_TARGET(pprof_export, data, size) {
  fg::fuzz::MemFile file(data, size);
  fg::FoldOptions options;
  // Even sizes: two threads (the symbolising thread, and per process the
  // collector's location thread), so both hand-offs see hostile stacks.
  options.threads = size % 2 ? 1 : 2;
  options.symbols.buildid_dir = "/nonexistent-fgtool-fuzz";
  options.partial = size % 3 == 0;
  options.max_memory = 8u << 20;  // see perf_data_common.h
  options.max_raw_stacks = size % 5 == 0 ? 2 : 0;  // the table forgetting stacks mid-fold
  fg::PprofExportOptions eo;
  eo.addresses = size % 4 < 2 ? fg::PprofAddresses::object : fg::PprofAddresses::process;
  eo.gzip = size % 7 == 0;
  eo.source_lines = false;  // no DWARF of the fuzzing machine's files in the result
  try {
    fg::FoldStats stats;
    std::string pb = fg::pprof_from_perf_data(file.path(), options, eo, &stats);
    (void)pb.size();
  } catch (const fg::InputError&) {
  } catch (const fg::UsageError&) {
  }
}
