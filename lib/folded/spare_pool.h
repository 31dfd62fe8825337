// Buffers handed from a producer thread to a worker and back, reused instead
// of made afresh: write_folded's text chunks, collapse_in_parallel's chunks
// of perf script text. Owning threads: the producer calls take(); whichever
// thread is done with a buffer calls give_back().
#pragma once

#include <deque>
#include <mutex>
#include <vector>

namespace fg {

template <class T>
class SparePool {
 public:
  // A buffer given back earlier, else a new (value-initialised) one. Only
  // the producer calls this, so only it grows the storage; how many exist
  // is bounded by how many the producer lets be in flight.
  T* take() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!spare_.empty()) {
        T* t = spare_.back();
        spare_.pop_back();
        return t;
      }
    }
    return &storage_.emplace_back();
  }
  // Done with `t` (as it is: the caller empties it first if it should).
  void give_back(T* t) {
    std::lock_guard<std::mutex> lock(mutex_);
    spare_.push_back(t);
  }
  size_t made() const { return storage_.size(); }  // the producer's count, for tests

 private:
  std::mutex mutex_;
  std::deque<T> storage_;  // a deque: buffers stay where they are as it grows
  std::vector<T*> spare_;  // under mutex_
};

}  // namespace fg
