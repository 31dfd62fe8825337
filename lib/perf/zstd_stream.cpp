#include "perf/zstd_stream.h"

#include <zstd.h>

#include <string>

#include "perf/perf_abi.h"

namespace fg::perf_zstd {

ZstdStream::ZstdStream(size_t out_chunk) : buffer_(out_chunk ? out_chunk : (256u << 10)) {
  ZSTD_DStream* s = ZSTD_createDStream();
  if (!s) throw perf_abi::FormatError("cannot create a zstd decompression stream");
  ZSTD_initDStream(s);
  stream_ = s;
}

ZstdStream::~ZstdStream() { ZSTD_freeDStream(static_cast<ZSTD_DStream*>(stream_)); }

void ZstdStream::feed(const uint8_t* in, size_t n, const std::function<void(const uint8_t*, size_t)>& out) {
  auto* s = static_cast<ZSTD_DStream*>(stream_);
  ZSTD_inBuffer input{in, n, 0};
  // Loop until the input is consumed and the decoder has no more output ready
  // (a full output buffer may hide more pending bytes).
  for (;;) {
    ZSTD_outBuffer output{buffer_.data(), buffer_.size(), 0};
    size_t ret = ZSTD_decompressStream(s, &output, &input);
    if (ZSTD_isError(ret))
      throw perf_abi::FormatError(std::string("zstd decompression failed: ") + ZSTD_getErrorName(ret));
    if (output.pos) out(buffer_.data(), output.pos);
    if (input.pos == input.size && output.pos < output.size) break;
  }
}

}  // namespace fg::perf_zstd
