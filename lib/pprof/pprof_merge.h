// Merges whole pprof profiles into one, keeping what `fgtool merge`'s folded
// tree drops: each input's mappings (with build-ids), its locations'
// addresses and lines, functions' files, and its samples' labels, plus labels
// per input (host=..., rank=...). For `fgtool merge -o X.pb.gz` when every
// input is a perf.data (exported first) or a pprof file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "pprof/pprof_builder.h"

namespace fg {

class PprofMerger {
 public:
  // Adds one profile (protobuf, gzip or not); `labels` go on each of its
  // samples. Returns false, adding nothing, when its sample types differ
  // from the first profile's (their values cannot be summed column by
  // column; `mismatch` says how). Throws InputError ("NAME: byte N: ...") on
  // malformed input.
  bool add(std::string_view bytes, const std::string& name,
           const std::vector<std::pair<std::string, std::string>>& labels, std::string* mismatch = nullptr);

  size_t profiles() const { return profiles_; }
  // The merged profile's bytes (gzip at libdeflate `level`, or raw).
  std::string finish(bool gzip, int level);

 private:
  PprofBuilder b_;
  size_t profiles_ = 0;
  std::vector<std::pair<std::string, std::string>> sample_types_;  // of the first profile
  int64_t first_ns_ = 0, end_ns_ = 0;
  std::vector<std::string> comments_;
  // Identity -> id in the merged profile: the same object mapped at the same
  // place (file, build-id, start, limit, offset) is one mapping; a location
  // is one (mapping, address) when it has an address.
  std::unordered_map<std::string, uint64_t> mapping_ids_;
  std::unordered_map<std::string, uint64_t> location_ids_;
};

}  // namespace fg
