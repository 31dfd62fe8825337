// Unwinds DWARF samples (copies of the user stack) on several threads: the
// fold queues deep copies of samples between records that change the
// process table, unwind_batch() unwinds them in parallel while the table is
// frozen, and the fold then folds them in order, so the output does not
// depend on the thread count. The helper threads start once and are reused
// for every batch.
// Owning threads: the folding thread owns the pool and the queued samples;
// during unwind_batch() each helper owns its unwinder and its chunks' results.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "folded/growable_array.h"
#include "folded/worker_queue.h"
#include "perf/perf_records.h"
#include "unwind/dwarf_unwinder.h"
#include "unwind/process_table.h"

namespace fg {

class DwarfUnwindPool {
 public:
  // `unwinders`: how many unwind at once (the calling thread is one of
  // them); 1 = no helper threads.
  DwarfUnwindPool(const ProcessTable& table, const DwarfUnwinderOptions& options,
                  const DwarfUnwinder::ElfPathResolver& elf_path, unsigned unwinders);
  ~DwarfUnwindPool();
  DwarfUnwindPool(const DwarfUnwindPool&) = delete;
  DwarfUnwindPool& operator=(const DwarfUnwindPool&) = delete;

  // One sample now, on the calling thread's unwinder (samples not queued).
  UnwindOutcome unwind_now(const Sample& s, std::vector<UnwindFrame>& frames) { return unwinders_[0]->unwind(s, frames); }

  // Queues a deep copy of s (to be unwound if `unwind`); true when the batch
  // is full and should be unwound and folded now.
  bool add(const Sample& s, bool unwind);
  size_t size() const { return queue_.size(); }
  bool empty() const { return queue_.empty(); }
  // Unwinds the queued samples (chunks of kChunk spread over the unwinders);
  // returns when all are done. An exception on any thread is rethrown here.
  void unwind_batch();
  // After unwind_batch: queued sample i (its pointers into the pool's copy),
  // and its frames (nullptr when it was queued without unwinding).
  const Sample& sample(size_t i) const { return queue_[i].sample; }
  const std::vector<UnwindFrame>* frames(size_t i) const { return queue_[i].unwind ? &frames_[i] : nullptr; }
  UnwindOutcome outcome(size_t i) const { return queue_[i].outcome; }
  void clear();

  // Drops pid's Dwfl in every unwinder (after its exit: a busy machine's
  // hundreds of short-lived processes each kept one, 1.3 GB on a 15 s
  // system-wide DWARF recording). Only between batches (nothing queued).
  void forget_process(int32_t pid);

  UnwindStats stats() const;  // summed over the unwinders
  const std::string& last_error() const { return unwinders_[0]->last_error(); }

  static constexpr size_t kMaxSamples = 512, kMaxBytes = 16u << 20, kChunk = 16;

 private:
  struct QueuedSample {
    Sample sample;
    size_t callchain, raw, regs, stack;  // byte offsets into bytes_
    bool unwind;
    UnwindOutcome outcome = UnwindOutcome::complete;
  };
  size_t copy_bytes(const void* data, size_t size);
  void unwind_share(size_t which);

  std::vector<std::unique_ptr<DwarfUnwinder>> unwinders_;  // [0]: the calling thread's
  std::vector<std::unique_ptr<WorkerQueue<size_t>>> helpers_;  // helper i runs unwinders_[i + 1]
  std::vector<QueuedSample> queue_;
  // 8-byte aligned copies of the samples' arrays, grown without zeroing (a
  // std::vector's resize wrote every byte twice: 6% of a DWARF fold's CPU).
  GrowableArray<uint64_t> bytes_;
  std::vector<std::vector<UnwindFrame>> frames_;
};

}  // namespace fg
