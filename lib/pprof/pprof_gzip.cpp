#include "pprof/pprof_gzip.h"

#include <libdeflate.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <exception>
#include <stdexcept>
#include <thread>

#include "diagnostics/input_error.h"

namespace fg {

bool is_gzip(std::string_view d) { return d.size() >= 2 && uint8_t(d[0]) == 0x1f && uint8_t(d[1]) == 0x8b; }

// ---- compressing ----

std::string gzip_member(std::string_view data, int level) {
  // libdeflate compresses a whole buffer at once: at level 1 it is about 1.8x
  // zlib's level 1 on profiles, and 3% smaller (docs/multi-node.md).
  std::unique_ptr<libdeflate_compressor, void (*)(libdeflate_compressor*)> c(
      libdeflate_alloc_compressor(std::clamp(level, 1, 12)), libdeflate_free_compressor);
  if (!c) throw std::runtime_error("libdeflate: cannot allocate a compressor");
  // The bound is more than the input: a malloc'd buffer is only faulted in
  // where written (a std::string would be zero-filled), and the result copied out.
  const size_t bound = libdeflate_gzip_compress_bound(c.get(), data.size());
  std::unique_ptr<char, void (*)(void*)> buf(static_cast<char*>(std::malloc(bound)), std::free);
  if (!buf) throw std::bad_alloc();
  size_t n = libdeflate_gzip_compress(c.get(), data.data(), data.size(), buf.get(), bound);
  if (n == 0) throw std::runtime_error("libdeflate: gzip compression did not fit its bound");
  return std::string(buf.get(), n);
}

std::string gzip_pieces(const std::vector<std::string_view>& pieces, int level) {
  constexpr size_t kRun = 8u << 20, kSmall = 1u << 20;
  // Runs of at most kRun bytes; small pieces (a profile's header, its
  // strings) are copied together into one run rather than each being a
  // member with its own header.
  std::vector<std::string_view> runs;
  std::deque<std::string> joined;
  std::string small;
  auto flush_small = [&] {
    if (small.empty()) return;
    joined.push_back(std::move(small));
    runs.push_back(joined.back());
    small.clear();
  };
  for (std::string_view p : pieces) {
    if (p.size() < kSmall) {
      small.append(p.data(), p.size());
      if (small.size() >= kSmall) flush_small();
      continue;
    }
    flush_small();
    for (size_t at = 0; at < p.size(); at += kRun) runs.push_back(p.substr(at, kRun));
  }
  flush_small();
  if (runs.empty()) runs.push_back({});  // an empty stream is still one member
  std::vector<std::string> out(runs.size());
  std::exception_ptr error;
  auto work = [&](size_t parity) {
    try {
      for (size_t i = parity; i < runs.size(); i += 2) out[i] = gzip_member(runs[i], level);
    } catch (...) {
      error = std::current_exception();
    }
  };
  if (runs.size() == 1) {
    work(0);
  } else {
    std::thread helper(work, size_t(1));
    work(0);
    helper.join();
  }
  if (error) std::rethrow_exception(error);
  if (out.size() == 1) return std::move(out[0]);
  size_t total = 0;
  for (const auto& o : out) total += o.size();
  std::string all;
  all.reserve(total);
  for (const auto& o : out) all += o;
  return all;
}

// ---- inflating ----

namespace {

// Where zlib finds a member damaged (libdeflate only says that it is): the
// member starting at `member` is inflated again, into a small buffer
// overwritten as it goes, to the first error.
[[noreturn]] void throw_damage(std::string_view in, size_t member, const std::string& name) {
  z_stream z{};
  if (inflateInit2(&z, 15 + 16) != Z_OK) throw InputError(name + ": zlib inflateInit2 failed");
  static thread_local char sink[1 << 16];
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data() + member));
  size_t in_left = in.size() - member;
  int rc = Z_OK;
  for (;;) {
    uInt chunk = uInt(std::min<size_t>(in_left, 1u << 30));
    z.avail_in = chunk;
    z.next_out = reinterpret_cast<Bytef*>(sink);
    z.avail_out = sizeof sink;
    rc = inflate(&z, Z_NO_FLUSH);
    in_left -= chunk - z.avail_in;
    if (rc == Z_STREAM_END || (rc != Z_OK && rc != Z_BUF_ERROR)) break;
    if (rc == Z_BUF_ERROR && in_left == 0 && z.avail_out != 0) break;
  }
  std::string msg = z.msg ? z.msg : "";
  inflateEnd(&z);
  if (rc == Z_BUF_ERROR || (rc == Z_OK && in_left == 0))
    throw InputError::at_offset(name, in.size(), "gzip stream is truncated");
  const uint64_t at = in.size() - in_left;
  throw InputError::at_offset(name, at, "gzip: " + (msg.empty() ? std::string("damaged member") : msg));
}

}  // namespace

