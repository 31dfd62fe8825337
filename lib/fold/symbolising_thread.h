// Runs a StackSymboliser on a thread of its own: the folding thread hands
// new raw stacks over in batches, each with a snapshot of its process's map
// list (so the process table may change meanwhile), and waits (drain) only
// when it must: before the kernel symbols change, before the raw-stack
// table forgets its keys, and before it reads the results.
// Owning threads: the folding thread calls every method; the symbolising
// thread (started by the constructor) owns the StackSymboliser until
// drain() or stop() returns.
#pragma once

#include <cstdint>
#include <vector>

#include "fold/stack_symboliser.h"
#include "fold/worker_queue.h"

namespace fg {

class SymbolisingThread {
 public:
  // The backlog only smooths bursts: the symbolising thread is the slower
  // one on busy recordings, so a longer one only held more jobs (64 K: 5 MB).
  static constexpr size_t kBatch = 128, kMaxBacklog = 8 * 1024;

  explicit SymbolisingThread(StackSymboliser& symboliser)
      : queue_(
            [&symboliser](const std::vector<Job>& jobs) {
              for (const Job& j : jobs) symboliser.symbolise(j.idx, j.key, j.pid, j.maps.view());
            },
            kMaxBacklog) {}

  // Raw stack idx (its key must not move until drained; the raw-stack
  // table's copy never does), to be symbolised with `proc`'s maps as they
  // are now (nullptr: no process).
  void add(uint32_t idx, const uint64_t* key, int32_t pid, const ProcessMaps* proc) {
    filling_.push_back(Job{idx, key, pid, proc ? MapsSnapshot(proc->maps) : MapsSnapshot()});
    if (filling_.size() >= kBatch) queue_.submit(filling_);
  }

  // Waits until every stack added so far is symbolised; rethrows the
  // symbolising thread's exception.
  void drain() {
    queue_.submit(filling_);
    queue_.drain();
  }
  void stop() { queue_.stop(); }

 private:
  struct Job {
    uint32_t idx;
    const uint64_t* key;
    int32_t pid;
    MapsSnapshot maps;  // taken by the folding thread
  };
  WorkerQueue<Job> queue_;
  std::vector<Job> filling_;
};

}  // namespace fg
