// ZstdStream (lib/perf/zstd_stream.h) on real zstd data made here with
// libzstd the way `perf record -z` writes it: one frame that is flushed per
// record batch and never ended, fed in pieces split anywhere.
#include "perf/zstd_stream.h"

#include <gtest/gtest.h>
#include <zstd.h>

#include <random>
#include <string>
#include <vector>

#include "perf/perf_abi.h"

namespace {

using fg::perf_zstd::ZstdStream;

// Compresses the pieces as one unended frame, flushed after each piece (like
// perf's COMPRESSED records); returns the compressed chunk of each piece.
std::vector<std::string> compress_flushed(const std::vector<std::string>& pieces, int level = 1) {
  ZSTD_CCtx* c = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level);
  std::vector<std::string> out;
  std::vector<char> buf(ZSTD_CStreamOutSize());
  for (const std::string& p : pieces) {
    std::string chunk;
    ZSTD_inBuffer in{p.data(), p.size(), 0};
    size_t left;
    do {
      ZSTD_outBuffer o{buf.data(), buf.size(), 0};
      left = ZSTD_compressStream2(c, &o, &in, ZSTD_e_flush);
      EXPECT_FALSE(ZSTD_isError(left));
      chunk.append(buf.data(), o.pos);
    } while (left != 0 || in.pos < in.size);
    out.push_back(chunk);
  }
  ZSTD_freeCCtx(c);
  return out;
}

std::string random_text(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string s(n, ' ');
  for (char& ch : s) ch = "abcdefgh  \n"[rng() % 11];
  return s;
}

TEST(ZstdStream, FlushedPiecesFedInArbitrarySplitsComeOutWhole) {
  std::vector<std::string> pieces;
  std::string all;
  for (int i = 0; i < 20; ++i) {
    pieces.push_back(random_text(1000 + 3000 * i, i));
    all += pieces.back();
  }
  std::string compressed;
  for (const auto& c : compress_flushed(pieces)) compressed += c;
  for (size_t chunk : {size_t(0), size_t(7), size_t(4096)}) {  // 0: the default 256 KiB
    for (size_t split : {size_t(1), size_t(13), size_t(1000), compressed.size()}) {
      ZstdStream z(chunk);
      std::string got;
      size_t max_out = 0;
      for (size_t at = 0; at < compressed.size(); at += split) {
        size_t n = std::min(split, compressed.size() - at);
        z.feed(reinterpret_cast<const uint8_t*>(compressed.data() + at), n, [&](const uint8_t* p, size_t len) {
          got.append(reinterpret_cast<const char*>(p), len);
          max_out = std::max(max_out, len);
        });
      }
      ASSERT_EQ(got.size(), all.size()) << "chunk " << chunk << " split " << split;
      EXPECT_TRUE(got == all);
      EXPECT_LE(max_out, chunk ? chunk : size_t(256) << 10);
    }
  }
}

// Each flushed piece is available as soon as its compressed chunk is fed:
// a record is never held back waiting for the next COMPRESSED record.
TEST(ZstdStream, EachFlushedPieceIsCompleteAfterItsOwnChunk) {
  std::vector<std::string> pieces = {random_text(5000, 1), random_text(70000, 2), random_text(10, 3)};
  auto chunks = compress_flushed(pieces, 3);
  ZstdStream z(1024);
  for (size_t i = 0; i < pieces.size(); ++i) {
    std::string got;
    z.feed(reinterpret_cast<const uint8_t*>(chunks[i].data()), chunks[i].size(),
           [&](const uint8_t* p, size_t len) { got.append(reinterpret_cast<const char*>(p), len); });
    EXPECT_TRUE(got == pieces[i]) << i;
  }
}

// A bomb: 256 MiB of zeros in a few KiB. The output arrives in chunks of the
// configured size, so a consumer can stop it (the reader's budget throws from
// the callback) before more than one chunk exists, and the exception comes
// out of feed() unchanged.
TEST(ZstdStream, DecompressionBombIsStreamedInBoundedChunksAndCanBeStopped) {
  const size_t total = size_t(256) << 20;
  std::string zeros(size_t(1) << 20, '\0');
  std::vector<std::string> pieces(total / zeros.size(), zeros);
  std::string compressed;
  for (const auto& c : compress_flushed(pieces, 1)) compressed += c;
  ASSERT_LT(compressed.size(), size_t(64) << 10);  // a ratio of thousands
  struct Stop {};
  ZstdStream z(64 << 10);
  size_t seen = 0, max_out = 0;
  EXPECT_THROW(z.feed(reinterpret_cast<const uint8_t*>(compressed.data()), compressed.size(),
                      [&](const uint8_t*, size_t len) {
                        seen += len;
                        max_out = std::max(max_out, len);
                        if (seen > (size_t(4) << 20)) throw Stop();
                      }),
               Stop);
  EXPECT_LE(max_out, size_t(64) << 10);
  EXPECT_LE(seen, (size_t(4) << 20) + (64 << 10));
}

TEST(ZstdStream, CorruptFrameIsAFormatErrorNamingZstd) {
  auto chunks = compress_flushed({random_text(20000, 9)});
  // A wrong magic number.
  std::string bad_magic = chunks[0];
  bad_magic[0] ^= 0x55;
  {
    ZstdStream z;
    try {
      z.feed(reinterpret_cast<const uint8_t*>(bad_magic.data()), bad_magic.size(), [](const uint8_t*, size_t) {});
      FAIL() << "no error";
    } catch (const fg::perf_abi::FormatError& e) {
      EXPECT_NE(std::string(e.what()).find("zstd decompression failed"), std::string::npos) << e.what();
    }
  }
  // Garbage in the middle of the block data: either an error or different
  // bytes, never a crash; zstd detects a corrupted block header here.
  std::string bad_block = chunks[0];
  for (size_t i = 6; i < 20 && i < bad_block.size(); ++i) bad_block[i] = char(0xff);
  ZstdStream z;
  EXPECT_THROW(z.feed(reinterpret_cast<const uint8_t*>(bad_block.data()), bad_block.size(),
                      [](const uint8_t*, size_t) {}),
               fg::perf_abi::FormatError);
}

}  // namespace
