#include "folded/stack_record_queue.h"

#include <stdexcept>
#include <utility>

namespace fg {

StackRecordQueue::StackRecordQueue(Place place)
    : place_(std::move(place)),
      queue_(
          [this](const std::vector<Batch>& batches) {
            for (const Batch& b : batches) place_batch(b);
          },
          kMaxBacklog) {
  filling_.reserve(kBatchWords + kMaxStackDepth + 4);
}

// A record: the tag, the frame count, the weight's two halves, the frames.
void StackRecordQueue::add(uint32_t tag, const FrameId* ids, size_t count, uint64_t weight_bits) {
  filling_.push_back(tag);
  filling_.push_back(uint32_t(count));
  filling_.push_back(uint32_t(weight_bits));
  filling_.push_back(uint32_t(weight_bits >> 32));
  filling_.insert(filling_.end(), ids, ids + count);
  if (filling_.size() >= kBatchWords) submit();
}

void StackRecordQueue::finish() {
  submit();
  queue_.drain();
  queue_.stop();
}

void StackRecordQueue::submit() {
  if (filling_.empty()) return;
  queue_.submit_one(std::move(filling_));
  filling_ = Batch();
  filling_.reserve(kBatchWords + kMaxStackDepth + 4);
}

void StackRecordQueue::place_batch(const Batch& b) const {
  for (size_t i = 0; i + 4 <= b.size();) {
    const uint32_t count = b[i + 1];
    if (i + 4 + count > b.size()) throw std::logic_error("stack records: a record past its batch");
    place_(b[i], b.data() + i + 4, count, uint64_t(b[i + 2]) | (uint64_t(b[i + 3]) << 32));
    i += 4 + count;
  }
}

}  // namespace fg
