// Turns an input file of any kind fgtool reads (folded text, plain or gzip,
// by default; perf.data and others once their stage registers a loader) into
// a FoldedProfile. A loader is chosen by a predicate on the file's first
// bytes, so `fgtool svg perf.data` and `fgtool svg x.folded` share one path.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "folded/folded_profile.h"

namespace fg {

struct ProfileLoadOptions {
  bool lenient = false;                           // skip malformed records/lines where the format allows
  std::function<void(const std::string&)> warn;   // empty = stderr
  // --unit: what the counts of every input mean, overriding what the input
  // says (for folded files from other tools, which carry no units line).
  std::string units;
  // pprof input (lib/pprof): which sample value to fold, and key=value label
  // filters (see PprofReadOptions).
  std::string sample_index;
  std::vector<std::pair<std::string, std::string>> tags;
  // Non-empty: the input's stacks go below this one root frame (`fgtool
  // merge --label`). Folded text is read straight into place; other inputs
  // are loaded on their own and merged below it.
  std::string root_frame;
};

// Seconds per unit for time units (ns, us, ms, s), 0 for anything else.
double seconds_per_unit(const std::string& units);
// What a count in `from` is in `to` (1000 for us -> ns, exactly), 0 unless both are time units.
double time_unit_factor(const std::string& from, const std::string& to);

struct ProfileLoader {
  std::string name;  // e.g. "perf.data", shown in messages
  // Sees up to the first 4096 raw (not decompressed) bytes of the file.
  std::function<bool(std::string_view head)> matches;
  // Adds the file's stacks to `into` (and may set into.units).
  using Load = std::function<void(const std::string& path, FoldedProfile& into, const ProfileLoadOptions& options)>;
  Load load;
};

// Adds a loader at the end of the lookup list. Loaders are tried in the
// order they were registered (the first whose predicate accepts the head
// wins; folded text is the fallback), so the order is the priority: the CLI
// registers every format once, in one place (apps/fgtool/input_formats.cpp).
// A second loader with a name already registered is ignored. Call it from code
// that is certainly linked (static initialisers inside a static library
// object nobody references are dropped by the linker).
void register_profile_loader(ProfileLoader loader);
// The registered loaders' names, in lookup order.
std::vector<std::string> profile_loader_names();
// Every registered loader whose predicate accepts `head`, in lookup order
// (find_profile_loader takes the first; more than one means the order decides).
std::vector<std::string> profile_loaders_matching(std::string_view head);

// What --tag / --sample-index (pprof input only) do to an input of another
// kind (`kind`: its loader's name, or "folded text"): "" for pprof or when
// neither is given, else a warning that the input is read whole.
std::string pprof_only_options_note(const std::string& path, std::string_view kind, const ProfileLoadOptions& options);

// The first 4096 bytes of a file ("" for "-", unreadable files and named
// FIFOs; a pipe named /dev/fd/N keeps its head for the reader: stream_head.h).
std::string read_file_head(const std::string& path);
// The registered loader whose predicate accepts this head, or nullptr (folded text).
const ProfileLoader* find_profile_loader(std::string_view head);

// Adds `path` ("-" = stdin, always folded text) to `into` with the matching
// loader, falling back to the folded-text reader (which handles gzip).
void load_profile(const std::string& path, FoldedProfile& into, const ProfileLoadOptions& options = {});
FoldedProfile load_profile(const std::string& path, const ProfileLoadOptions& options = {});
// Several inputs merged into one profile (one input is loaded as is, keeping
// its frame objects). `label`, if given, receives "a + b + ...". Inputs in
// different time units are converted to the first one's, with a note through
// options.warn; other unit mixes (samples and ns, ...) throw UsageError.
FoldedProfile load_profiles(const std::vector<std::string>& paths, const ProfileLoadOptions& options = {},
                            std::string* label = nullptr);

// Both inputs of a diff in one prefix tree: B read first, then A into the
// same tree, each side's self weights kept per node. Holds one merged tree
// where loading A and B apart and merging them held three.
struct DiffUnion {
  FoldedProfile tree;                   // B's nodes (in B's own order), then A's new ones; self weights 0
  std::vector<double> self_a, self_b;   // per tree node (index = NodeId), as read
  double raw_sum_a = 0, raw_sum_b = 0;  // each side's self weights summed in that side's own node order
};
// Reads BEFORE (`a`) and AFTER (`b`) into `out` when both are folded text;
// false, reading nothing, when a registered loader claims either, and false
// after reading when the two files' units lines differ (load those apart). Errors and warnings name the files in the order loading A and then
// B would.
bool load_diff_union(const std::string& a, const std::string& b, DiffUnion& out,
                     const ProfileLoadOptions& options = {});

}  // namespace fg
