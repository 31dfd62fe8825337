// A whole file read into memory: the kallsyms copies and JIT map files that
// symbolisation parses. Read to EOF, so /proc files (which report a size of 0)
// work too; the buffer of a regular file with a size is sized once from fstat.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace fg {

class FileBytes {
 public:
  // The memory budget: this machine's kallsyms is 5 MB and a long-running
  // JIT's perf map tens of MB; a larger file (a sparse or endless one named by
  // mistake) is refused rather than read.
  static constexpr size_t kMaxBytes = size_t(1) << 30;
  // Replaces the held bytes with the file's. On failure returns false and,
  // when `error` is given, says why, naming the path.
  bool read(const std::string& path, std::string* error);
  std::string_view view() const { return {data_.get(), size_}; }

 private:
  void reserve(size_t capacity);
  std::unique_ptr<char[]> data_;
  size_t size_ = 0, capacity_ = 0;
};

}  // namespace fg
