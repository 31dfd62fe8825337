#include "idx_file.h"

#include <zlib.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sys/stat.h>

#include "diagnostics/atomic_output.h"
#include "diagnostics/input_error.h"

namespace fg::trainers {
namespace {

constexpr uint32_t kImagesMagic = 0x00000803;  // uint8 data, 3 dimensions
constexpr uint32_t kLabelsMagic = 0x00000801;  // uint8 data, 1 dimension
// A gzip member never expands beyond ~1032x; anything larger is a bomb.
constexpr uint64_t kMaxDecompressedBytes = uint64_t(4) << 30;

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

uint32_t be32(const std::vector<uint8_t>& b, size_t at) {
  return (uint32_t(b[at]) << 24) | (uint32_t(b[at + 1]) << 16) | (uint32_t(b[at + 2]) << 8) | uint32_t(b[at + 3]);
}

void put_be32(std::string& out, uint32_t v) {
  out.push_back(char(v >> 24));
  out.push_back(char(v >> 16));
  out.push_back(char(v >> 8));
  out.push_back(char(v));
}

std::string hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

std::vector<uint8_t> read_plain(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open: " + std::strerror(errno));
  in.seekg(0, std::ios::end);
  std::streamoff size = in.tellg();
  if (size < 0) throw InputError(path + ": cannot determine file size");
  in.seekg(0);
  std::vector<uint8_t> bytes(static_cast<size_t>(size));
  if (size > 0 && !in.read(reinterpret_cast<char*>(bytes.data()), size))
    throw InputError::at_offset(path, uint64_t(in.gcount()), "read failed");
  return bytes;
}

std::vector<uint8_t> read_gzip(const std::string& path) {
  gzFile gz = gzopen(path.c_str(), "rb");
  if (!gz) throw InputError(path + ": cannot open: " + std::strerror(errno));
  std::vector<uint8_t> bytes;
  uint8_t chunk[1 << 16];
  for (;;) {
    int n = gzread(gz, chunk, sizeof chunk);
    if (n < 0) {
      int code = 0;
      std::string msg = gzerror(gz, &code);
      gzclose(gz);
      throw InputError::at_offset(path, bytes.size(), "corrupt gzip data (decompressed offset): " + msg);
    }
    if (n == 0) break;
    bytes.insert(bytes.end(), chunk, chunk + n);
    if (bytes.size() > kMaxDecompressedBytes) {
      gzclose(gz);
      throw InputError::at_offset(path, bytes.size(), "decompresses to more than 4 GiB; not an MNIST file");
    }
  }
  gzclose(gz);
  return bytes;
}

// Checks the 4-byte magic and that the header itself is present.
void check_header(const std::string& path, const std::vector<uint8_t>& b, uint32_t magic, size_t header_bytes,
                  const char* kind) {
  if (b.size() < 4) throw InputError::at_offset(path, b.size(), std::string("truncated IDX ") + kind + " header: file has only " + std::to_string(b.size()) + " bytes");
  uint32_t got = be32(b, 0);
  if (got != magic)
    throw InputError::at_offset(path, 0, std::string("wrong magic ") + hex32(got) + " for IDX " + kind + " (expected " + hex32(magic) + ")");
  if (b.size() < header_bytes)
    throw InputError::at_offset(path, b.size(), std::string("truncated IDX ") + kind + " header: needs " + std::to_string(header_bytes) + " bytes, file has " + std::to_string(b.size()));
}

}  // namespace

std::vector<uint8_t> IdxReader::read_bytes(const std::string& path) {
  return ends_with(path, ".gz") ? read_gzip(path) : read_plain(path);
}

IdxImages IdxReader::parse_images(const std::string& path, std::vector<uint8_t> bytes) {
  constexpr size_t kHeader = 16;
  check_header(path, bytes, kImagesMagic, kHeader, "images");
  IdxImages out;
  out.path = path;
  out.count = be32(bytes, 4);
  out.rows = be32(bytes, 8);
  out.cols = be32(bytes, 12);
  if (out.rows == 0 || out.cols == 0 || out.rows > 4096 || out.cols > 4096)
    throw InputError::at_offset(path, 8, "implausible image size " + std::to_string(out.rows) + "x" + std::to_string(out.cols));
  // 64-bit arithmetic: count < 2^32 and rows*cols <= 2^24, so no overflow.
  uint64_t want = uint64_t(out.count) * out.rows * out.cols;
  uint64_t have = bytes.size() - kHeader;
  if (want != have)
    throw InputError::at_offset(path, want > have ? bytes.size() : kHeader + want,
                                "header claims " + std::to_string(out.count) + " images of " + std::to_string(out.rows) + "x" +
                                    std::to_string(out.cols) + " (" + std::to_string(want) + " bytes) but " + std::to_string(have) +
                                    " bytes follow the header" + (want > have ? " (truncated)" : " (trailing data)"));
  bytes.erase(bytes.begin(), bytes.begin() + kHeader);
  out.pixels = std::move(bytes);
  return out;
}

IdxLabels IdxReader::parse_labels(const std::string& path, std::vector<uint8_t> bytes) {
  constexpr size_t kHeader = 8;
  check_header(path, bytes, kLabelsMagic, kHeader, "labels");
  uint64_t want = be32(bytes, 4);
  uint64_t have = bytes.size() - kHeader;
  if (want != have)
    throw InputError::at_offset(path, want > have ? bytes.size() : kHeader + want,
                                "header claims " + std::to_string(want) + " labels but " + std::to_string(have) +
                                    " bytes follow the header" + (want > have ? " (truncated)" : " (trailing data)"));
  IdxLabels out;
  out.path = path;
  bytes.erase(bytes.begin(), bytes.begin() + kHeader);
  out.labels = std::move(bytes);
  return out;
}

IdxImages IdxReader::read_images(const std::string& path) { return parse_images(path, read_bytes(path)); }
IdxLabels IdxReader::read_labels(const std::string& path) { return parse_labels(path, read_bytes(path)); }

void IdxWriter::write_images(const std::string& path, const IdxImages& images) {
  if (images.pixels.size() != uint64_t(images.count) * images.rows * images.cols)
    throw std::invalid_argument("IdxWriter::write_images: pixel count does not match dimensions");
  std::string header;
  put_be32(header, kImagesMagic);
  put_be32(header, images.count);
  put_be32(header, images.rows);
  put_be32(header, images.cols);
  AtomicOutput out(path);
  out.write(header);
  out.write(std::string_view(reinterpret_cast<const char*>(images.pixels.data()), images.pixels.size()));
  out.commit();
}

void IdxWriter::write_labels(const std::string& path, const IdxLabels& labels) {
  std::string header;
  put_be32(header, kLabelsMagic);
  put_be32(header, uint32_t(labels.labels.size()));
  AtomicOutput out(path);
  out.write(header);
  out.write(std::string_view(reinterpret_cast<const char*>(labels.labels.data()), labels.labels.size()));
  out.commit();
}

MnistSplit load_mnist_split(const std::string& dir, const std::string& prefix, int num_classes) {
  auto pick = [&](const std::string& stem) {
    std::string plain = dir + "/" + stem;
    struct stat st;
    if (::stat(plain.c_str(), &st) == 0) return plain;
    if (::stat((plain + ".gz").c_str(), &st) == 0) return plain + ".gz";
    throw InputError(plain + ": not found (nor " + stem + ".gz); generate data with mnist_synth --out " + dir +
                     " or download MNIST there");
  };
  MnistSplit split;
  split.images = IdxReader::read_images(pick(prefix + "-images-idx3-ubyte"));
  split.labels = IdxReader::read_labels(pick(prefix + "-labels-idx1-ubyte"));
  if (split.images.count != split.labels.labels.size())
    throw InputError(split.labels.path + ": " + std::to_string(split.labels.labels.size()) + " labels but " +
                     split.images.path + " has " + std::to_string(split.images.count) + " images");
  if (split.images.count == 0) throw InputError(split.images.path + ": holds no images");
  for (size_t i = 0; i < split.labels.labels.size(); ++i)
    if (split.labels.labels[i] >= num_classes)
      throw InputError::at_offset(split.labels.path, 8 + i,
                                  "label " + std::to_string(split.labels.labels[i]) + " is not below " + std::to_string(num_classes));
  return split;
}

}  // namespace fg::trainers
