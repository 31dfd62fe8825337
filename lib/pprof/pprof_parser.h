// The second half of reading pprof: a Profile message (profile.proto, after
// any gunzip) parsed with protozero and folded into a FoldedProfile. Tables
// (strings, mappings, locations, functions) are read first, samples after.
#pragma once

#include <string>
#include <string_view>

#include "folded/folded_profile.h"
#include "pprof/pprof_reader.h"

namespace fg {

// Folds the protobuf `pb` into `into` as read_pprof does (its errors too:
// InputError with the byte offset in pb, UsageError for --sample-index).
void parse_pprof(std::string_view pb, const std::string& name, const PprofReadOptions& options, FoldedProfile& into,
                 PprofReadInfo* info);

}  // namespace fg
