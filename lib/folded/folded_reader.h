// Streaming reader for folded stacks ("a;b;c 42" per line) from a file, "-"
// (stdin) or gzip (detected by its magic bytes), merging duplicate stacks into
// a FoldedProfile as it goes, so memory follows the unique stacks, not the
// input. Also reads difffolded's three-column form ("stack countA countB").
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "folded/folded_profile.h"

namespace fg {

struct FoldedReadOptions {
  // Skip malformed lines instead of throwing InputError; a summary of what
  // was skipped goes to `warn` (stderr by default).
  bool lenient = false;
  std::function<void(const std::string&)> warn;  // empty = print to stderr
  // After this many stacks the profile's tree is built on a thread of its
  // own while the reading thread goes on splitting lines and interning
  // names (the same profile, sooner, on large input); 0 = never. Tests
  // vary it.
  uint64_t tree_thread_after = 16 * 1024;
  // Non-empty: every stack goes below this one extra root frame (`fgtool
  // merge --label host` reads each host's file under "host=NAME" straight
  // into the merged tree). Not for three-column input.
  std::string root_frame;
};

struct FoldedReadStats {
  uint64_t bytes = 0;           // uncompressed bytes read
  uint64_t lines = 0;           // lines seen, blank ones included
  uint64_t stacks = 0;          // data lines added (before merging)
  uint64_t skipped = 0;         // malformed lines skipped (lenient mode)
  uint64_t first_skipped_line = 0;
  std::string first_skipped_reason;
  // Limits (see kMaxStackDepth, kMaxFrameNameBytes): stacks cut to their
  // root-most frames, and names cut short; both reported through `warn`.
  uint64_t truncated_stacks = 0;
  uint64_t truncated_names = 0;
};

// Adds every stack of `path` ("-" = stdin) to `into`. Throws InputError
// "FILE:LINE: reason" on a malformed line (unless lenient) and on I/O or
// gzip errors.
FoldedReadStats read_folded(const std::string& path, FoldedProfile& into, const FoldedReadOptions& options = {});
// The same for text already in memory; `name` is used in messages.
FoldedReadStats read_folded_text(std::string_view text, const std::string& name, FoldedProfile& into,
                                 const FoldedReadOptions& options = {});

// Calls fn for every stack line in input order, without merging (for flame
// charts). Same parsing and errors as read_folded.
FoldedReadStats for_each_folded_line(const std::string& path,
                                     const std::function<void(std::string_view stack, double count)>& fn,
                                     const FoldedReadOptions& options = {});

// Three-column input ("stack countA countB", as written by difffolded.pl):
// column two goes to `a`, column three to `b`.
FoldedReadStats read_diff_folded(const std::string& path, FoldedProfile& a, FoldedProfile& b,
                                 const FoldedReadOptions& options = {});
FoldedReadStats read_diff_folded_text(std::string_view text, const std::string& name, FoldedProfile& a,
                                      FoldedProfile& b, const FoldedReadOptions& options = {});

// Whether a file is in the three-column form: every non-blank line ends in
// two counts (there is at least one). One folded line whose stack ends in a
// number ("train;epoch 1 100") does not make a file three-column; the scan
// stops at the first line that is not. False for "-" (it cannot be read
// twice): give --diff-input to `fgtool svg` there.
bool looks_like_diff_folded(const std::string& path);
bool looks_like_diff_folded_text(std::string_view text);

// Parses a count as written in folded files: digits with an optional
// fraction or exponent; false for anything else (signs, NaN, inf, junk).
bool parse_count(std::string_view token, double& value);

}  // namespace fg
