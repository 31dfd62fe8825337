// Output files are written under a temporary name beside the target and
// renamed into place on commit(), so a crash or Ctrl-C never leaves a
// half-written SVG or folded file under the requested name. "-" is stdout.
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
  std::string path_, tmp_;
  FILE* file_ = nullptr;
  bool committed_ = false;
  bool is_stdout_ = false;
};

}  // namespace fg
