// The perf.data file header (PERFILE2 magic, 104 bytes in file mode, 16 in a
// pipe) and the attrs section: perf_event_attr of any size perf has written,
// each followed by the section that locates its sample ids. Internal to lib/perf.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "perf/perf_records.h"

namespace fg::perf_file {

struct Section {
  uint64_t offset = 0, size = 0;
};

struct FileHeader {
  bool pipe_mode = false;
  uint64_t header_size = 0;
  uint64_t attr_size = 0;
  Section attrs, data, event_types;
  std::array<uint64_t, 4> features{};
};

// Parses the header from the first bytes of the input (avail bytes present).
// Throws fg::InputError for a wrong or foreign-endian magic, PERFFILE v1, or
// a header that is too short.
FileHeader parse_file_header(const uint8_t* p, size_t avail, const std::string& path);

// Decodes one perf_event_attr at p (avail bytes readable): reads attr.size
// (0 means 64), copies min(attr.size, ours) and zero-fills the rest.
// Throws perf_abi::FormatError if attr.size is < 64 or > avail, or if the
// sample_type / read_format has bits whose layout is unknown.
EventAttr parse_event_attr(const uint8_t* p, size_t avail);

// Checks that the sample layout of attr is one this reader can decode.
void check_sample_layout(const EventAttr& attr);

// Reads the attrs section (and every attr's ids) of a file-mode perf.data held
// in memory. Throws fg::InputError with the offending byte offset.
std::vector<EventAttr> read_attrs_section(const uint8_t* file, uint64_t file_size,
                                          const FileHeader& header, const std::string& path);

// "cpu-clock", "cycles", "sched:sched_switch" (from tracepoint formats if known),
// else "type T config C".
std::string default_event_name(const EventAttr& attr);

}  // namespace fg::perf_file
