// Stacks handed from the thread that decodes them (the folded-text and pprof
// readers) to a worker thread that places them in a profile's tree, as
// records in batches, in order. The decoder only interns names and the
// worker only walks and grows the tree: disjoint parts of a FoldedProfile,
// so the profile comes out the same as when placed inline.
// Owning threads: the decoding thread calls add and finish; the worker thread
// (a WorkerQueue's) runs `place` and nothing else.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "folded/folded_profile.h"
#include "folded/worker_queue.h"

namespace fg {

class StackRecordQueue {
 public:
  // One record, on the worker thread: the caller's tag (what the reader
  // needs besides the frames: which profile, how many frames are shared
  // with the stack before), the frame ids, and 64 bits of weight.
  using Place = std::function<void(uint32_t tag, const FrameId* ids, size_t count, uint64_t weight_bits)>;

  explicit StackRecordQueue(Place place);
  // Lets the worker finish what was submitted: `place` may use the caller's
  // state, so the owner declares this queue after that state.
  ~StackRecordQueue() { queue_.stop(); }
  StackRecordQueue(const StackRecordQueue&) = delete;
  StackRecordQueue& operator=(const StackRecordQueue&) = delete;

  void add(uint32_t tag, const FrameId* ids, size_t count, uint64_t weight_bits);
  // Waits until every record is placed; rethrows the worker's exception.
  void finish();

 private:
  using Batch = std::vector<uint32_t>;
  // 256 KB batches, at most 8 queued (2 MB).
  static constexpr size_t kBatchWords = 64 * 1024, kMaxBacklog = 8;
  void submit();
  void place_batch(const Batch& b) const;

  Place place_;
  Batch filling_;
  WorkerQueue<Batch> queue_;  // last: its thread starts after the members above exist
};

}  // namespace fg
