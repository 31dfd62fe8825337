// Reads pprof profiles (profile.proto, gzip-compressed or not: Go's
// runtime/pprof, `go tool pprof -proto`, Pyroscope and Parca exports, fgtool's
// own) into a FoldedProfile, so they get fgtool's categories, diffs and SVGs.
// One value per sample is folded (--sample-index); --tag keeps some samples.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "folded/folded_profile.h"

namespace fg {

struct PprofReadOptions {
  // Which of the sample's values to fold: a sample type name ("cpu",
  // "alloc_space") or its index ("0"). Empty: the profile's
  // default_sample_type, else the last type (as `go tool pprof` does).
  std::string sample_index;
  // Keep only samples that carry every key=value label (a numeric label
  // matches its decimal text). Empty = all samples.
  std::vector<std::pair<std::string, std::string>> tags;
  // A profile with at least this many samples has its tree built on a
  // thread of its own while its samples are decoded (the same profile,
  // sooner); 0 = never. Tests vary it.
  uint64_t tree_thread_after = 16 * 1024;
};

struct PprofReadInfo {
  std::vector<std::pair<std::string, std::string>> sample_types;  // (type, unit)
  size_t value_index = 0;
  uint64_t samples = 0, kept_samples = 0;
  size_t locations = 0, functions = 0, mappings = 0;
  uint64_t protobuf_bytes = 0;  // after gunzip
};

// Adds the profile in `path` to `into` (and sets into.units from the sample
// type). Throws InputError ("FILE: byte N: ...", N an offset into the
// decompressed protobuf) on malformed input, UsageError on a --sample-index
// the profile does not have.
void read_pprof(const std::string& path, FoldedProfile& into, const PprofReadOptions& options = {},
                PprofReadInfo* info = nullptr);
// The same from bytes in memory (gzip or raw protobuf); `name` is for messages.
void read_pprof_data(std::string_view data, const std::string& name, FoldedProfile& into,
                     const PprofReadOptions& options = {}, PprofReadInfo* info = nullptr);

// Whether a file's first bytes (raw: gzip or not) look like a pprof profile:
// a gzip stream whose start inflates to, or bytes that are, a well-formed
// Profile message prefix. Gzip-compressed folded text does not match.
bool looks_like_pprof(std::string_view head);

// "key=value" -> (key, value); throws UsageError otherwise.
std::pair<std::string, std::string> parse_tag(const std::string& text);

// Makes load_profile() (every command's input) read pprof files.
void register_pprof_loader();

}  // namespace fg
