// Shared plumbing for the libFuzzer targets: fuzz bytes as a file the
// path-based readers can open (a memfd seen through /proc/self/fd) or as a
// pipe fed by a writer thread, and the rule that only fg::InputError /
// fg::UsageError are acceptable ways for a reader to reject an input.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>

namespace fg::fuzz {

// The bytes as a regular file (memfd); path() opens it like a file on disk.
class MemFile {
 public:
  MemFile(const uint8_t* data, size_t size) {
    fd_ = memfd_create("fgtool-fuzz", MFD_CLOEXEC);
    if (fd_ < 0) std::abort();
    size_t done = 0;
    while (done < size) {
      ssize_t w = ::write(fd_, data + done, size - done);
      if (w <= 0) std::abort();
      done += static_cast<size_t>(w);
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~MemFile() { ::close(fd_); }
  const std::string& path() const { return path_; }

 private:
  int fd_ = -1;
  std::string path_;
};

// The bytes arriving through a pipe (the reader sees a FIFO, as with
// `perf record -o - | fgtool fold -`). The writer stops when the reader side
// is closed, so a reader that gives up early does not block it.
class PipeFeed {
 public:
  PipeFeed(const uint8_t* data, size_t size) {
    signal(SIGPIPE, SIG_IGN);
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) std::abort();
    rd_ = fds[0];
    int wr = fds[1];
    writer_ = std::thread([wr, data, size] {
      size_t done = 0;
      while (done < size) {
        ssize_t w = ::write(wr, data + done, size - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break;  // EPIPE: the reader is done
        done += static_cast<size_t>(w);
      }
      ::close(wr);
    });
    path_ = "/proc/self/fd/" + std::to_string(rd_);
  }
  // Call after the reader is done with path().
  ~PipeFeed() {
    ::close(rd_);
    writer_.join();
  }
  const std::string& path() const { return path_; }

 private:
  int rd_ = -1;
  std::thread writer_;
  std::string path_;
};

}  // namespace fg::fuzz
