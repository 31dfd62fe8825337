// The training data pipeline, written like the classic MXNet/PyTorch MNIST
// iterators so data loading shows up in profiles under clear names:
// MNISTIter::next -> MNISTIter::decode_batch turns a shuffled slice of the
// uint8 IDX images into a float tensor batch (normalised) plus int64 labels.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <random>
#include <vector>

#include "idx_file.h"

namespace fg::trainers {

enum class PixelScaling {
  standardize,  // (x/255 - 0.1307) / 0.3081, the usual MNIST classifier input
  unit_range,   // x/255 in [0, 1], for Bernoulli (BCE) reconstruction targets
};

struct Batch {
  at::Tensor images;  // [n, rows*cols] float32
  at::Tensor labels;  // [n] int64
  int64_t size = 0;
};

class MNISTIter {
 public:
  // `split` must outlive the iterator. With shuffle, every reset() draws a
  // new order from the seeded generator.
  MNISTIter(const MnistSplit& split, int64_t batch_size, bool shuffle, uint64_t seed, PixelScaling scaling);

  // Starts a new epoch (reshuffling when enabled).
  void reset();
  // Fills `batch` with the next batch (the last one may be smaller); false
  // once the epoch is exhausted.
  bool next(Batch& batch);
  int64_t num_batches() const;
  size_t num_images() const { return split_.size(); }
  int64_t input_size() const { return int64_t(split_.images.pixels_per_image()); }

 private:
  void shuffle_order();
  void decode_batch(size_t begin, size_t count, Batch& batch);

  const MnistSplit& split_;
  int64_t batch_size_;
  bool shuffle_;
  std::mt19937_64 rng_;
  std::vector<uint32_t> order_;
  size_t cursor_ = 0;
  float scale_lut_[256];  // pixel value -> normalised float
};

}  // namespace fg::trainers
