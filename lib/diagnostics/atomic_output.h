// Output files are written under a temporary name beside the target and
// renamed into place on commit(), so a crash or Ctrl-C never leaves a
// half-written SVG or folded file under the requested name. "-" is stdout;
// an existing non-regular file (/dev/null, a FIFO) is written in place.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace fg {

class AtomicOutput {
 public:
  explicit AtomicOutput(std::string path);  // throws UsageError if it cannot be created
  ~AtomicOutput();                           // removes the temporary file unless committed
  AtomicOutput(const AtomicOutput&) = delete;
  AtomicOutput& operator=(const AtomicOutput&) = delete;

  void write(std::string_view bytes);
  FILE* file() { return file_; }
  // Flushes, checks for write errors (disk full) and renames into place.
  void commit();
  const std::string& path() const { return path_; }

 private:
  std::string path_, target_, tmp_;  // target_: path_ with symlinks resolved
  FILE* file_ = nullptr;
  bool committed_ = false;
  bool is_stdout_ = false;
  bool direct_ = false;  // not a regular file (/dev/null, a FIFO): written in place
};

}  // namespace fg
