// Feature sections of perf.data (HOSTNAME, CMDLINE, EVENT_DESC, BUILD_ID, ...):
// in file mode a table after the data section, in a pipe HEADER_FEATURE
// records with the same payload layout. Internal to lib/perf.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "perf/perf_data_reader.h"

namespace fg::perf_features {

// Parses one feature payload (size bytes at p) into info; EVENT_DESC entries
// go to event_desc (names are matched to attrs by the caller). Unknown
// features are ignored. Throws perf_abi::FormatError on malformed payloads.
void parse_feature(int feature, const uint8_t* p, size_t size, PerfFileInfo& info,
                   std::vector<EventAttr>& event_desc);

// Parses BUILD_ID entries ({header; pid; build_id[24]; filename}) or one
// HEADER_BUILD_ID record body (without the 8-byte header, misc from it).
void parse_build_id_entry(uint16_t misc, const uint8_t* body, size_t body_size, PerfFileInfo& info);

}  // namespace fg::perf_features
