// Runs a StackSymboliser on a thread of its own: the folding thread hands
// new raw stacks over in batches and waits (drain) only when it must: before
// it changes a process whose maps queued stacks still read, before the
// kernel symbols change, and before it reads the results.
// Owning threads: the folding thread calls every method; the symbolising
// thread (started by the constructor) owns the StackSymboliser until
// drain() or stop() returns.
#pragma once

#include <cstdint>
#include <unordered_set>
#include <vector>

#include "fold/stack_symboliser.h"
#include "fold/worker_queue.h"

namespace fg {

class SymbolisingThread {
 public:
  static constexpr size_t kBatch = 128, kMaxBacklog = 64 * 1024;

  explicit SymbolisingThread(StackSymboliser& symboliser)
      : queue_(
            [&symboliser](const std::vector<Job>& jobs) {
              for (const Job& j : jobs) symboliser.symbolise(j.idx, j.key, j.pid, j.proc);
            },
            kMaxBacklog) {}

  // Raw stack idx (its key must not move until drained; the raw-stack
  // table's copy never does), to be symbolised with `proc` as it is now.
  void add(uint32_t idx, const uint64_t* key, int32_t pid, const ProcessMaps* proc) {
    filling_.push_back(Job{idx, key, pid, proc});
    if (proc && proc != last_proc_) {
      procs_.insert(proc);
      last_proc_ = proc;
    }
    if (filling_.size() >= kBatch) queue_.submit(filling_);
  }

  // Whether stacks handed over since the last drain read proc's maps.
  bool reads(const ProcessMaps* proc) const { return proc && procs_.count(proc) != 0; }

  // Waits until every stack added so far is symbolised; rethrows the
  // symbolising thread's exception.
  void drain() {
    queue_.submit(filling_);
    procs_.clear();
    last_proc_ = nullptr;
    queue_.drain();
  }
  void stop() { queue_.stop(); }

 private:
  struct Job {
    uint32_t idx;
    const uint64_t* key;
    int32_t pid;
    const ProcessMaps* proc;  // looked up by the folding thread
  };
  WorkerQueue<Job> queue_;
  std::vector<Job> filling_;
  std::unordered_set<const ProcessMaps*> procs_;  // processes whose maps queued stacks read
  const ProcessMaps* last_proc_ = nullptr;
};

}  // namespace fg
