#include "diagnostics/atomic_output.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "diagnostics/input_error.h"

namespace fg {

namespace {

// Temporary files of outputs not yet committed, so that SIGINT/SIGTERM/SIGHUP
// (Ctrl-C, a closed terminal) remove them instead of leaving "x.svg.tmp.PID"
// behind. The pointers are the AtomicOutput's own tmp_ strings, valid until
// its destructor has cleared the slot. SIGKILL cannot be caught: then the
// temporary file stays, but the requested name is still never half-written.
constexpr int kMaxLive = 64;
std::atomic<const char*> live_tmp[kMaxLive];

void remove_live_tmp_and_reraise(int sig) {
  for (auto& slot : live_tmp) {
    const char* p = slot.exchange(nullptr);
    if (p) unlink(p);
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

void install_cleanup_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction old {};
      if (sigaction(sig, nullptr, &old) != 0) continue;
      // Leave signals the program ignores or handles itself alone.
      if ((old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL) continue;
      struct sigaction sa {};
      sa.sa_handler = remove_live_tmp_and_reraise;
      sigemptyset(&sa.sa_mask);
      sigaction(sig, &sa, nullptr);
    }
  });
}

void track_tmp(const char* path) {
  for (auto& slot : live_tmp) {
    const char* expected = nullptr;
    if (slot.compare_exchange_strong(expected, path)) return;
  }
  // More than kMaxLive outputs open at once: this one is just not cleaned up on a signal.
}

void untrack_tmp(const char* path) {
  for (auto& slot : live_tmp) {
    const char* expected = path;
    if (slot.compare_exchange_strong(expected, nullptr)) return;
  }
}

OutputPolicy& policy_storage() {
  static OutputPolicy p;
  return p;
}

// Follows symlinks the way open(O_CREAT) would, including a dangling last
// link (its target is the file to create), so that the temporary file lives
// beside the real target and the link itself is kept.
std::string follow_links(const std::string& path) {
  std::string p = path;
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return p;
    std::string link(4096, '\0');
    ssize_t n = ::readlink(p.c_str(), link.data(), link.size());
    if (n <= 0 || size_t(n) >= link.size()) return p;
    link.resize(size_t(n));
    if (link[0] == '/') {
      p = link;
    } else {
      size_t slash = p.rfind('/');
      p = (slash == std::string::npos ? std::string() : p.substr(0, slash + 1)) + link;
    }
  }
  throw UsageError(path + ": too many levels of symbolic links");
}

mode_t current_umask() {
  // /proc keeps this thread-safe; umask() itself can only be read by setting it.
  if (FILE* f = std::fopen("/proc/self/status", "r")) {
    char line[256];
    unsigned m = 0;
    bool found = false;
    while (std::fgets(line, sizeof line, f))
      if (std::sscanf(line, "Umask: %o", &m) == 1) {
        found = true;
        break;
      }
    std::fclose(f);
    if (found) return static_cast<mode_t>(m);
  }
  mode_t m = ::umask(022);
  ::umask(m);
  return m;
}

std::string octal_mode(mode_t m) {
  char b[16];
  std::snprintf(b, sizeof b, "%04o", unsigned(m & 07777));
  return b;
}

}  // namespace

void set_output_policy(OutputPolicy policy) { policy_storage() = std::move(policy); }
const OutputPolicy& output_policy() { return policy_storage(); }

