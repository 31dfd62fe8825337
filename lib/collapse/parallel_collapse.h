// On-CPU `perf script` text folded on several threads: the calling thread
// reads and cuts the text into chunks at blank lines (TextChunker), each
// worker folds its chunks into a profile of its own with its own
// PerfScriptCollapser, and the profiles are merged at the end. The output is
// the one a single PerfScriptCollapser gives, error messages and line
// numbers included, but for the read error below
// (tests/collapse/parallel_collapse_test.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "collapse/perf_script_collapser.h"
#include "folded/folded_profile.h"
#include "folded/input_stream.h"

namespace fg {

// Folds `in` (size: for progress, 0 if unknown) on `threads` workers with
// chunks of about chunk_bytes. Not for options.off_cpu (its pairing follows
// the input's order). Throws InputError as PerfScriptCollapser does, for the
// input's first malformed line. A read error (a gzip stream cut short) is
// met when the reading gets there, one chunk ahead of the folding, so a
// malformed line within a chunk before it may or may not come first, on
// one thread as on several.
FoldedProfile collapse_in_parallel(InputStream& in, uint64_t size, const CollapseOptions& options,
                                   unsigned threads, size_t chunk_bytes, CollapseStats* stats = nullptr);

}  // namespace fg
