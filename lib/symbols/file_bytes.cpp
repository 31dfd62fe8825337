#include "symbols/file_bytes.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace fg {

// The buffer is never zero-filled and a regular file's is allocated once:
// reading the build-id cache's 5 MB kallsyms copy into a doubling std::string
// (zero-filled at each resize, copied at each doubling, 16 MB of fresh pages in
// all) cost ~70 ms of CPU, 4% of a busy-machine fold.
bool FileBytes::read(const std::string& path, std::string* error) {
  size_ = 0;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (error) *error = "cannot open " + path + ": " + std::strerror(errno);
    return false;
  }
  // Read until EOF, not to the size: a file may grow meanwhile (a JIT appends
  // to its map). One byte over the size lets a regular file end without growing.
  struct stat st {};
  const bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  auto too_large = [&] {
    if (error) *error = path + ": larger than " + std::to_string(kMaxBytes >> 20) + " MB: not read";
    ::close(fd);
    size_ = 0;
    return false;
  };
  if (regular && uint64_t(st.st_size) > kMaxBytes) return too_large();
  // /proc files are regular with a size of 0: they start at 1 MB, as pipes do.
  reserve(regular && st.st_size > 0 ? size_t(st.st_size) + 1 : size_t(1) << 20);
  for (;;) {
    if (capacity_ == size_) {
      if (capacity_ >= kMaxBytes) return too_large();
      reserve(std::min(capacity_ * 2, kMaxBytes));
    }
    ssize_t n = ::read(fd, data_.get() + size_, capacity_ - size_);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      if (error) *error = "cannot read " + path + ": " + std::strerror(errno);
      ::close(fd);
      size_ = 0;
      return false;
    }
    if (n == 0) break;
    size_ += size_t(n);
  }
  ::close(fd);
  return true;
}

void FileBytes::reserve(size_t capacity) {
  if (capacity <= capacity_) return;
  std::unique_ptr<char[]> bigger(new char[capacity]);  // default-initialised: no zero fill
  if (size_) std::memcpy(bigger.get(), data_.get(), size_);
  data_ = std::move(bigger);
  capacity_ = capacity;
}

}  // namespace fg
