#include "diagnostics/atomic_output.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
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

}  // namespace

AtomicOutput::AtomicOutput(std::string path) : path_(std::move(path)) {
  if (path_ == "-") {
    is_stdout_ = true;
    file_ = stdout;
    return;
  }
  struct stat st {};
  if (::stat(path_.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    // A device, FIFO or the like (-o /dev/null, -o /dev/stdout, a named
    // pipe): renaming over it would replace the node, so write to it directly.
    file_ = std::fopen(path_.c_str(), "wb");
    if (!file_) throw UsageError(path_ + ": cannot open: " + std::strerror(errno));
    direct_ = true;
    return;
  }
  // Through a symlink, the file it points to is replaced, not the link.
  if (char* real = ::realpath(path_.c_str(), nullptr)) {
    target_ = real;
    std::free(real);
  } else {
    target_ = path_;
  }
  tmp_ = target_ + ".tmp." + std::to_string(getpid());
  // Tracked before it exists, so a signal at any point after creation removes it.
  install_cleanup_handlers();
  track_tmp(tmp_.c_str());
  file_ = std::fopen(tmp_.c_str(), "wb");
  if (!file_) {
    int e = errno;
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
