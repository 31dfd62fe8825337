#include "diagnostics/progress.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace fg {

Progress::Progress(std::string what, uint64_t total, bool enabled)
    : what_(std::move(what)), total_(total), enabled_(enabled),
      start_(std::chrono::steady_clock::now()), last_draw_(start_) {}

Progress::~Progress() {
  if (drawn_ && !finished_) std::fputs("\r\033[K", stderr);
}

bool Progress::default_enabled() {
  return isatty(STDERR_FILENO) && std::getenv("FGTOOL_NO_PROGRESS") == nullptr;
}

double Progress::elapsed_seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void Progress::maybe_draw(uint64_t done) {
  auto now = std::chrono::steady_clock::now();
  // Nothing for the first second: short runs stay quiet.
  if (now - start_ < std::chrono::seconds(1) || now - last_draw_ < std::chrono::milliseconds(200)) return;
  last_draw_ = now;
  drawn_ = true;
  double secs = elapsed_seconds();
  if (total_ > 0) {
    std::fprintf(stderr, "\r\033[K%s: %5.1f%%  %.1fs", what_.c_str(), 100.0 * double(done) / double(total_), secs);
  } else {
    std::fprintf(stderr, "\r\033[K%s: %llu  %.1fs", what_.c_str(), (unsigned long long)done, secs);
  }
  std::fflush(stderr);
}

void Progress::finish(const std::string& summary) {
  if (finished_) return;
  finished_ = true;
  if (drawn_) {
    std::fprintf(stderr, "\r\033[K%s: done in %.1fs%s%s\n", what_.c_str(), elapsed_seconds(),
                 summary.empty() ? "" : ", ", summary.c_str());
  }
}

}  // namespace fg
