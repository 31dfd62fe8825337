// Builds a pprof profile (profile.proto, lib/pprof/profile.proto) and encodes
// it with protozero, gzip-compressed as pprof tools expect. Strings, functions
// and mappings are numbered in order of first use and samples are written in
// the order given, so the same calls always give the same bytes.
#pragma once

#include <cstdint>
#include <deque>
#include <future>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pprof/pprof_gzip.h"  // gzip_bytes, for callers of encode_gzip

namespace fg {

class PprofBuilder {
 public:
  struct Mapping {
    uint64_t memory_start = 0, memory_limit = 0, file_offset = 0;
    std::string filename, build_id;  // build_id as hex text, as pprof prints it
    bool has_functions = true, has_filenames = false, has_line_numbers = false, has_inline_frames = false;
  };
  struct Line {
    uint64_t function_id = 0;
    int64_t line = 0;
  };
  struct Label {
    int64_t key = 0;        // string id
    int64_t str = 0;        // string id, or 0 for a numeric label
    int64_t num = 0;
    int64_t num_unit = 0;   // string id or 0
  };

  PprofBuilder();

  // The string table index of s ("" is 0).
  int64_t string_id(std::string_view s);

  void add_sample_type(std::string_view type, std::string_view unit);
  void set_default_sample_type(std::string_view type) { default_sample_type_ = string_id(type); }
  void set_period(std::string_view type, std::string_view unit, int64_t period);
  void set_time_nanos(int64_t t) { time_nanos_ = t; }
  void set_duration_nanos(int64_t d) { duration_nanos_ = d; }
  void add_comment(std::string_view c) { comments_.push_back(string_id(c)); }

  // Ids start at 1 (0 means "none" in the format).
  uint64_t add_mapping(const Mapping& m);
  // One function per (name, filename); deduplicated (start_line: the first one's).
  uint64_t function(std::string_view name, std::string_view filename = {}, int64_t start_line = 0);
  // A new location; lines innermost (inlined) first, the caller last.
  uint64_t add_location(uint64_t mapping_id, uint64_t address, const Line* lines, size_t line_count);
  // Location `id` as add_location writes it (the Profile.location field),
  // appended to out: for locations encoded on another thread, then handed
  // over with append_locations. scratch: reused buffers.
  static void encode_location(std::string& out, uint64_t id, uint64_t mapping_id, uint64_t address, const Line* lines,
                              size_t line_count, std::string scratch[2]);
  // `count` locations encoded so, numbered from the next id on.
  void append_locations(std::string&& encoded, uint64_t count);

  // A sample: location ids leaf first, one value per sample type.
  void add_sample(const uint64_t* location_ids, size_t location_count, const int64_t* values, size_t value_count,
                  const Label* labels, size_t label_count);

  // Expected encoded size of all samples, to allocate once (growing a large
  // buffer by doubling copies it and faults in fresh pages each time).
  void reserve_samples(size_t bytes) { samples_bytes_.reserve(bytes); }
  void reserve_locations(size_t bytes) { locations_bytes_.reserve(bytes); }

  // The same with labels already encoded by encode_labels (samples that
  // share their labels, the common case, encode them once).
  std::string encode_labels(const Label* labels, size_t label_count);
  void add_sample(const uint64_t* location_ids, size_t location_count, const int64_t* values, size_t value_count,
                  std::string_view encoded_labels);

  size_t sample_type_count() const { return sample_types_; }
  size_t sample_count() const { return samples_; }
  size_t function_count() const { return size_t(next_function_ - 1); }

  // The encoded Profile message (uncompressed). Not after compress_while_building.
  std::string encode() const;
  // encode(), gzip-compressed at libdeflate `level` (several members, see
  // gzip_pieces; deterministic: no name, no time in the header).
  std::string encode_gzip(int level = 1);
  // Compresses full 8 MiB runs of samples on other threads while samples
  // are still being added (each a gzip member; see gzip_bytes), so that
  // encode_gzip() has little left to do. Sample types must all be added first.
  void compress_while_building(int level) { stream_level_ = level; }

 private:
  std::vector<std::string_view> strings_;
  std::unordered_map<std::string_view, int64_t> string_ids_;
  std::vector<std::unique_ptr<char[]>> string_blocks_;
  char* block_pos_ = nullptr;
  size_t block_left_ = 0;
  std::string_view store(std::string_view s);

  std::string sample_types_bytes_, samples_bytes_, mappings_bytes_, locations_bytes_, functions_bytes_;
  size_t sample_types_ = 0, samples_ = 0;
  uint64_t next_mapping_ = 1, next_location_ = 1, next_function_ = 1;
  struct FunctionKey {
    int64_t name, filename;
    bool operator==(const FunctionKey& o) const { return name == o.name && filename == o.filename; }
  };
  struct FunctionKeyHash {
    size_t operator()(const FunctionKey& k) const { return std::hash<int64_t>()(k.name * 1000003 ^ k.filename); }
  };
  std::unordered_map<FunctionKey, uint64_t, FunctionKeyHash> functions_;
  int64_t default_sample_type_ = 0, period_type_ = 0, period_unit_ = 0, period_ = 0;
  bool has_period_ = false;
  int64_t time_nanos_ = 0, duration_nanos_ = 0;
  std::vector<int64_t> comments_;
  std::string scratch_, location_scratch_[2];
  std::string packed_;  // add_sample's packed fields, encoded
  // compress_while_building: the gzip members of the samples shipped so far, in order.
  void ship_full_samples();
  int stream_level_ = -1;
  bool shipped_prefix_ = false;
  std::vector<std::string> done_members_;
  struct ShippedRun {
    std::string member, run;  // the gzip member, and the run's buffer to fill again
  };
  std::deque<std::future<ShippedRun>> pending_members_;
  std::vector<std::string> spare_runs_;
  void take_member();
  std::string encode_after_samples() const;
  std::string encode_trailer() const;
};

}  // namespace fg
