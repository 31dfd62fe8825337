// How a pprof written from perf.data keys its locations and mappings: by
// object offset (the default, as `go tool pprof` merges) or per process.
#pragma once

namespace fg {

// How locations (and mappings) are keyed.
enum class PprofAddresses {
  // One mapping per object segment (build-id or file, file offset, size
  // rounded up to 4 KiB: the key of `go tool pprof`'s profile merge), with
  // the first process's addresses; a location per object offset, its
  // address rebased onto that mapping (the file offset is kept). Each
  // process's samples keep their pid/tid labels. Anonymous and JIT memory
  // stay per process, kernel addresses as they are.
  object,
  // Each process's own mappings and addresses: a location per sampled
  // address in its process mapping (many more on a system-wide recording).
  process,
};

}  // namespace fg
