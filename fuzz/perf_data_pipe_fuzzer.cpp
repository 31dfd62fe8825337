// libFuzzer target: perf.data arriving through a pipe (`perf record -o - |
// fgtool fold -`): the streaming reader, strict and --partial.
#include "fuzz_target.h"
#include "fuzz_input.h"
#include "perf_data_common.h"
#include "perf_data_mutator.h"

FGTOOL_FUZZ_TARGET(perf_data_pipe, data, size) {
  for (bool partial : {false, true}) {
    fg::fuzz::PipeFeed feed(data, size);
    fg::fuzz::read_perf_data(feed.path(), partial);
  }
}
