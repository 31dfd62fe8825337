// Runs a StackSymboliser on a thread of its own: the folding thread hands
// new raw stacks over in batches, each with a view of its process's map
// list that a snapshot in the batch holds (so the process table may change
// meanwhile), and places the named
// stacks that come back into the tree (StackTreeBuilder) itself, so the two
// threads share the work. It waits (drain) only when it must: before the
// kernel symbols change, before the raw-stack table forgets its keys, and
// before it reads the results.
// Owning threads: the folding thread calls every method and owns the
// StackTreeBuilder; the symbolising thread (started by the constructor)
// owns the StackSymboliser until drain() or stop() returns.
#pragma once

#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

#include "fold/stack_symboliser.h"
#include "fold/stack_tree_builder.h"
#include "folded/worker_queue.h"

namespace fg {

class SymbolisingThread {
 public:
  // The backlog only smooths bursts: the symbolising thread is the slower
  // one on busy recordings, so a longer one only held more jobs (64 K: 5 MB).
  static constexpr size_t kBatch = 128, kMaxBacklog = 8 * 1024;

  SymbolisingThread(StackSymboliser& symboliser, StackTreeBuilder& tree)
      : tree_(tree),
        queue_([this, &symboliser](const std::vector<Job>& jobs) { symbolise(symboliser, jobs); }, kMaxBacklog) {}
  ~SymbolisingThread() { stop(); }

  // Raw stack idx (its key must not move until drained; the raw-stack
  // table's copy never does), to be symbolised with `proc`'s maps as they
  // are now (nullptr: no process). Places the stacks named meanwhile.
  void add(uint32_t idx, const uint64_t* key, int32_t pid, const ProcessMaps* proc) {
    Job job{idx, key, pid, MapsView(), MapsSnapshot()};
    if (proc) {
      job.maps = proc->view();
      if (!held_in_batch(proc->maps)) {
        job.keep = MapsSnapshot(proc->maps);
        holders_.push_back(filling_.size());
      }
    }
    filling_.push_back(std::move(job));
    if (filling_.size() < kBatch) return;
    submit();
    place_named();
  }

  // Waits until every stack added so far is symbolised and placed in the
  // tree; rethrows the symbolising thread's exception.
  void drain() {
    submit();
    queue_.drain();
    place_named();
  }
  void stop() { queue_.stop(); }

 private:
  struct Job {
    uint32_t idx;
    const uint64_t* key;
    int32_t pid;
    MapsView maps;      // the process's map list, taken by the folding thread
    MapsSnapshot keep;  // holds that list, for this and later jobs of the batch
  };

  // Whether a job of the batch being filled holds a snapshot of `maps` as
  // it is now. One snapshot per list and batch: each is an atomic reference
  // count the symbolising thread releases, and one per stack made that
  // cache line bounce between the cores (busy.data: 3% of the fold). A batch
  // is submitted whole and its jobs are released together, so the other
  // jobs' views stay valid while the holder lives.
  bool held_in_batch(const MapList& maps) const {
    for (size_t i = holders_.size(); i-- > 0;)
      if (filling_[holders_[i]].keep.holds(maps)) return true;
    return false;
  }
  void submit() {
    queue_.submit(filling_);
    holders_.clear();
  }

  // On the symbolising thread: one batch's records, handed back whole.
  void symbolise(StackSymboliser& symboliser, const std::vector<Job>& jobs) {
    std::vector<uint32_t> records;
    {
      std::lock_guard<std::mutex> lock(named_mutex_);
      if (!spare_.empty()) {
        records = std::move(spare_.back());
        spare_.pop_back();
      }
    }
    for (const Job& j : jobs) symboliser.symbolise(j.idx, j.key, j.pid, j.maps, records);
    std::lock_guard<std::mutex> lock(named_mutex_);
    named_.push_back(std::move(records));
  }

  // On the folding thread: every batch named so far into the tree, in order;
  // their buffers go back for reuse (no allocation once warm).
  void place_named() {
    {
      std::lock_guard<std::mutex> lock(named_mutex_);
      placing_.swap(named_);
    }
    if (placing_.empty()) return;
    for (std::vector<uint32_t>& records : placing_) {
      tree_.place(records);
      records.clear();
    }
    std::lock_guard<std::mutex> lock(named_mutex_);
    for (std::vector<uint32_t>& records : placing_) spare_.push_back(std::move(records));
    placing_.clear();
  }

  StackTreeBuilder& tree_;
  std::mutex named_mutex_;
  std::vector<std::vector<uint32_t>> named_;  // under named_mutex_: named, not yet placed, in order
  std::vector<std::vector<uint32_t>> spare_;  // under named_mutex_: emptied buffers
  std::vector<std::vector<uint32_t>> placing_;  // the folding thread's
  WorkerQueue<Job> queue_;  // last: its thread starts after the members above exist
  std::vector<Job> filling_;
  std::vector<size_t> holders_;  // indices in filling_ of the jobs with a snapshot
};

}  // namespace fg
