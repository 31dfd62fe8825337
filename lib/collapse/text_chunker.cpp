#include "collapse/text_chunker.h"

#include <algorithm>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace fg {

uint64_t count_newlines(const char* p, size_t n) {
  uint64_t total = 0;
  size_t i = 0;
#if defined(__SSE2__)
  // Byte counters subtract the compare masks (-1 per '\n') for at most 255
  // blocks, then one sum of absolute differences adds them up: no popcount
  // needed, so this stays baseline x86-64.
  const __m128i nl = _mm_set1_epi8('\n');
  while (n - i >= 16) {
    __m128i acc = _mm_setzero_si128();
    const size_t blocks = std::min<size_t>((n - i) / 16, 255);
    for (size_t b = 0; b < blocks; ++b, i += 16)
      acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i)), nl));
    const __m128i sums = _mm_sad_epu8(acc, _mm_setzero_si128());
    total += uint64_t(_mm_cvtsi128_si64(sums)) + uint64_t(_mm_cvtsi128_si64(_mm_unpackhi_epi64(sums, sums)));
  }
#endif
  for (; i < n; ++i) total += p[i] == '\n';
  return total;
}

namespace {

// Where a chunk of `n` bytes (starting at a line start) should end: after a
// blank line ("\n\n" or "\n\r\n") in its second half, so the next chunk
// starts a sample (`starts_sample`); else after its last '\n'; 0 if it has none.
size_t split_point(const char* p, size_t n, bool& starts_sample) {
  starts_sample = false;
  const void* last = ::memrchr(p, '\n', n);
  if (!last) return 0;
  const size_t end = size_t(static_cast<const char*>(last) - p) + 1;
  // Blank lines come every few lines in callchain text; a chunk without one
  // near its end is cut at its last line and continues on the same thread.
  for (size_t i = end - 1; i >= n / 2 && i >= 1;) {
    if (p[i - 1] == '\n' || (p[i - 1] == '\r' && i >= 2 && p[i - 2] == '\n')) {
      starts_sample = true;
      return i + 1;
    }
    const void* prev = ::memrchr(p, '\n', i);
    if (!prev) break;
    i = size_t(static_cast<const char*>(prev) - p);
  }
  return end;
}

}  // namespace

TextChunker::TextChunker(InputStream& in, size_t chunk_bytes, size_t max_line, bool number_lines)
    : in_(in), chunk_bytes_(std::max<size_t>(chunk_bytes, 1)), max_line_(max_line), number_lines_(number_lines) {}

void TextChunker::fill(TextChunk& c, size_t target) {
  while (c.size < target && !eof_) {
    const size_t got = in_.read(c.data.get() + c.size, target - c.size);
    if (got == 0) eof_ = true;
    c.size += got;
    bytes_read_ += got;
  }
}

void TextChunker::skip_rest_of_line() {
  // At most max_line + 1 bytes, so what follows the line fits a chunk.
  if (skip_buffer_.empty()) skip_buffer_.resize(std::min<size_t>(size_t(1) << 16, max_line_ + 1));
  while (!eof_) {
    const size_t got = in_.read(&skip_buffer_[0], skip_buffer_.size());
    bytes_read_ += got;
    if (got == 0) {
      eof_ = true;
      return;
    }
    const void* nl = std::memchr(skip_buffer_.data(), '\n', got);
    if (nl) {
      const size_t after = size_t(static_cast<const char*>(nl) - skip_buffer_.data()) + 1;
      carry_.assign(skip_buffer_.data() + after, got - after);
      return;
    }
  }
}

bool TextChunker::next(TextChunk& c) {
  // Room for a whole chunk, or for the longest line kept, plus a final '\n'.
  const size_t capacity = std::max(chunk_bytes_, max_line_ + 1) + 1;
  if (c.capacity < capacity) {
    c.data.reset(new char[capacity]);
    c.capacity = capacity;
  }
  if (!carry_.empty()) std::memcpy(c.data.get(), carry_.data(), carry_.size());
  c.size = carry_.size();
  carry_.clear();
  size_t target = chunk_bytes_;
  fill(c, target);
  if (c.size == 0) return false;
  c.first_line = number_lines_ ? next_line_ : 0;
  c.starts_sample = next_starts_sample_;
  char* p = c.data.get();
  bool next_starts = false;
  size_t end = 0;
  // Part of one line so far: read on (twice as much each time) until it
  // ends, the input ends or it is too long.
  while (!eof_ && (end = split_point(p, c.size, next_starts)) == 0 && c.size <= max_line_) {
    target = std::min(max_line_ + 1, std::max(target * 2, c.size + 1));
    fill(c, target);
  }
  if (eof_) {
    if (p[c.size - 1] != '\n') p[c.size++] = '\n';  // a last line without one
  } else if (end == 0) {
    // No '\n' in max_line + 1 bytes: keep that much, so the reader reports
    // the line as too long, and drop the rest of it.
    c.size = max_line_ + 1;
    p[c.size++] = '\n';
    skip_rest_of_line();
    next_starts = false;
  } else {
    carry_.assign(p + end, c.size - end);
    c.size = end;
  }
  if (number_lines_) next_line_ += count_newlines(p, c.size);
  next_starts_sample_ = next_starts;
  return true;
}

}  // namespace fg
