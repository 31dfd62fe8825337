// The zstd stream behind PERF_RECORD_COMPRESSED / COMPRESSED2 (`perf record -z`):
// perf never ends the frame, so all COMPRESSED payloads of a file are one
// continuous stream decoded by a single ZSTD_DStream, and a decompressed record
// may straddle two payloads (the caller keeps the tail). Internal to lib/perf.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace fg::perf_zstd {

class ZstdStream {
 public:
  // out_chunk: bytes decompressed per call into the output callback (0 = 256 KiB).
  explicit ZstdStream(size_t out_chunk = 0);
  ~ZstdStream();
  ZstdStream(const ZstdStream&) = delete;
  ZstdStream& operator=(const ZstdStream&) = delete;

  // Decompresses one payload, calling out(bytes, n) for each filled chunk.
  // Throws perf_abi::FormatError on a zstd error.
  void feed(const uint8_t* in, size_t n, const std::function<void(const uint8_t*, size_t)>& out);

 private:
  void* stream_ = nullptr;  // ZSTD_DStream*
  std::vector<uint8_t> buffer_;
};

}  // namespace fg::perf_zstd
