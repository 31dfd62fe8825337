// Runs a StackSymboliser on a thread of its own: the folding thread hands
// new raw stacks over in batches, each with a view of its process's map
// list that a snapshot in the batch holds (so the process table may change
// meanwhile). The named stacks that come back are placed into the tree
// (StackTreeBuilder) by whichever thread has time: the symbolising thread
// when few stacks wait for it, the folding thread when named ones pile up,
// one at a time and in order. That thread also tells the fold's observer of
// them. The folding thread waits (drain) only when it must: before the kernel symbols
// change and before it reads the results; before a raw-stack table forgets
// its keys it drains too, or with two tables waits for that table's stacks
// only (wait_for).
// Owning threads: the folding thread calls every method; the symbolising
// thread (started by the constructor) owns the StackSymboliser until
// drain() or stop() returns; the StackTreeBuilder belongs to the holder of
// place_mutex_ during the fold (wait_for's caller holds it while its
// function runs) and to the folding thread after a drain.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

#include "fold/known_stacks.h"
#include "fold/stack_symboliser.h"
#include "fold/stack_tree_builder.h"
#include "folded/worker_queue.h"

namespace fg {

class SymbolisingThread {
 public:
  // The backlog only smooths bursts: the symbolising thread is the slower
  // one on busy recordings, so a longer one only held more jobs (64 K: 5 MB).
  static constexpr size_t kBatch = 128, kMaxBacklog = 8 * 1024;
  // Who places named batches in the tree. The symbolising thread places
  // after each batch while at most kPlacesUnder batches wait to be named;
  // the folding thread only once kFolderPlacesAt named batches wait (the
  // symbolising thread has fallen behind). When the folding thread placed
  // whatever was named at every hand-over and the symbolising thread only
  // when nothing waited, the folding thread placed three stacks in five and
  // was the busier one while the other slept a tenth of the time
  // (busyp1.data); this way, with the two raw-stack tables that spare the
  // drains (raw_stack_index.h), the fold is 8-15% faster (bench/README.md).
  // Named batches waiting hold their records: at most kFolderPlacesAt.
  // With an observer (a pprof export) the symbolising thread is the busier
  // one, and the observer is told on the placing thread: there it places
  // only when nothing waits for it and the folding thread at every
  // hand-over (these thresholds made busyp1.data's export 0.6 s slower).
  static constexpr size_t kPlacesUnder = 16, kFolderPlacesAt = 32;

  // observer: told of each stack as it is placed (nullptr: none).
  // known_slots: the bound of a KnownStacks (0: none; not with an observer
  // that does not take known stacks).
  SymbolisingThread(StackSymboliser& symboliser, StackTreeBuilder& tree, FoldObserver* observer = nullptr,
                    size_t known_slots = 0)
      : tree_(tree),
        observer_(observer),
        places_under_(observer ? 0 : kPlacesUnder),
        folder_places_at_(observer ? 0 : kFolderPlacesAt),
        known_{known_slots && (!observer || observer->takes_known_stacks()) ? std::make_unique<KnownStacks>(known_slots)
                                                                              : nullptr},
        queue_([this, &symboliser](const std::vector<Job>& jobs) { symbolise(symboliser, jobs); }, kMaxBacklog) {}
  ~SymbolisingThread() { stop(); }

  // Raw stack idx (its key must not move until drained; the raw-stack
  // table's copy never does), to be symbolised with `proc`'s maps as they
  // are now (nullptr: no process). Places the stacks named meanwhile.
  void add(uint32_t idx, const uint64_t* key, int32_t pid, const ProcessMaps* proc, const StackFingerprint& fp = {}) {
    // Built in place: a Job assembled on the stack and moved in was 3% of
    // the fold (busy3.data), in the copy.
    ++added_;
    Job& job = filling_.emplace_back();
    job.idx = idx;
    job.key = key;
    job.pid = pid;
    job.fp = fp;
    if (proc) {
      job.maps = proc->view();
      if (!held_in_batch(proc->maps)) {
        job.keep = MapsSnapshot(proc->maps);
        holders_.push_back(filling_.size() - 1);
      }
    }
    if (filling_.size() < kBatch) return;
    submit();
    if (named_batches_.load(std::memory_order_relaxed) >= folder_places_at_) place_named(false);
  }

  // Waits until every stack added so far is symbolised and placed in the
  // tree; rethrows the symbolising thread's exception.
  void drain() {
    submit();
    queue_.drain();
    place_named(true);
  }
  // Waits until the first `stacks` stacks added are symbolised and in the
  // tree, then runs `with_tree` while no other stack is placed (the
  // StackTreeBuilder is the caller's until it returns); later stacks may
  // still be queued and named meanwhile. For a raw-stack table's stacks
  // before it is forgotten, while the other table's go on.
  template <class Fn>
  void wait_for(uint64_t stacks, Fn&& with_tree) {
    if (stacks > added_ - filling_.size()) submit();
    queue_.wait_done(stacks);
    std::lock_guard<std::mutex> placer(place_mutex_);
    place_locked();
    with_tree();
  }
  // Stacks added so far.
  uint64_t stacks_added() const { return added_; }
  void stop() { queue_.stop(); }

