// The TRACING_DATA blob of perf.data (tracefs event formats of the recorded
// tracepoints) and bounds-checked reads of tracepoint fields from a sample's
// RAW payload, by the offsets/sizes/signedness the format gives (never hardcoded).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace fg {

struct TracepointField {
  std::string name;       // "prev_pid"
  std::string type;       // "pid_t", "char", "__data_loc char[]"
  uint32_t offset = 0;    // from the start of the RAW payload
  uint32_t size = 0;
  bool is_signed = false;
  bool is_array = false;  // "char prev_comm[16]"
  bool is_string = false; // char array or __data_loc char[]
  bool is_data_loc = false;  // u32 (len << 16) | offset
  bool is_rel_loc = false;   // u32 (len << 16) | offset from the end of this field
  bool is_common = false;    // common_type, common_pid, ...
};

struct TracepointFormat {
  std::string system;     // "sched"
  std::string name;       // "sched_switch"
  uint64_t id = 0;        // matches EventAttr::config of a TRACEPOINT attr
  std::vector<TracepointField> fields;  // common fields first, in format order
  std::string print_fmt;

  const TracepointField* field(std::string_view field_name) const;
  std::string full_name() const { return system + ":" + name; }  // "sched:sched_switch"
};

class TracingData {
 public:
  TracingData() = default;
  // Parses a TRACING_DATA blob (feature section or pipe payload). source names
  // it in errors ("perf.data"); throws fg::InputError with the byte within the
  // blob on malformed data, and when the parsed formats would take more than
  // kMaxBytesPerBlobByte times the blob (at least kMinFormatBudget): a blob
  // of empty formats under a long system name would otherwise copy that name
  // into every one of them.
  static constexpr uint64_t kMaxBytesPerBlobByte = 32;
  static constexpr uint64_t kMinFormatBudget = 16u << 20;
  // base_offset: where the blob lies in the source, added to error offsets
  // so that they name the byte of the file.
  static TracingData parse(std::string_view blob, const std::string& source = "tracing data",
                           uint64_t base_offset = 0);
  // Parses one tracefs "format" text (name:, ID:, format:, field: lines).
  static TracepointFormat parse_format(std::string_view text, const std::string& system);

  const TracepointFormat* find(uint64_t id) const;
  const TracepointFormat* find(std::string_view system, std::string_view name) const;
  const std::vector<TracepointFormat>& formats() const { return formats_; }
  std::string_view version() const { return version_; }
  uint8_t long_size() const { return long_size_; }
  uint32_t page_size() const { return page_size_; }
  bool empty() const { return formats_.empty(); }

 private:
  std::vector<TracepointFormat> formats_;
  std::unordered_map<uint64_t, size_t> by_id_;  // first format with each ID
  std::string version_;
  uint8_t long_size_ = 0;
  uint32_t page_size_ = 0;
};

// Field reads from a RAW payload. They return false (or an empty view) when
// the field does not lie inside raw[0, raw_size).
bool read_tracepoint_int(const TracepointField& f, const uint8_t* raw, uint32_t raw_size, int64_t* out);
bool read_tracepoint_uint(const TracepointField& f, const uint8_t* raw, uint32_t raw_size, uint64_t* out);
// Char arrays end at the first NUL or at the field size (a full 16-byte comm
// has no NUL); __data_loc strings are located through their u32 descriptor.
std::string_view read_tracepoint_string(const TracepointField& f, const uint8_t* raw, uint32_t raw_size);

}  // namespace fg
