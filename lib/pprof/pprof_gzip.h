// gzip for pprof files: compressing the encoded profile (libdeflate, several
// members on two threads) and inflating one to read it (libdeflate into one
// buffer, zlib for the byte offset of damage and for reading a prefix).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fg {

bool is_gzip(std::string_view d);

// pieces, one after another, gzip-compressed at libdeflate `level` (1-12):
// each piece cut into runs of at most 8 MiB, each run a gzip member of its
// own, compressed on two threads. Concatenated members are one valid gzip
// stream (RFC 1952; Go's gzip reader, and so pprof tools, read them as one).
// The bytes depend only on the input and level (no name, mtime 0).
std::string gzip_pieces(const std::vector<std::string_view>& pieces, int level);
inline std::string gzip_bytes(std::string_view data, int level) { return gzip_pieces({data}, level); }
// One gzip member of `data` (for callers that run it on a thread of their own).
std::string gzip_member(std::string_view data, int level);

// An inflated buffer (not zero-filled before use, unlike std::string).
class InflatedBytes {
 public:
  InflatedBytes() = default;
  InflatedBytes(const InflatedBytes&) = delete;
  InflatedBytes& operator=(const InflatedBytes&) = delete;
  InflatedBytes(InflatedBytes&& o) noexcept : data_(o.data_), size_(o.size_) { o.data_ = nullptr; o.size_ = 0; }
  InflatedBytes& operator=(InflatedBytes&& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    return *this;
  }
  ~InflatedBytes() { std::free(data_); }
  std::string_view view() const { return std::string_view(data_, size_); }

 private:
  friend InflatedBytes gunzip(std::string_view, const std::string&, uint64_t);
  char* data_ = nullptr;
  size_t size_ = 0;
};

// Inflates a whole gzip stream (members concatenated as gzip allows; trailing
// bytes that are not a gzip member are ignored, as gzip(1) warns and does).
// Throws InputError "NAME: byte N: ..." (N in the compressed input) on a
// damaged or truncated stream, or when it inflates to more than max_out.
InflatedBytes gunzip(std::string_view in, const std::string& name, uint64_t max_out);
// The first max_out bytes it inflates to, or less, quietly, when the stream
// ends or is damaged (for recognising a file by its first bytes).
std::string gunzip_prefix(std::string_view in, uint64_t max_out);

}  // namespace fg
