// Timestamp ordering of records with perf's FINISHED_ROUND rule: at round k,
// everything up to the largest time seen before round k-1 ended is delivered,
// sorted by (time, file order). Entries point into the mmap'ed file; records
// that are not stable there (pipe input, decompressed bytes) are copied into
// an 8-aligned arena that is compacted after each flush, so memory stays
// bounded by about two rounds. Internal to lib/perf.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "folded/prefetch.h"

namespace fg::perf_order {

struct QueuedRecord {
  uint64_t time;
  uint64_t seq;               // arrival order: ties keep file order
  const uint8_t* data;        // the whole record, 8-byte aligned
  uint64_t file_offset;
  uint32_t size;
  uint32_t attr_index;
  uint32_t type;
  bool owned;                 // data lives in the arena
};

class RecordOrderQueue {
 public:
  // Arena block size; records are at most 64 KiB, so every block has it.
  static constexpr size_t kArenaBlockBytes = size_t(1) << 20;

  // Queues a record. If copy or data is not 8-aligned, the bytes are copied.
  void push(uint64_t time, const uint8_t* data, uint32_t size, uint64_t file_offset, uint32_t attr_index,
            uint32_t type, bool copy);
  // Queues a record whose size bytes the caller writes into the returned
  // arena space (8-aligned; valid until the next push or flush), e.g. a
  // decoded record in a movable form.
  uint8_t* push_owned(uint64_t time, uint32_t size, uint64_t file_offset, uint32_t attr_index, uint32_t type);

  // FINISHED_ROUND: delivers everything with time <= the max time seen when
  // the previous round ended.
  template <typename Deliver>
  void finish_round(Deliver&& deliver) {
    flush(flush_limit_, deliver);
    flush_limit_ = max_time_;
  }
  // End of input: delivers everything.
  template <typename Deliver>
  void flush_all(Deliver&& deliver) {
    flush(UINT64_MAX, deliver);
  }
  // Delivers everything with time <= limit (inputs merged by the caller,
  // which knows that nothing earlier is still to come).
  template <typename Deliver>
  void flush_until(uint64_t limit, Deliver&& deliver) {
    flush(limit, deliver);
  }
  // The time of the record queued last, and how many were ever queued.
  uint64_t last_push_time() const { return last_push_time_; }
  uint64_t pushed() const { return seq_; }

  // The same two steps, but the records are appended to out instead of
  // delivered (a reading thread hands them to the delivering one). Arena
  // blocks that may hold them move to retired: the caller frees them once
  // the records are delivered.
  using ArenaBlocks = std::vector<std::unique_ptr<uint64_t[]>>;
  void finish_round_into(std::vector<QueuedRecord>& out, ArenaBlocks& retired) {
    auto append = [&out](const QueuedRecord& r) { out.push_back(r); };
    flush(flush_limit_, append, &retired);
    flush_limit_ = max_time_;
  }
  void flush_all_into(std::vector<QueuedRecord>& out, ArenaBlocks& retired) {
    auto append = [&out](const QueuedRecord& r) { out.push_back(r); };
    flush(UINT64_MAX, append, &retired);
  }

  size_t size() const { return queue_.size(); }
  // Bytes held for queued records: arena blocks and both record vectors, by
  // capacity (what is really allocated). The reader compares it with its
  // memory budget after each push (a subtraction and a compare, no walk).
  uint64_t footprint() const {
    return arena_bytes_allocated_ + (queue_.capacity() + scratch_.capacity()) * sizeof(QueuedRecord);
  }
  // Smallest file offset still referenced by a queued record that points into
  // the file (not the arena); fallback when there is none.
  uint64_t min_file_offset(uint64_t fallback) const;
  // The same among records whose bytes lie in [begin, end): one of several
  // mapped files.
  uint64_t min_file_offset_in(const uint8_t* begin, const uint8_t* end, uint64_t fallback) const;
  size_t max_size() const { return max_size_; }
  uint64_t unordered() const { return unordered_; }

 private:
  template <typename Deliver>
  void flush(uint64_t limit, Deliver& deliver, ArenaBlocks* retired = nullptr) {
    if (queue_.empty()) return;
    sort();
    size_t n = 0;
    // On an exception from deliver (std::bad_alloc included) the delivered
    // records are only dropped, in a destructor that cannot allocate: an
    // allocation failing there would be a second exception in flight, i.e.
    // std::terminate. The arena is then left as it is (after a failure
    // nothing is delivered from this queue any more). Compaction, which
    // allocates, runs only on the normal path, where it may throw.
    struct DropOnThrow {
      RecordOrderQueue& q;
      size_t& n;
      bool done = false;
      ~DropOnThrow() {
        if (!done) q.drop_front(n);
      }
    } guard{*this, n};
    while (n < queue_.size() && queue_[n].time <= limit) {
      if (n + kPrefetchAhead < queue_.size()) prefetch_record(queue_[n + kPrefetchAhead]);
      const QueuedRecord& r = queue_[n];
      if (r.time > last_delivered_) last_delivered_ = r.time;
      ++n;
      deliver(r);
    }
    guard.done = true;
    erase_front(n, retired);
  }
  void sort();
  // Records leave in time order, which is not file order: each one's bytes
  // were last read a round ago, when it was queued, and its sample's
  // callchain was a cache miss for the folding thread at delivery (a fifth
  // of building its stack key). The lines of a record a few ahead are
  // prefetched, so that those misses overlap.
  static constexpr size_t kPrefetchAhead = 8;
  static void prefetch_record(const QueuedRecord& r) {
    const uint32_t lines = std::min<uint32_t>(r.size, 512);
    for (uint32_t at = 0; at < lines; at += 64) prefetch_for_read(r.data + at);
  }
  // Drops the first n records and compacts the arena; with retired, the old
  // blocks are moved there instead of being freed or reused.
  void erase_front(size_t n, ArenaBlocks* retired = nullptr);
  // Drops the first n records without touching the arena; never allocates.
  void drop_front(size_t n) noexcept {
    queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(n));
  }
  uint8_t* arena_alloc(size_t size);

  std::vector<QueuedRecord> queue_;
  std::vector<QueuedRecord> scratch_;  // merge buffer of sort()
  std::vector<size_t> runs_, next_runs_;  // start of each sorted run, then the end
  static constexpr size_t kMaxRuns = 64;
  uint64_t seq_ = 0;
  uint64_t max_time_ = 0, flush_limit_ = 0, last_delivered_ = 0, last_push_time_ = 0;
  size_t max_size_ = 0;
  uint64_t unordered_ = 0;
  // Arena: blocks of u64 so copies are 8-aligned.
  struct Block {
    std::unique_ptr<uint64_t[]> words;
    size_t capacity = 0, used = 0;  // bytes
  };
  std::vector<Block> blocks_;
  size_t arena_bytes_live_ = 0;
  size_t arena_bytes_allocated_ = 0;  // capacity of blocks_
};

}  // namespace fg::perf_order
