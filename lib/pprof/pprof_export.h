// Writes pprof profiles (profile.proto, gzip) for the continuous-profiling
// ecosystem (go tool pprof, Pyroscope, Parca): from perf.data with addresses,
// mappings, build-ids and per-sample labels (comm, pid, tid, category, phase),
// or at function level from any FoldedProfile (folded text, traces, pprof).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "categories/category_rules.h"
#include "fold/fold_perf_data.h"
#include "folded/folded_profile.h"
#include "pprof/pprof_addresses.h"

namespace fg {

struct PprofExportOptions {
  // Added to every sample, e.g. {"host", "node7"}.
  std::vector<std::pair<std::string, std::string>> labels;
  // When set, every sample gets "category" (resource) and "phase" labels.
  const CategoryMatcher* categories = nullptr;
  bool gzip = true;
  // perf.data: DWARF file names, start lines and line numbers for objects
  // with debuginfo (source_lines.h).
  bool source_lines = true;
  int gzip_level = 1;  // libdeflate level (1-12): 1 is ~2x faster than 6 and ~9% larger
  // perf.data: locations per object offset (rebased addresses) or per process address.
  PprofAddresses addresses = PprofAddresses::object;
};

struct PprofExportStats {
  uint64_t samples = 0, locations = 0, functions = 0, mappings = 0;
  uint64_t rounded_weights = 0;  // non-integral folded weights rounded to int64
  uint64_t bytes = 0;
  // DWARF file and line: objects with a line table, distinct addresses looked up.
  uint64_t source_objects = 0, source_lookups = 0;
  double source_seconds = 0;  // of build_seconds
  // Wall time of the parts (perf.data export): the fold (with the observer),
  // building the profile, encoding and compressing it.
  double fold_seconds = 0, build_seconds = 0, encode_seconds = 0;
};

// Function level: one location per frame (no addresses), one sample per
// stack, with the value type following profile.units.
std::string pprof_from_folded(const FoldedProfile& profile, const PprofExportOptions& options,
                              PprofExportStats* stats = nullptr);

// Several profiles in one pprof, each group's samples with its own labels
// (fgtool merge --label host ...). Functions and locations are shared.
struct PprofGroup {
  const FoldedProfile* profile;
  std::vector<std::pair<std::string, std::string>> labels;
};
std::string pprof_from_folded_groups(const std::vector<PprofGroup>& groups, const PprofExportOptions& options,
                                     PprofExportStats* stats = nullptr);

// Folds perf.data (as fold_perf_data does, same options) and writes the
// pprof: sample types for the view (cpu/nanoseconds + samples/count for
// clock events, off_cpu/nanoseconds, wall/nanoseconds), locations as
// options.addresses says, lines for inlined frames, the thread's
// comm as the root frame. `folded` (if given) receives the folded profile,
// identical to fold_perf_data's.
std::string pprof_from_perf_data(const std::string& path, const FoldOptions& fold_options,
                                 const PprofExportOptions& options, FoldStats* fold_stats = nullptr,
                                 FoldedProfile* folded = nullptr, PprofExportStats* stats = nullptr);

}  // namespace fg
