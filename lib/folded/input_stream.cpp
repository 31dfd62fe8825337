#include "folded/input_stream.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "diagnostics/input_error.h"

namespace fg {

struct InputStream::Impl {
  std::string name;
  int fd = -1;
  bool own_fd = false;
  bool started = false;
  bool is_gzip = false;
  bool eof = false;
  uint64_t raw_offset = 0;  // compressed bytes consumed, for messages
  // Raw bytes read ahead: the sniffed start of a plain file, or gzip input.
  std::vector<unsigned char> raw;
  size_t raw_pos = 0, raw_len = 0;
  z_stream zs{};
  bool z_init = false;
  bool z_ended = false;  // the last member ended cleanly

  ~Impl() {
    if (z_init) inflateEnd(&zs);
    if (own_fd && fd >= 0) ::close(fd);
  }

  size_t read_raw(unsigned char* dst, size_t cap) {
    for (;;) {
      ssize_t n = ::read(fd, dst, cap);
      if (n >= 0) return static_cast<size_t>(n);
      if (errno == EINTR) continue;
      throw InputError(name + ": read failed: " + std::strerror(errno));
    }
  }

  void fill_raw() {
    raw_pos = 0;
    raw_len = read_raw(raw.data(), raw.size());
  }

  void start() {
    started = true;
    raw.resize(size_t(1) << 20);
    // Sniff at least two bytes (a pipe may deliver one at a time).
    raw_len = 0;
    while (raw_len < 2) {
      size_t n = read_raw(raw.data() + raw_len, raw.size() - raw_len);
      if (n == 0) break;
      raw_len += n;
    }
    raw_pos = 0;
    is_gzip = raw_len >= 2 && raw[0] == 0x1f && raw[1] == 0x8b;
    if (is_gzip) {
      if (inflateInit2(&zs, 15 + 16) != Z_OK) throw InputError(name + ": cannot start gzip decoder");
      z_init = true;
    }
  }

  size_t read_plain(char* dst, size_t cap) {
    if (raw_pos < raw_len) {
      size_t n = std::min(cap, raw_len - raw_pos);
      std::memcpy(dst, raw.data() + raw_pos, n);
      raw_pos += n;
      return n;
    }
    return read_raw(reinterpret_cast<unsigned char*>(dst), cap);
  }

  size_t read_gzip(char* dst, size_t cap) {
    size_t produced = 0;
    while (produced == 0 && !eof) {
      if (raw_pos == raw_len) {
        fill_raw();
        if (raw_len == 0) {
          if (!z_ended) throw InputError::at_offset(name, raw_offset, "gzip: unexpected end of compressed data");
          eof = true;
          break;
        }
      }
      if (z_ended) {
        // Another gzip member follows (concatenated .gz files).
        inflateReset(&zs);
        z_ended = false;
      }
      zs.next_in = raw.data() + raw_pos;
      zs.avail_in = static_cast<uInt>(raw_len - raw_pos);
      zs.next_out = reinterpret_cast<Bytef*>(dst + produced);
      zs.avail_out = static_cast<uInt>(cap - produced);
      int rc = inflate(&zs, Z_NO_FLUSH);
      size_t used = (raw_len - raw_pos) - zs.avail_in;
      raw_pos += used;
      raw_offset += used;
      produced = cap - zs.avail_out;
      if (rc == Z_STREAM_END) {
        z_ended = true;
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        throw InputError::at_offset(name, raw_offset,
                                    std::string("gzip: ") + (zs.msg ? zs.msg : "corrupt compressed data"));
      }
    }
    return produced;
  }
};

InputStream::InputStream(const std::string& path) : impl_(std::make_unique<Impl>()) {
  if (path == "-") {
    impl_->name = "<stdin>";
    impl_->fd = 0;
  } else {
    impl_->name = path;
    impl_->fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (impl_->fd < 0) throw InputError(path + ": cannot open: " + std::strerror(errno));
    impl_->own_fd = true;
#ifdef POSIX_FADV_SEQUENTIAL
    posix_fadvise(impl_->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
  }
}

InputStream::~InputStream() = default;

size_t InputStream::read(char* dst, size_t capacity) {
  if (!impl_->started) impl_->start();
  if (capacity == 0) return 0;
  // zlib counts in uInt.
  if (capacity > (size_t(1) << 30)) capacity = size_t(1) << 30;
  return impl_->is_gzip ? impl_->read_gzip(dst, capacity) : impl_->read_plain(dst, capacity);
}

bool InputStream::gzip() const {
  if (!impl_->started) impl_->start();
  return impl_->is_gzip;
}

const std::string& InputStream::name() const { return impl_->name; }

}  // namespace fg