InflatedBytes gunzip(std::string_view in, const std::string& name, uint64_t max_out) {
  InflatedBytes out;
  size_t cap = size_t(std::min<uint64_t>(max_out, uint64_t(in.size()) * 4 + 4096));
  if (in.size() >= 18) {
    // The trailer's ISIZE: the (last) member's size mod 2^32, exact for the
    // usual single member under 4 GiB; saves growing the buffer.
    uint32_t isize;
    std::memcpy(&isize, in.data() + in.size() - 4, 4);
    if (isize > cap && isize <= max_out) cap = isize;
  }
  out.data_ = static_cast<char*>(std::malloc(std::max<size_t>(cap, 1)));
  if (!out.data_) throw std::bad_alloc();
  std::unique_ptr<libdeflate_decompressor, void (*)(libdeflate_decompressor*)> d(libdeflate_alloc_decompressor(),
                                                                                libdeflate_free_decompressor);
  if (!d) throw std::bad_alloc();
  size_t pos = 0;
  while (pos < in.size()) {
    // Another member, or trailing bytes that are not one (ignored).
    if (pos > 0 && !is_gzip(in.substr(pos))) break;
    size_t used = 0, got = 0;
    libdeflate_result r = libdeflate_gzip_decompress_ex(d.get(), in.data() + pos, in.size() - pos,
                                                        out.data_ + out.size_, cap - out.size_, &used, &got);
    if (r == LIBDEFLATE_SUCCESS) {
      pos += used;
      out.size_ += got;
      if (used == 0) break;
      continue;
    }
    if (r != LIBDEFLATE_INSUFFICIENT_SPACE) throw_damage(in, pos, name);
    // Whole-buffer inflation: the member is inflated again into a larger buffer.
    if (cap >= max_out)
      throw InputError(name + ": decompresses to more than " + std::to_string(max_out >> 20) +
                       " MiB (over 200 times its size); refusing to read it");
    cap = size_t(std::min<uint64_t>(max_out, uint64_t(cap) * 2));
    char* grown = static_cast<char*>(std::realloc(out.data_, cap));  // large blocks: mremap, no copy
    if (!grown) throw std::bad_alloc();
    out.data_ = grown;
  }
  return out;
}

std::string gunzip_prefix(std::string_view in, uint64_t max_out) {
  z_stream z{};
  if (inflateInit2(&z, 15 + 16) != Z_OK) return {};
  std::string out(size_t(max_out), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  size_t in_left = in.size();
  size_t have = 0;
  while (have < out.size()) {
    uInt in_chunk = uInt(std::min<size_t>(in_left, 1u << 30));
    z.avail_in = in_chunk;
    z.next_out = reinterpret_cast<Bytef*>(out.data() + have);
    z.avail_out = uInt(out.size() - have);
    const uInt out_chunk = z.avail_out;
    int rc = inflate(&z, Z_NO_FLUSH);
    in_left -= in_chunk - z.avail_in;
    have += out_chunk - z.avail_out;
    if (rc == Z_STREAM_END) {
      if (in_left == 0 || !is_gzip(std::string_view(reinterpret_cast<const char*>(z.next_in), in_left))) break;
      inflateReset(&z);
      continue;
    }
    if (rc != Z_OK) break;  // damaged, or the end of the prefix (Z_BUF_ERROR)
  }
  inflateEnd(&z);
  out.resize(have);
  return out;
}

}  // namespace fg
