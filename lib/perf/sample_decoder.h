// Decoding of PERF_RECORD_SAMPLE bodies with their event's sample_type and
// read_format: every field in the kernel's order, and a check that the fields
// consume exactly the record's size. Internal to lib/perf.
#pragma once

#include <cstddef>
#include <cstdint>

#include "perf/perf_records.h"

namespace fg::perf_sample {

// rec points at the record header (8-byte aligned), size = hdr.size. Fills out
// (pointers into rec). Throws perf_abi::FormatError if a field does not fit or
// the fields do not end exactly at size.
void decode_sample(const EventAttr& attr, const uint8_t* rec, size_t size, Sample& out);

}  // namespace fg::perf_sample
