// Field numbers of pprof's profile.proto (the schema is lib/pprof/profile.proto),
// named for protozero's reader and writer. Both sides of fgtool's pprof
// support use these and nothing else, so the two cannot disagree.
#pragma once

#include <protozero/types.hpp>

namespace fg::pprof_fields {

enum class Profile : protozero::pbf_tag_type {
  sample_type = 1, sample = 2, mapping = 3, location = 4, function = 5, string_table = 6,
  drop_frames = 7, keep_frames = 8, time_nanos = 9, duration_nanos = 10, period_type = 11,
  period = 12, comment = 13, default_sample_type = 14, doc_url = 15,
};
enum class ValueType : protozero::pbf_tag_type { type = 1, unit = 2 };
enum class Sample : protozero::pbf_tag_type { location_id = 1, value = 2, label = 3 };
enum class Label : protozero::pbf_tag_type { key = 1, str = 2, num = 3, num_unit = 4 };
enum class Mapping : protozero::pbf_tag_type {
  id = 1, memory_start = 2, memory_limit = 3, file_offset = 4, filename = 5, build_id = 6,
  has_functions = 7, has_filenames = 8, has_line_numbers = 9, has_inline_frames = 10,
};
enum class Location : protozero::pbf_tag_type { id = 1, mapping_id = 2, address = 3, line = 4, is_folded = 5 };
enum class Line : protozero::pbf_tag_type { function_id = 1, line = 2, column = 3 };
enum class Function : protozero::pbf_tag_type { id = 1, name = 2, system_name = 3, filename = 4, start_line = 5 };

}  // namespace fg::pprof_fields
