#include "pprof/perf_wall_clock.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstring>

namespace fg {

namespace {

constexpr int kClockDataFeature = 29;  // HEADER_CLOCK_DATA
constexpr int kClockRealtime = 0;      // CLOCK_REALTIME

bool read_at(int fd, uint64_t offset, void* out, size_t n) {
  size_t done = 0;
  while (done < n) {
    ssize_t r = ::pread(fd, static_cast<char*>(out) + done, n - done, off_t(offset + done));
    if (r <= 0) return false;
    done += size_t(r);
  }
  return true;
}

// CLOCK_DATA: {u32 version; u32 clockid; u64 wall_clock_ns; u64 clockid_time_ns}.
struct ClockData {
  uint64_t wall_ns = 0, clock_ns = 0;
};

std::optional<ClockData> read_clock_data(const std::string& path, const PerfFileInfo& file) {
  if (file.pipe_mode || !file.has_feature(kClockDataFeature)) return std::nullopt;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::optional<ClockData> out;
  // The file header: magic, size, attr_size, attrs {offset, size}, data
  // {offset, size}, event_types {offset, size}, features[4]. The feature
  // table follows the data section: one {offset, size} per feature bit set,
  // in bit order.
  uint8_t header[104];
  uint64_t magic = 0, data_offset = 0, data_size = 0;
  uint64_t features[4] = {};
  if (read_at(fd, 0, header, sizeof header)) {
    std::memcpy(&magic, header, 8);
    std::memcpy(&data_offset, header + 40, 8);
    std::memcpy(&data_size, header + 48, 8);
    std::memcpy(features, header + 72, 32);
  }
  if (magic == 0x32454c4946524550ull && data_offset + data_size >= data_offset &&
      ((features[0] >> kClockDataFeature) & 1)) {
    const uint64_t index = uint64_t(__builtin_popcountll(features[0] & ((uint64_t(1) << kClockDataFeature) - 1)));
    uint64_t section[2];
    uint8_t body[24];
    if (read_at(fd, data_offset + data_size + index * 16, section, sizeof section) && section[1] >= sizeof body &&
        read_at(fd, section[0], body, sizeof body)) {
      uint32_t version;
      std::memcpy(&version, body, 4);
      ClockData c;
      std::memcpy(&c.wall_ns, body + 8, 8);
      std::memcpy(&c.clock_ns, body + 16, 8);
      if (version >= 1 && c.wall_ns != 0) out = c;
    }
  }
  ::close(fd);
  return out;
}

}  // namespace

std::optional<int64_t> perf_sample_wall_time(const std::string& path, const PerfFileInfo& file, uint64_t sample_time) {
  // In unsigned arithmetic: a damaged section's values wrap instead of overflowing.
  if (auto c = read_clock_data(path, file)) return int64_t(c->wall_ns + (sample_time - c->clock_ns));
  bool realtime = !file.attrs.empty();
  for (const EventAttr& a : file.attrs) realtime &= a.use_clockid() && a.clockid == kClockRealtime;
  if (realtime && sample_time) return int64_t(sample_time);
  return std::nullopt;
}

}  // namespace fg
