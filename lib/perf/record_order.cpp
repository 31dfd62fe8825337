#include "perf/record_order.h"

#include <algorithm>
#include <cstring>

namespace fg::perf_order {

namespace {
constexpr size_t kBlockBytes = 1 << 20;
}

uint8_t* RecordOrderQueue::arena_alloc(size_t size) {
  size_t need = (size + 7) & ~size_t(7);
  if (blocks_.empty() || blocks_.back().capacity - blocks_.back().used < need) {
    Block b;
    b.capacity = std::max(kBlockBytes, need);
    b.words.reset(new uint64_t[b.capacity / 8]);
    blocks_.push_back(std::move(b));
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
  queue_.push_back(QueuedRecord{time, seq_++, data, file_offset, size, attr_index, type, owned});
  if (queue_.size() > max_size_) max_size_ = queue_.size();
}

uint64_t RecordOrderQueue::min_file_offset(uint64_t fallback) const {
  uint64_t m = fallback;
  for (const auto& r : queue_)
    if (!r.owned && r.file_offset < m) m = r.file_offset;
  return m;
}

void RecordOrderQueue::sort() {
  // Entries usually arrive nearly sorted per CPU; seq makes the order total (stable).
  std::sort(queue_.begin(), queue_.end(), [](const QueuedRecord& a, const QueuedRecord& b) {
    return a.time != b.time ? a.time < b.time : a.seq < b.seq;
  });
}

void RecordOrderQueue::erase_front(size_t n) {
  if (n == 0) return;
  queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(n));
  if (blocks_.empty()) return;
  // Compact the arena: move the still-queued owned records into fresh blocks.
  size_t live = 0;
  for (const auto& r : queue_)
    if (r.owned) live += (r.size + 7) & ~size_t(7);
  if (live == 0) {
    // Keep one block for reuse.
    blocks_.resize(1);
    blocks_[0].used = 0;
    arena_bytes_live_ = 0;
    return;
  }
  std::vector<Block> old;
  old.swap(blocks_);
  arena_bytes_live_ = 0;
  for (auto& r : queue_) {
    if (!r.owned) continue;
    uint8_t* p = arena_alloc(r.size);
    std::memcpy(p, r.data, r.size);
    r.data = p;
  }
}

}  // namespace fg::perf_order
