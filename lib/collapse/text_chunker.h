// Cuts a text stream into chunks of whole lines for PerfScriptCollapser. A
// chunk ends after a blank line where one is near its end, so the next chunk
// starts a new sample and can be folded on another thread; otherwise it ends
// after its last whole line and the next one continues the same sample.
// Owning thread: the one that reads (the collapse's calling thread).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "folded/input_stream.h"

namespace fg {

struct TextChunk {
  // Whole lines, each ending in '\n'. A plain buffer, reused from chunk to
  // chunk: a std::string would zero what read() is about to overwrite.
  std::unique_ptr<char[]> data;
  size_t size = 0, capacity = 0;
  uint64_t first_line = 0;     // the input's line number of the first one (0: not numbered)
  bool starts_sample = false;  // at the input's start or right after a blank line
  std::string_view text() const { return std::string_view(data.get(), size); }
};

class TextChunker {
 public:
  // Does not own `in`. A line longer than max_line stays longer for its
  // reader to reject: whole where a chunk holds it, else cut to max_line + 1
  // bytes with the rest skipped, so a chunk holds at most about
  // max(chunk_bytes, max_line) bytes. number_lines:
  // set first_line (a count of each chunk's lines, for chunks read out of
  // order; one reader of all chunks in order counts as it goes).
  TextChunker(InputStream& in, size_t chunk_bytes, size_t max_line, bool number_lines);

  // The next chunk into `chunk` (its buffer is reused). False at the end.
  // Throws InputError when the stream cannot be read.
  bool next(TextChunk& chunk);
  uint64_t bytes_read() const { return bytes_read_; }

 private:
  void fill(TextChunk& chunk, size_t target);
  void skip_rest_of_line();

  InputStream& in_;
  const size_t chunk_bytes_;
  const size_t max_line_;
  const bool number_lines_;
  std::string carry_;        // read after the last chunk's end
  std::string skip_buffer_;  // the rest of a line too long to keep
  uint64_t next_line_ = 1;
  bool next_starts_sample_ = true;
  bool eof_ = false;
  uint64_t bytes_read_ = 0;
};

// Counts '\n' bytes (16 at a time where SSE2 is there).
uint64_t count_newlines(const char* p, size_t n);

}  // namespace fg
