// FoldOptions for folding the perf.data fixtures under testdata/ in tests
// that link lib/fold: symbols only from testdata/fold/symfs, an empty
// kallsyms and build-id cache (nothing of this machine's), no debuginfod,
// and a damaged fixture folded as far as it goes (--partial).
#pragma once

#include <cstdlib>
#include <string>

#include "fold/fold_perf_data.h"
#include "test_support.h"

namespace fg::test {

inline FoldOptions fixture_fold_options() {
  setenv("DEBUGINFOD_URLS", "", 1);
  static const std::string dir = [] {
    std::string d = temp_dir();
    write_file(d + "/kallsyms", "");
    return d;
  }();
  FoldOptions o;
  o.symbols.kallsyms_path = dir + "/kallsyms";
  o.symbols.buildid_dir = dir;
  o.symbols.symfs = testdata("fold/symfs");
  o.partial = true;
  return o;
}

}  // namespace fg::test
