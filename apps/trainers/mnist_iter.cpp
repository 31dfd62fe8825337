#include "mnist_iter.h"

// Per-operator headers instead of <ATen/ATen.h>: a quarter of the compile time.
#include <ATen/ops/empty.h>
#include <ATen/record_function.h>

#include <algorithm>
#include <numeric>

#include "trainer_options.h"

namespace fg::trainers {

MNISTIter::MNISTIter(const MnistSplit& split, int64_t batch_size, bool shuffle, uint64_t seed, PixelScaling scaling)
    : split_(split), batch_size_(batch_size), shuffle_(shuffle), rng_(seed), order_(split.size()) {
  std::iota(order_.begin(), order_.end(), 0u);
  for (int v = 0; v < 256; ++v) {
    float x = float(v) / 255.0f;
    scale_lut_[v] = scaling == PixelScaling::standardize ? (x - 0.1307f) / 0.3081f : x;
  }
  reset();
}

TRAINER_FRAME void MNISTIter::shuffle_order() { std::shuffle(order_.begin(), order_.end(), rng_); }

void MNISTIter::reset() {
  cursor_ = 0;
  if (shuffle_) shuffle_order();
}

int64_t MNISTIter::num_batches() const { return (int64_t(order_.size()) + batch_size_ - 1) / batch_size_; }

TRAINER_FRAME bool MNISTIter::next(Batch& batch) {
  if (cursor_ >= order_.size()) return false;
  RECORD_USER_SCOPE("MNISTIter::next");
  size_t count = std::min<size_t>(size_t(batch_size_), order_.size() - cursor_);
  decode_batch(cursor_, count, batch);
  cursor_ += count;
  return true;
}

// Gathers the images of order_[begin, begin+count) into a fresh float tensor.
// A fresh tensor per batch (as DataLoader collation does) rather than a reused
// buffer, because autograd may still hold the previous batch.
TRAINER_FRAME void MNISTIter::decode_batch(size_t begin, size_t count, Batch& batch) {
  const size_t pixels = split_.images.pixels_per_image();
  batch.images = at::empty({int64_t(count), int64_t(pixels)}, at::kFloat);
  batch.labels = at::empty({int64_t(count)}, at::kLong);
  float* out = batch.images.data_ptr<float>();
  int64_t* labels = batch.labels.data_ptr<int64_t>();
  const uint8_t* src = split_.images.pixels.data();
  for (size_t i = 0; i < count; ++i) {
    uint32_t index = order_[begin + i];
    const uint8_t* image = src + size_t(index) * pixels;
    float* row = out + i * pixels;
    for (size_t p = 0; p < pixels; ++p) row[p] = scale_lut_[image[p]];
    labels[i] = split_.labels.labels[index];
  }
  batch.size = int64_t(count);
}

}  // namespace fg::trainers
