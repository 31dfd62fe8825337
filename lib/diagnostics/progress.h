// Progress and elapsed time on stderr for anything that may take more than a
// few seconds. Silent when stderr is not a terminal unless forced, and never
// on the hot path: callers report every N units of work, and the reporter
// redraws at most a few times per second.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace fg {

class Progress {
 public:
  // total == 0 means unknown (only a counter and elapsed time are shown).
  Progress(std::string what, uint64_t total, bool enabled);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Cheap unless it is time to redraw.
  void update(uint64_t done) {
    if (enabled_ && ++calls_ % 64 == 0) maybe_draw(done);
  }
  // Clears the line and prints "what: done in X.Ys" once.
  void finish(const std::string& summary = "");
  double elapsed_seconds() const;

  // Whether progress should be shown by default: stderr is a terminal and
  // FGTOOL_NO_PROGRESS is unset.
  static bool default_enabled();

 private:
  void maybe_draw(uint64_t done);
  std::string what_;
  uint64_t total_;
  bool enabled_;
  bool drawn_ = false;
  bool finished_ = false;
  uint64_t calls_ = 0;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

}  // namespace fg
