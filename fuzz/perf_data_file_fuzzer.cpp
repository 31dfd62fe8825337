// libFuzzer target: perf.data read from a regular file (mmap path; file-mode
// and pipe-mode layouts both reach it), strict and --partial.
#include "fuzz_target.h"
#include "fuzz_input.h"
#include "perf_data_common.h"
#include "perf_data_mutator.h"

FGTOOL_FUZZ_TARGET(perf_data_file, data, size) {
  fg::fuzz::MemFile file(data, size);
  fg::fuzz::read_perf_data(file.path(), false);
  fg::fuzz::read_perf_data(file.path(), true);
}
