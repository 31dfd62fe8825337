// Reads a file, "-" (stdin) or a gzip stream (recognised by its magic bytes,
// whatever the file is called) as plain bytes in large blocks. Shared by the
// folded reader and the other text inputs, so every one of them takes .gz.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace fg {

class InputStream {
 public:
  // Throws InputError when the file cannot be opened.
  explicit InputStream(const std::string& path);
  ~InputStream();
  InputStream(const InputStream&) = delete;
  InputStream& operator=(const InputStream&) = delete;

  // Fills up to `capacity` bytes (decompressed); 0 means end of input.
  // Throws InputError on read or gzip errors.
  size_t read(char* dst, size_t capacity);
  bool gzip() const;
  const std::string& name() const;  // "-" is shown as "<stdin>"

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Calls fn(line, line_number) for each line of `in` ('\n' removed, a final
// line without '\n' included), with one large buffer reused throughout.
// Returns the number of bytes read.
template <class LineFn>
uint64_t for_each_line(InputStream& in, LineFn&& fn);

}  // namespace fg

#include "folded/input_stream_impl.h"
