// IDX files (the MNIST container format): reading with full validation and
// writing. Torch-free, so the generator and the reader tests build without
// libtorch headers; every malformed file is rejected with fg::InputError
// naming the file and byte offset, never with an allocation sized by the header.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fg::trainers {

// uint8 images, row-major, count * rows * cols pixels (magic 0x00000803).
struct IdxImages {
  std::string path;  // where it was read from (for messages); empty when generated
  uint32_t count = 0, rows = 0, cols = 0;
  std::vector<uint8_t> pixels;
  size_t pixels_per_image() const { return size_t(rows) * cols; }
};

// uint8 labels, one per image (magic 0x00000801).
struct IdxLabels {
  std::string path;
  std::vector<uint8_t> labels;
};

// Reads IDX files. A path ending in ".gz" is decompressed first (zlib); byte
// offsets in errors then refer to the decompressed stream.
class IdxReader {
 public:
  static IdxImages read_images(const std::string& path);
  static IdxLabels read_labels(const std::string& path);
  // The whole (decompressed) file; throws InputError when unreadable.
  static std::vector<uint8_t> read_bytes(const std::string& path);
  // Parsing without touching the file system (path is only used in messages).
  static IdxImages parse_images(const std::string& path, std::vector<uint8_t> bytes);
  static IdxLabels parse_labels(const std::string& path, std::vector<uint8_t> bytes);
};

class IdxWriter {
 public:
  // Written atomically (temp name + rename); throws std::runtime_error on I/O failure.
  static void write_images(const std::string& path, const IdxImages& images);
  static void write_labels(const std::string& path, const IdxLabels& labels);
};

// One MNIST split (train or t10k) with images and labels checked to agree.
struct MnistSplit {
  IdxImages images;
  IdxLabels labels;
  size_t size() const { return images.count; }
};

// Loads DIR/<prefix>-images-idx3-ubyte and DIR/<prefix>-labels-idx1-ubyte
// (prefix "train" or "t10k"), falling back to the ".gz" names. Throws
// InputError when the files are missing, malformed, disagree in count, or
// hold a label >= num_classes.
MnistSplit load_mnist_split(const std::string& dir, const std::string& prefix, int num_classes = 10);

}  // namespace fg::trainers