AtomicOutput::AtomicOutput(std::string path) : path_(std::move(path)) {
  if (path_ == "-") {
    is_stdout_ = true;
    file_ = stdout;
    return;
  }
  if (path_.empty()) throw UsageError("empty output file name");
  target_ = follow_links(path_);
  struct stat st {};
  bool exists = ::stat(target_.c_str(), &st) == 0;
  if (exists) {
    // Replacing an input would destroy the data being read (fgtool fold
    // rec.data -o rec.data); compare inodes so other spellings and hard
    // links are caught too.
    for (const auto& in : output_policy().inputs) {
      struct stat ist {};
      if (in == "-" || ::stat(in.c_str(), &ist) != 0) continue;
      if (ist.st_dev == st.st_dev && ist.st_ino == st.st_ino)
        throw UsageError(path_ + ": is also an input of this command (" + in +
                         "); refusing to overwrite it, choose another output name");
    }
  }
  if (exists && !S_ISREG(st.st_mode)) {
    // A device, FIFO or the like (-o /dev/null, -o /dev/stdout, a named
    // pipe): renaming over it would replace the node, so write to it directly.
    file_ = std::fopen(target_.c_str(), "wb");
    if (!file_) throw UsageError(path_ + ": cannot open: " + std::strerror(errno));
    direct_ = true;
    return;
  }
  mode_t mode = 0666 & ~current_umask();
  if (exists) {
    // rename() would replace a file its owner made read-only (or one we may
    // not write) without asking; cp and shell redirection refuse.
    bool read_only = (st.st_mode & 0222) == 0 || ::access(target_.c_str(), W_OK) != 0;
    if (read_only && !output_policy().force)
      throw UsageError(path_ + ": the output file is read-only (mode " + octal_mode(st.st_mode) +
                       "); give --force to replace it");
    mode = st.st_mode & 07777;  // the replacement keeps the file's permissions (0600 stays 0600)
  }
  // A random name created with O_EXCL: a file or symlink planted under a
  // predictable name cannot redirect the write.
  tmp_ = target_ + ".tmp.XXXXXX";
  // Tracked before it exists, so a signal at any point after creation removes it.
  install_cleanup_handlers();
  track_tmp(tmp_.c_str());
  int fd = ::mkostemp(tmp_.data(), O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    untrack_tmp(tmp_.c_str());
    throw UsageError(path_ + ": cannot create: " + std::strerror(e));
  }
  if (::fchmod(fd, mode) != 0) {
    int e = errno;
    ::close(fd);
    ::unlink(tmp_.c_str());
    untrack_tmp(tmp_.c_str());
    throw UsageError(path_ + ": cannot set the mode of the temporary file: " + std::strerror(e));
  }
  file_ = ::fdopen(fd, "wb");
  if (!file_) {
    int e = errno;
    ::close(fd);
    ::unlink(tmp_.c_str());
    untrack_tmp(tmp_.c_str());
    throw UsageError(path_ + ": cannot create: " + std::strerror(e));
  }
  // Its own buffer (stdio allocates it): two outputs open at once must not share one.
  std::setvbuf(file_, nullptr, _IOFBF, 1 << 16);
}

AtomicOutput::~AtomicOutput() {
  if (is_stdout_ || committed_) return;
  if (direct_) {
    if (file_) std::fclose(file_);
    return;
  }
  if (file_) std::fclose(file_);
  std::remove(tmp_.c_str());
  untrack_tmp(tmp_.c_str());
}

void AtomicOutput::write(std::string_view bytes) {
  if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size())
    throw UsageError(path_ + ": write failed: " + std::strerror(errno));
}

void AtomicOutput::commit() {
  if (committed_) return;
  if (is_stdout_) {
    if (std::fflush(stdout) != 0) throw UsageError("stdout: write failed: " + std::string(std::strerror(errno)));
    committed_ = true;
    return;
  }
  bool bad = std::fflush(file_) != 0 || std::ferror(file_);
  bad = (std::fclose(file_) != 0) || bad;
  file_ = nullptr;
  if (direct_) {
    committed_ = true;
    if (bad) throw UsageError(path_ + ": write failed: " + std::strerror(errno));
    return;
  }
  if (bad) {
    std::remove(tmp_.c_str());
    untrack_tmp(tmp_.c_str());
    committed_ = true;  // nothing left to clean up
    throw UsageError(path_ + ": write failed: " + std::strerror(errno));
  }
  if (std::rename(tmp_.c_str(), target_.c_str()) != 0) {
    int e = errno;
    std::remove(tmp_.c_str());
    untrack_tmp(tmp_.c_str());
    committed_ = true;
    throw UsageError(path_ + ": cannot rename into place: " + std::strerror(e));
  }
  untrack_tmp(tmp_.c_str());
  committed_ = true;
}

}  // namespace fg