  // Stacks placed in the tree, and how many of them the symbolising thread
  // placed itself (the rest were the folding thread's): how the tree walk
  // was shared. Call after drain() or stop().
  uint64_t stacks_placed() const { return placed_; }
  uint64_t stacks_placed_by_symbolising_thread() const { return placed_by_worker_; }
  // Of them, how many took their node from KnownStacks (not named again).
  uint64_t known_stacks() const { return known_.hits; }

 private:
  struct Job {
    uint32_t idx = 0;
    const uint64_t* key = nullptr;
    StackFingerprint fp;
    int32_t pid = 0;
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

  // What one batch of jobs became: the records, and with KnownStacks the
  // fingerprint and raw index of each stack named (not known), then, once
  // placed, where each ended (filled under place_mutex_).
  struct Batch {
    NamedStacks named;
    std::vector<StackFingerprint> fingerprints;
    std::vector<uint32_t> indices;
    std::vector<uint32_t> serials;  // with an observer: its index of each
    std::vector<NodeId> nodes;
  };

  // On the symbolising thread: one batch's records, handed back whole.
  void symbolise(StackSymboliser& symboliser, const std::vector<Job>& jobs) {
    Batch batch;
    {
      std::lock_guard<std::mutex> lock(named_mutex_);
      if (!spare_.empty()) {
        batch = std::move(spare_.back());
        spare_.pop_back();
      }
    }
    NamedStacks& named = batch.named;
    remember_placed(batch);
    if (!known_.table) {
      for (const Job& j : jobs) symboliser.symbolise(j.idx, j.key, j.pid, j.maps, named);
    } else {
      // Each look-up's slot is prefetched a few jobs ahead: prefetched for a
      // whole batch first, most were evicted again by the naming in between.
      constexpr size_t kAhead = 4;
      for (size_t i = 0; i < kAhead && i < jobs.size(); ++i) known_.table->prefetch(jobs[i].fp);
      uint64_t hits = 0;
      for (size_t i = 0; i < jobs.size(); ++i) {
        const Job& j = jobs[i];
        if (i + kAhead < jobs.size()) known_.table->prefetch(jobs[i + kAhead].fp);
        uint32_t same_as = 0;
        if (const NodeId node = known_.table->find(j.fp, &same_as)) {
          append_known(named, j.idx, node);
          if (observer_) {
            NamedStacks::ObservedStack known{};
            known.index = symboliser.observer_index(j.idx);
            known.same_as = same_as;
            named.stacks.push_back(known);
          }
          ++hits;
          continue;
        }
        symboliser.symbolise(j.idx, j.key, j.pid, j.maps, named);
        batch.fingerprints.push_back(j.fp);
        batch.indices.push_back(j.idx);
        if (observer_) batch.serials.push_back(symboliser.observer_index(j.idx));
      }
      keep_known_or_not(jobs.size(), hits);
    }
    {
      std::lock_guard<std::mutex> lock(named_mutex_);
      named_.push_back(std::move(batch));
      named_batches_.store(named_.size(), std::memory_order_relaxed);
    }
    // Few stacks waiting: this thread places what it named (the folding
    // thread, the busier one on most recordings, need not).
    if (queue_.waiting() <= places_under_ * kBatch) placed_by_worker_ += place_named(false);
  }

  // Every batch named so far into the tree, in order (one placer at a time,
  // each taking the oldest batches); their buffers go back for reuse (no
  // allocation once warm). wait: block while the other thread places;
  // otherwise leave the batches to it. Returns how many stacks it placed.
  size_t place_named(bool wait) {
    std::unique_lock<std::mutex> placer(place_mutex_, std::defer_lock);
    if (wait) placer.lock();
    else if (!placer.try_lock()) return 0;
    return place_locked();
  }
  // place_named's work, with place_mutex_ held.
  size_t place_locked() {
    // After a failure (the observer's limits, a bug) nothing more is placed:
    // what follows would go in out of order. The error ends the fold.
    if (place_failed_) return 0;
    {
      std::lock_guard<std::mutex> lock(named_mutex_);
      placing_.swap(named_);
      named_batches_.store(0, std::memory_order_relaxed);
    }
    if (placing_.empty()) return 0;
    size_t stacks = 0;
    try {
      for (Batch& batch : placing_) {
        stacks += tree_.place(batch.named, observer_);
        batch.named.clear();
        // Where the named stacks ended, for KnownStacks (remember_placed);
        // now, as their raw indices are taken again once a table is forgotten.
        for (uint32_t idx : batch.indices) batch.nodes.push_back(tree_.node_of(idx));
      }
    } catch (...) {
      place_failed_ = true;
      throw;
    }
    placed_ += stacks;
    std::lock_guard<std::mutex> lock(named_mutex_);
    for (Batch& batch : placing_) spare_.push_back(std::move(batch));
    placing_.clear();
    return stacks;
  }

