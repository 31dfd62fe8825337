#include "perf/record_order.h"

#include <algorithm>
#include <cstring>

namespace fg::perf_order {

uint8_t* RecordOrderQueue::arena_alloc(size_t size) {
  size_t need = (size + 7) & ~size_t(7);
  if (blocks_.empty() || blocks_.back().capacity - blocks_.back().used < need) {
    Block b;
    b.capacity = std::max(kArenaBlockBytes, need);
    b.words.reset(new uint64_t[b.capacity / 8]);
    blocks_.push_back(std::move(b));
    arena_bytes_allocated_ += blocks_.back().capacity;
  }
  Block& b = blocks_.back();
  uint8_t* p = reinterpret_cast<uint8_t*>(b.words.get()) + b.used;
  b.used += need;
  arena_bytes_live_ += need;
  return p;
}

void RecordOrderQueue::push(uint64_t time, const uint8_t* data, uint32_t size, uint64_t file_offset,
                            uint32_t attr_index, uint32_t type, bool copy) {
  bool owned = copy || (reinterpret_cast<uintptr_t>(data) % 8 != 0);
  if (owned) {
    uint8_t* p = arena_alloc(size);
    std::memcpy(p, data, size);
    data = p;
  }
  if (time < last_delivered_) ++unordered_;
  if (time > max_time_) max_time_ = time;
  last_push_time_ = time;
  queue_.push_back(QueuedRecord{time, seq_++, data, file_offset, size, attr_index, type, owned});
  if (queue_.size() > max_size_) max_size_ = queue_.size();
}

uint8_t* RecordOrderQueue::push_owned(uint64_t time, uint32_t size, uint64_t file_offset, uint32_t attr_index,
                                      uint32_t type) {
  uint8_t* p = arena_alloc(size);
  if (time < last_delivered_) ++unordered_;
  if (time > max_time_) max_time_ = time;
  last_push_time_ = time;
  queue_.push_back(QueuedRecord{time, seq_++, p, file_offset, size, attr_index, type, true});
  if (queue_.size() > max_size_) max_size_ = queue_.size();
  return p;
}

uint64_t RecordOrderQueue::min_file_offset(uint64_t fallback) const {
  uint64_t m = fallback;
  for (const auto& r : queue_)
    if (!r.owned && r.file_offset < m) m = r.file_offset;
  return m;
}

uint64_t RecordOrderQueue::min_file_offset_in(const uint8_t* begin, const uint8_t* end, uint64_t fallback) const {
  uint64_t m = fallback;
  for (const auto& r : queue_)
    if (!r.owned && r.data >= begin && r.data < end && r.file_offset < m) m = r.file_offset;
  return m;
}

void RecordOrderQueue::sort() {
  // Order by (time, seq). A round is a few runs already sorted by time (perf
  // drains each CPU's ring buffer in turn), so merge those runs instead of
  // sorting from scratch; fall back to a full sort for input without such
  // runs. The vector is kept so that equal times appear in seq order within
  // it (what was left from the last flush precedes everything pushed since),
  // hence a stable merge by time alone yields (time, seq) order.
  auto by_time = [](const QueuedRecord& a, const QueuedRecord& b) { return a.time < b.time; };
  runs_.clear();
  runs_.push_back(0);
  for (size_t i = 1; i < queue_.size(); ++i)
    if (queue_[i].time < queue_[i - 1].time) {
      runs_.push_back(i);
      if (runs_.size() > kMaxRuns) {
        std::stable_sort(queue_.begin(), queue_.end(), by_time);
        return;
      }
    }
  if (runs_.size() == 1) return;
  runs_.push_back(queue_.size());
  // Bottom-up: merge neighbouring runs pairwise, ping-ponging with scratch_.
  scratch_.resize(queue_.size());
  while (runs_.size() > 2) {
    size_t out = 0;
    std::vector<size_t>& next = next_runs_;
    next.assign(1, 0);
    for (size_t r = 0; r + 1 < runs_.size(); r += 2) {
      auto a = queue_.begin() + std::ptrdiff_t(runs_[r]);
      auto b = queue_.begin() + std::ptrdiff_t(runs_[r + 1]);
      if (r + 2 < runs_.size()) {
        auto c = queue_.begin() + std::ptrdiff_t(runs_[r + 2]);
        std::merge(a, b, b, c, scratch_.begin() + std::ptrdiff_t(out), by_time);
        out = runs_[r + 2];
      } else {
        std::copy(a, b, scratch_.begin() + std::ptrdiff_t(out));
        out = runs_[r + 1];
      }
      next.push_back(out);
    }
    queue_.swap(scratch_);
    runs_.swap(next);
  }
}

void RecordOrderQueue::erase_front(size_t n, ArenaBlocks* retired) {
  if (n == 0) return;
  queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(n));
  if (blocks_.empty()) return;
  if (!retired) {
    size_t live = 0;
    for (const auto& r : queue_)
      if (r.owned) live += (r.size + 7) & ~size_t(7);
    if (live == 0) {
      // Keep one block for reuse.
      blocks_.resize(1);
      blocks_[0].used = 0;
      arena_bytes_live_ = 0;
      arena_bytes_allocated_ = blocks_[0].capacity;
      return;
    }
  }
  // Compact the arena: move the still-queued owned records into fresh blocks.
  // With retired, taken records may live in any old block: hand them all over
  // (the caller frees them after delivery) instead of freeing them here.
  std::vector<Block> old;
  old.swap(blocks_);
  arena_bytes_live_ = 0;
  arena_bytes_allocated_ = 0;
  for (auto& r : queue_) {
    if (!r.owned) continue;
    uint8_t* p = arena_alloc(r.size);
    std::memcpy(p, r.data, r.size);
    r.data = p;
  }
  if (retired)
    for (Block& b : old) retired->push_back(std::move(b.words));
}

}  // namespace fg::perf_order
