// A worker thread fed batches of jobs by one producer thread: the hand-over
// between the folding thread and the symbolising thread, between the
// folding thread and the DWARF unwind pool's helpers, between the folded
// reader and its tree builder, and between write_folded and a file.
// Owning threads: the producer calls submit/drain/stop; the worker thread
// (started by the constructor, joined by stop) runs `work` and nothing else.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <iterator>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace fg {

template <class Job>
class WorkerQueue {
 public:
  // Runs on the worker thread, on the jobs of one or more submits in
  // submission order. An exception is kept and rethrown by drain(); jobs
  // submitted after it are counted done without running.
  using Work = std::function<void(const std::vector<Job>&)>;

  // max_backlog: jobs submitted and not yet done before submit() waits, so
  // a fast producer cannot queue without end.
  WorkerQueue(Work work, size_t max_backlog) : work_(std::move(work)), max_backlog_(max_backlog ? max_backlog : 1) {
    thread_ = std::thread([this] { run(); });
  }
  ~WorkerQueue() { stop(); }
  WorkerQueue(const WorkerQueue&) = delete;
  WorkerQueue& operator=(const WorkerQueue&) = delete;

  // Hands `jobs` over (it is left empty); waits while the backlog is full.
  void submit(std::vector<Job>& jobs) {
    if (jobs.empty()) return;
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [&] { return submitted_ - done_ < max_backlog_ || stopping_; });
    submitted_ += jobs.size();
    if (ready_.empty()) ready_.swap(jobs);
    else ready_.insert(ready_.end(), std::make_move_iterator(jobs.begin()), std::make_move_iterator(jobs.end()));
    jobs.clear();
    cv_.notify_all();
  }
  void submit_one(Job job) {
    std::vector<Job> one{std::move(job)};
    submit(one);
  }

  // Waits until every job submitted so far is done; then rethrows the first
  // exception the work threw, if any (once).
  void drain() {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [&] { return done_ == submitted_; });
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }

  // Waits until the first `count` jobs ever submitted are done (later ones
  // may still run); then rethrows the first exception the work threw, as
  // drain() does.
  void wait_done(uint64_t count) {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [&] { return done_ >= count || done_ == submitted_; });
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }

  // Lets the worker finish what was submitted, then joins it. Idempotent;
  // exceptions stay unreported (call drain() first to see them).
  void stop() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
      cv_.notify_all();
    }
    thread_.join();
  }

  // Jobs submitted that the worker has not started yet (a worker may ask,
  // from `work`, whether more is coming at once).
  size_t waiting() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return ready_.size();
  }

  // Jobs submitted and not yet done (for tests and assertions).
  uint64_t backlog() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return submitted_ - done_;
  }

 private:
  void run() {
    std::vector<Job> batch;
    for (;;) {
      bool skip;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [&] { return !ready_.empty() || stopping_; });
        if (ready_.empty()) return;  // stopping, and nothing left
        batch.swap(ready_);
        skip = error_ != nullptr;
      }
      std::exception_ptr error;
      if (!skip) {
        try {
          work_(batch);
        } catch (...) {
          error = std::current_exception();
        }
      }
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (error && !error_) error_ = error;
        done_ += batch.size();
        cv_.notify_all();
      }
      batch.clear();
    }
  }

  Work work_;
  const size_t max_backlog_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<Job> ready_;                 // under mutex_
  uint64_t submitted_ = 0, done_ = 0;      // under mutex_
  bool stopping_ = false;                  // under mutex_
  std::exception_ptr error_;               // under mutex_
  std::thread thread_;
};

}  // namespace fg