  // On the symbolising thread, the only one that touches KnownStacks: the
  // stacks of a placed batch, whose buffers come back for reuse, are
  // remembered with their nodes.
  void remember_placed(Batch& batch) {
    if (known_.table && batch.nodes.size() == batch.fingerprints.size()) {
      known_.table->reserve_for(known_.table->size() + batch.nodes.size());  // no doubling after the prefetches
      for (const StackFingerprint& fp : batch.fingerprints) known_.table->prefetch(fp);
      for (size_t i = 0; i < batch.nodes.size(); ++i)
        known_.table->remember(batch.fingerprints[i], batch.nodes[i], batch.serials.empty() ? 0 : batch.serials[i]);
    }
    batch.fingerprints.clear();
    batch.indices.clear();
    batch.serials.clear();
    batch.nodes.clear();
  }
  // KnownStacks pays where stacks come back: each look-up costs a cache
  // miss, each hit saves naming and placing a stack, about ten times that.
  // busyp2.data: a third of the new stacks known, the fold 5-10% faster;
  // busy7.data (a new browser per screenshot, most stacks never seen
  // again): 10%, and the look-ups cost more than they saved (8% slower,
  // measured while the counts still shared a cache line with add()'s).
  // Past the first kJudgeAfter look-ups, a window of
  // kJudgeWindow with under one hit in kMinHitsPer ends them for the fold
  // (same output either way) and frees the table. The first window hits
  // less (the tables have not been forgotten yet): busyp1/busyp4.data
  // 15-16%, then 25-27%; busy7/busy8.data 8%, then 9-10%. So the second
  // window decides (judged from the fifth, busy8.data's fold was 1% slower).
  static constexpr uint64_t kJudgeAfter = 128 * 1024, kJudgeWindow = 64 * 1024, kMinHitsPer = 6;
  void keep_known_or_not(size_t lookups, uint64_t hits) {
    known_.hits += hits;
    known_.lookups += lookups;
    known_.window_hits += hits;
    known_.window_lookups += lookups;
    if (known_.window_lookups < kJudgeWindow) return;
    if (known_.lookups >= kJudgeAfter && known_.window_hits * kMinHitsPer < known_.window_lookups) known_.table.reset();
    known_.window_lookups = known_.window_hits = 0;
  }
  // A stack whose node KnownStacks gave: a record with no frames, which
  // StackTreeBuilder takes as "ends at node".
  static void append_known(NamedStacks& named, uint32_t idx, NodeId node) {
    uint32_t* w = named.records.extend(SymbolisedStack::kWords);
    w[SymbolisedStack::kIdx] = idx;
    w[SymbolisedStack::kRootFrame] = node;
    w[SymbolisedStack::kMemoSlot] = SymbolisedStack::kKnownNode;
    w[SymbolisedStack::kReused] = w[SymbolisedStack::kMemoNew] = w[SymbolisedStack::kAddresses] = 0;
  }

  StackTreeBuilder& tree_;
  FoldObserver* const observer_;  // called by the placing thread
  const size_t places_under_, folder_places_at_;  // kPlacesUnder, kFolderPlacesAt, or 0 with an observer
  std::mutex named_mutex_;
  // The symbolising thread's (symbolise, remember_placed); `hits` is read
  // after drain(). A cache line of its own: the folding thread's add()
  // writes the members near it, and a count written per known stack beside
  // them made add() 3 times slower (the line bounced between the cores).
  struct alignas(64) Known {
    std::unique_ptr<KnownStacks> table;
    uint64_t hits = 0, lookups = 0, window_hits = 0, window_lookups = 0;
  };
  Known known_;
  std::vector<Batch> named_;  // under named_mutex_: named, not yet placed, in order
  std::atomic<size_t> named_batches_{0};  // named_.size(), read without the mutex by add()
  std::vector<Batch> spare_;  // under named_mutex_: emptied buffers (placed stacks' nodes still to remember)
  std::mutex place_mutex_;  // held while placing: tree_, observer_ and placing_ are its holder's
  std::vector<Batch> placing_;
  uint64_t placed_ = 0;            // under place_mutex_
  bool place_failed_ = false;      // under place_mutex_
  uint64_t placed_by_worker_ = 0;  // the symbolising thread's; read after drain()
  WorkerQueue<Job> queue_;  // last: its thread starts after the members above exist
  std::vector<Job> filling_;
  uint64_t added_ = 0;            // stacks added (the jobs submitted, then filling_)
  std::vector<size_t> holders_;  // indices in filling_ of the jobs with a snapshot
};

}  // namespace fg
