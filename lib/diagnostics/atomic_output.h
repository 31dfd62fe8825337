// Output files are written under a temporary name beside the target and
// renamed into place on commit(), so a crash or Ctrl-C never leaves a
// half-written SVG or folded file under the requested name. "-" is stdout;
// an existing non-regular file (/dev/null, a FIFO) is written in place.
// Before anything is written the target is checked against the process's
// OutputPolicy: an input of the same run is never replaced, and a read-only
// file only with `force`.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace fg {

// Set once by the CLI after parsing options, read by every AtomicOutput.
struct OutputPolicy {
  bool force = false;                // replace read-only (mode without any w bit) targets
  std::vector<std::string> inputs;   // files this run reads: an output on the same inode is refused
};
void set_output_policy(OutputPolicy policy);
const OutputPolicy& output_policy();

class AtomicOutput {
 public:
  // Throws UsageError if the target is an input, read-only (without force),
  // or cannot be created.
  explicit AtomicOutput(std::string path);
  ~AtomicOutput();                           // removes the temporary file unless committed
  AtomicOutput(const AtomicOutput&) = delete;
  AtomicOutput& operator=(const AtomicOutput&) = delete;

  void write(std::string_view bytes);
  FILE* file() { return file_; }
  // Flushes, checks for write errors (disk full) and renames into place.
  void commit();
  const std::string& path() const { return path_; }
  // The file that commit() replaces: path() with symlinks followed, even a
  // dangling one (its target is created).
  const std::string& target() const { return target_; }

 private:
  std::string path_, target_, tmp_;
  FILE* file_ = nullptr;
  bool committed_ = false;
  bool is_stdout_ = false;
  bool direct_ = false;  // not a regular file (/dev/null, a FIFO): written in place
};

}  // namespace fg
