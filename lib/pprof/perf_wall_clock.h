// When a perf.data recording started, in wall-clock time, for pprof's
// time_nanos. perf stamps samples with its own clock (the kernel's local
// clock unless `perf record -k CLOCKID`), which a file can only map to wall
// time when perf wrote the pair of readings in its CLOCK_DATA feature.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "perf/perf_data_reader.h"

namespace fg {

// The Unix time in nanoseconds of sample time `sample_time`, from:
//  1. CLOCK_DATA (feature 29, written by `perf record -k CLOCKID`): a wall
//     clock reading and the sample clock's reading taken together;
//  2. else, when every event samples CLOCK_REALTIME (`-k realtime`), the
//     sample time itself.
// Otherwise nothing: the default perf clock counts from boot, and the file's
// mtime is when it was last written, not when it was recorded (a copy
// changes it), so no guess is made. Reads the feature section from `path`
// (file mode only); a damaged or short section also gives nothing.
std::optional<int64_t> perf_sample_wall_time(const std::string& path, const PerfFileInfo& file, uint64_t sample_time);

}  // namespace fg
