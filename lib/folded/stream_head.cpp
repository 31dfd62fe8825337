#include "folded/stream_head.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace fg {

namespace {

// The descriptor a path names, or -1: /dev/fd/N, /proc/self/fd/N, /dev/stdin.
int descriptor_of(const std::string& path) {
  if (path == "/dev/stdin") return 0;
  for (const char* prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    const std::string p(prefix);
    if (path.compare(0, p.size(), p) != 0 || path.size() == p.size() || path.size() > p.size() + 9) continue;
    int fd = 0;
    for (size_t i = p.size(); i < path.size(); ++i) {
      if (path[i] < '0' || path[i] > '9') return -1;
      fd = fd * 10 + (path[i] - '0');
    }
    return fd;
  }
  return -1;
}

bool is_stream(mode_t mode) { return S_ISFIFO(mode) || S_ISCHR(mode) || S_ISSOCK(mode); }

bool write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= size_t(w);
  }
  return true;
}

// Heads already taken, by the pipe that replaced the stream (its device and
// inode, not the path: a descriptor number is reused once closed): a second
// peek must not read the new pipe.
std::mutex heads_mutex;
std::map<std::pair<dev_t, ino_t>, std::string>& taken_heads() {
  static std::map<std::pair<dev_t, ino_t>, std::string> heads;
  return heads;
}

}  // namespace

std::optional<std::string> stream_head(const std::string& path, size_t max) {
  const int fd = descriptor_of(path);
  if (fd < 0) return std::nullopt;
  std::lock_guard<std::mutex> lock(heads_mutex);
  struct stat st;
  if (fstat(fd, &st) != 0 || !is_stream(st.st_mode)) return std::nullopt;
  if (auto it = taken_heads().find({st.st_dev, st.st_ino}); it != taken_heads().end())
    return it->second.substr(0, max);
  // The original stream moves to a descriptor of ours; a new pipe takes fd.
  const int source = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  int fds[2];
  if (source < 0) return std::nullopt;
  if (pipe2(fds, O_CLOEXEC) != 0) {
    ::close(source);
    return std::nullopt;
  }
  std::string head(max, '\0');
  size_t have = 0;
  while (have < head.size()) {
    ssize_t n = ::read(source, head.data() + have, head.size() - have);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    have += size_t(n);
  }
  head.resize(have);
  if (dup2(fds[0], fd) < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    ::close(source);
    return std::nullopt;  // leaves the consumed head: the reader then says what it found
  }
  struct stat replaced;
  const bool known = fstat(fds[0], &replaced) == 0;
  ::close(fds[0]);
  // The copy runs until the stream ends. If nobody reads the rest (an error
  // ended the command first) it waits on a full pipe until the process exits:
  // fd stays open, so it never writes into a pipe without a reader.
  std::thread([head, source, out = fds[1]]() {
    bool ok = write_all(out, head.data(), head.size());
    std::vector<char> buf(1 << 16);
    while (ok) {
      ssize_t n = ::read(source, buf.data(), buf.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      ok = write_all(out, buf.data(), size_t(n));
    }
    ::close(out);
    ::close(source);
  }).detach();
  if (known) taken_heads()[{replaced.st_dev, replaced.st_ino}] = head;
  return head;
}

bool is_stream_path(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && is_stream(st.st_mode);
}

bool is_unpeekable_stream(const std::string& path) {
  if (descriptor_of(path) >= 0) return false;
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && is_stream(st.st_mode);
}

}  // namespace fg
