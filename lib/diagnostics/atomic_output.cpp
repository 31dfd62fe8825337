#include "diagnostics/atomic_output.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "diagnostics/input_error.h"

namespace fg {

AtomicOutput::AtomicOutput(std::string path) : path_(std::move(path)) {
  if (path_ == "-") {
    is_stdout_ = true;
    file_ = stdout;
    return;
  }
  tmp_ = path_ + ".tmp." + std::to_string(getpid());
  file_ = std::fopen(tmp_.c_str(), "wb");
  if (!file_) throw UsageError(path_ + ": cannot create: " + std::strerror(errno));
  static thread_local char buffer[1 << 16];
  std::setvbuf(file_, buffer, _IOFBF, sizeof buffer);
}

AtomicOutput::~AtomicOutput() {
  if (is_stdout_ || committed_) return;
  if (file_) std::fclose(file_);
  std::remove(tmp_.c_str());
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
  if (bad) {
    std::remove(tmp_.c_str());
    throw UsageError(path_ + ": write failed: " + std::strerror(errno));
  }
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    int e = errno;
    std::remove(tmp_.c_str());
    throw UsageError(path_ + ": cannot rename into place: " + std::strerror(e));
  }
  committed_ = true;
}

}  // namespace fg
