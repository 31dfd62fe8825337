#include "folded/folded_writer.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>

namespace fg {

void append_count(std::string& out, double v) {
  char buf[64];
  if (v == 0) v = 0;  // no "-0"
  if (std::fabs(v) < 9007199254740992.0 && v == std::floor(v)) {
    auto r = std::to_chars(buf, buf + sizeof buf, static_cast<int64_t>(v));
    out.append(buf, r.ptr);
    return;
  }
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

std::string format_count(double v) {
  std::string s;
  append_count(s, v);
  return s;
}

std::string_view StackText::of(const std::vector<FrameId>& frames) {
  size_t k = 0, n = std::min(frames.size(), frames_.size());
  while (k < n && frames[k] == frames_[k]) ++k;
  frames_.resize(k);
  ends_.resize(k);
  text_.resize(k ? ends_[k - 1] : 0);
  for (size_t i = k; i < frames.size(); ++i) {
    if (i) text_ += ';';
    text_ += profile_.frame_name(frames[i]);
    ends_.push_back(text_.size());
    frames_.push_back(frames[i]);
  }
  return text_;
}

namespace {

template <class Flush>
void write_lines(const FoldedProfile& profile, std::string& buf, Flush&& flush) {
  StackText text(profile);
  profile.for_each_stack([&](const std::vector<FrameId>& frames, double weight) {
    buf += text.of(frames);
    buf += ' ';
    append_count(buf, weight);
    buf += '\n';
    flush(false);
  });
  flush(true);
}

}  // namespace

std::string units_header_line(const std::string& units) {
  std::string clean;
  for (char c : units)
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '/' || c == '_') clean += c;
  return std::string(kUnitsHeaderPrefix) + (clean.empty() ? "samples" : clean) + "\n";
}

void write_folded(const FoldedProfile& profile, std::string& out) {
  write_lines(profile, out, [](bool) {});
}

namespace {

// Writes the chunks handed to it, in order, on a thread of its own, so that
// writing a file (the page cache's copy: about 60 ms of a busy machine's
// 55 MB fold) overlaps the tree walk that makes the next chunk (about
// 27 ms) instead of following it. Owning threads: the caller's (submit,
// finish); the writing thread touches only the queue, under mutex_, and
// the output, which the caller does not write meanwhile.
class ChunkWriter {
 public:
  explicit ChunkWriter(AtomicOutput& out) : out_(out) {}
  ~ChunkWriter() { stop(); }  // after an error on the caller's side too
  ChunkWriter(const ChunkWriter&) = delete;
  ChunkWriter& operator=(const ChunkWriter&) = delete;

  bool started() const { return thread_.joinable() || inline_; }
  // Queues `chunk` (waiting while kQueued are); it comes back empty, with
  // the capacity of a written one. Rethrows the writing thread's error.
  // Where no thread can be started, writes it here.
  void submit(std::string& chunk) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!thread_.joinable() && !inline_) {
      try {
        thread_ = std::thread(&ChunkWriter::run, this);
      } catch (const std::system_error&) {
        inline_ = true;
      }
    }
    if (inline_) {
      out_.write(chunk);
      chunk.clear();
      return;
    }
    cv_.wait(lock, [&] { return queued_.size() < kQueued || error_; });
    if (error_) std::rethrow_exception(error_);
    queued_.push_back(std::move(chunk));
    chunk = std::string();
    if (!spare_.empty()) {
      chunk = std::move(spare_.back());
      spare_.pop_back();
    }
    lock.unlock();
    cv_.notify_all();
  }
  // Waits until every chunk is written; rethrows a write error.
  void finish() {
    stop();
    if (error_) std::rethrow_exception(error_);
  }

 private:
  static constexpr size_t kQueued = 2;

  void run() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      cv_.wait(lock, [&] { return !queued_.empty() || stopping_; });
      if (queued_.empty()) return;
      std::string chunk = std::move(queued_.front());
      queued_.pop_front();
      lock.unlock();
      try {
        out_.write(chunk);
      } catch (...) {
        lock.lock();
        error_ = std::current_exception();
        queued_.clear();
        cv_.notify_all();
        return;
      }
      chunk.clear();
      lock.lock();
      spare_.push_back(std::move(chunk));
      cv_.notify_all();
    }
  }
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

  AtomicOutput& out_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::string> queued_;  // under mutex_
  std::vector<std::string> spare_;  // under mutex_: written chunks, for their capacity
  bool stopping_ = false;           // under mutex_
  bool inline_ = false;             // no thread could be started: the caller writes
  std::exception_ptr error_;        // under mutex_ until the thread is joined
  std::thread thread_;
};

}  // namespace

// A megabyte at a time, each written by a thread of its own (ChunkWriter)
// while the next is made; an output under a megabyte is written here.
void write_folded(const FoldedProfile& profile, AtomicOutput& out) {
  constexpr size_t kChunk = size_t(1) << 20;
  std::string buf;
  buf.reserve(kChunk);
  ChunkWriter writer(out);
  write_lines(profile, buf, [&](bool last) {
    if (!last && buf.size() < kChunk) return;
    if (last && !writer.started()) {
      out.write(buf);
      buf.clear();
      return;
    }
    writer.submit(buf);
    if (buf.capacity() < kChunk) buf.reserve(kChunk);
  });
  writer.finish();
}

}  // namespace fg
