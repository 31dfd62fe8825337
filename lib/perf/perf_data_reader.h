// Native reader of perf.data (file mode and `perf record -o -` pipe mode):
// header, attrs, feature sections, then every record decoded and delivered to
// a RecordHandler in timestamp order (FINISHED_ROUND rounds), with zstd (-z).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "perf/perf_records.h"

namespace fg {

struct PerfFileInfo {
  bool pipe_mode = false;
  std::string hostname, os_release, perf_version, arch, cpu_desc, cpu_id;
  uint32_t nr_cpus_avail = 0, nr_cpus_online = 0;
  uint64_t total_mem_kb = 0;
  std::vector<std::string> cmdline;
  std::vector<EventAttr> attrs;
  struct BuildIdEntry {
    int32_t pid = -1;
    uint16_t cpumode = 0;
    std::string build_id;  // raw bytes
    std::string filename;
  };
  std::vector<BuildIdEntry> build_ids;
  std::string tracing_data;  // the raw TRACING_DATA blob (parse with TracingData)
  uint64_t tracing_data_offset = 0;  // where the blob starts in the input (for error offsets)
  bool has_sample_time = false;  // SAMPLE_TIME feature present
  // From SAMPLE_TIME; without it (pipe mode, killed recorder) filled by read()
  // from the samples seen.
  uint64_t first_sample_time = 0, last_sample_time = 0;
  bool compressed = false;   // COMPRESSED feature or COMPRESSED records seen
  uint32_t comp_version = 0, comp_type = 0, comp_level = 0, comp_ratio = 0, comp_mmap_len = 0;
  uint64_t file_size = 0;  // a directory: its 'data' file and every data.N together
  // `perf record --threads` writes a directory: 'data' (header, attrs,
  // features, the records perf synthesised) and one data.N per recording
  // thread. Their paths, in the order read; empty for a single file.
  std::vector<std::string> dir_files;
  uint64_t data_offset = 0, data_size = 0;  // file mode; data_size is what is read (to EOF if killed)
  std::array<uint64_t, 4> features{};       // file-mode feature bitmap / features seen in a pipe
  bool has_feature(int bit) const { return bit >= 0 && bit < 256 && ((features[bit / 64] >> (bit % 64)) & 1); }
};

// The memory a read may hold for what it buffers (records waiting for their
// FINISHED_ROUND, attrs' ids, process maps in the fold stage), and how much
// zstd may inflate: bounded by the input's size so that a small hostile file
// cannot claim gigabytes (docs/robustness.md, "Memory budget").
struct ReadBudget {
  static constexpr uint64_t kMiB = uint64_t(1) << 20;
  static constexpr uint64_t kFloor = 256 * kMiB;         // at least this much ...
  static constexpr uint64_t kPerInputByte = 16;          // ... else 16 x the input ...
  static constexpr uint64_t kCap = 16 * 1024 * kMiB;     // ... and at most 16 GiB
  // Decompressed bytes of COMPRESSED records (streamed, not held): 256 x the
  // input, at least 4 x the memory limit.
  static constexpr uint64_t kDecompressedPerInputByte = 256;
  // Records inside COMPRESSED ones: each costs time however small it is, so
  // their number is bounded too: 4 per input byte, at least 4 Mi (perf
  // writes far fewer: about one per 5-50 compressed bytes).
  static constexpr uint64_t kDecompressedRecordsPerInputByte = 4;
  static constexpr uint64_t kDecompressedRecordsFloor = uint64_t(4) << 20;
  static constexpr uint64_t kUnlimited = UINT64_MAX;

  // max_memory: 0 = automatic (above), kUnlimited = none, else that many bytes.
  // input_bytes: the file's size, or the bytes of a pipe read so far.
  static uint64_t memory_limit(uint64_t max_memory, uint64_t input_bytes) {
    if (max_memory) return max_memory;
    uint64_t l = input_bytes > kCap / kPerInputByte ? kCap : input_bytes * kPerInputByte;
    return l < kFloor ? kFloor : l;
  }
  static uint64_t decompressed_record_limit(uint64_t max_memory, uint64_t input_bytes) {
    if (max_memory == kUnlimited) return kUnlimited;
    uint64_t by_input = input_bytes > UINT64_MAX / kDecompressedRecordsPerInputByte
                            ? UINT64_MAX
                            : input_bytes * kDecompressedRecordsPerInputByte;
    return by_input > kDecompressedRecordsFloor ? by_input : kDecompressedRecordsFloor;
  }
  static uint64_t decompressed_limit(uint64_t max_memory, uint64_t input_bytes) {
    uint64_t m = memory_limit(max_memory, input_bytes);
    if (m == kUnlimited) return kUnlimited;
    uint64_t by_input = input_bytes > UINT64_MAX / kDecompressedPerInputByte ? UINT64_MAX
                                                                            : input_bytes * kDecompressedPerInputByte;
    uint64_t by_memory = m > UINT64_MAX / 4 ? UINT64_MAX : 4 * m;
    return by_input > by_memory ? by_input : by_memory;
  }
};

struct ReadOptions {
  // On damage (truncation, bad sizes): stop, deliver every record read before
  // it, and put the error in ReadStats::warnings instead of throwing.
  bool partial = false;
  bool progress = false;  // fg::Progress on stderr
  // Size of the zstd output buffer; 0 = default. Tests make it tiny so that
  // records straddle decompressed chunks.
  size_t zstd_output_chunk = 0;
  // A `perf record --threads` directory's data.N files are read in turns of
  // this many bytes each, merged by time after each turn; 0 = 1 MiB. Tests
  // make it small so that a short recording takes many turns.
  uint64_t dir_turn_bytes = 0;
  // Read and validate records (and decompress) on a second thread while the
  // handler runs on the calling thread, a round at a time. The handler sees
  // exactly the same calls in the same order either way; only files (not
  // pipes) are read this way. stats() is then written by the reading thread
  // while the handler runs: read it only after read() returns.
  bool reading_thread = false;
  // Memory budget (ReadBudget::memory_limit): 0 = automatic, else bytes;
  // ReadBudget::kUnlimited for none. Exceeding it is damage (an InputError
  // naming the byte offset, or with partial the records read before it).
  uint64_t max_memory = 0;
};

struct ReadStats {
  std::map<uint32_t, uint64_t> records_by_type;  // every record read, incl. inside COMPRESSED
  std::vector<uint64_t> samples_per_attr;        // indexed like PerfFileInfo::attrs
  uint64_t samples = 0;
  uint64_t lost_records = 0, lost_events = 0;    // LOST records and the events they report
  uint64_t lost_samples_records = 0, lost_samples = 0;  // LOST_SAMPLES
  uint64_t first_sample_time = 0, last_sample_time = 0; // 0 if no timed sample
  uint64_t unordered = 0;          // records that arrived after a later time was already delivered
  uint64_t rounds = 0;             // FINISHED_ROUND records
  uint64_t bytes = 0;              // bytes of records read from the file (data section / stream)
  uint64_t compressed_bytes = 0;   // zstd payload bytes of COMPRESSED records
  uint64_t decompressed_bytes = 0;
  double compression_ratio() const {
    return compressed_bytes ? double(decompressed_bytes) / double(compressed_bytes) : 0.0;
  }
  uint64_t max_buffered_records = 0;  // largest ordering queue (memory stays bounded by a round)
  bool damaged = false;               // partial read stopped at damage (see warnings)
  std::vector<std::string> warnings;
};

// "SAMPLE", "MMAP2", ..., "type 1234".
std::string perf_record_type_name(uint32_t type);

class PerfDataReader {
 public:
  // Opens path ("-" = stdin, pipe mode) and parses the header: everything in
  // file mode; only the magic in pipe mode (attrs arrive as records in read()).
  // Throws fg::InputError for unreadable or damaged headers. With
  // options.partial, recoverable header damage (a data section or feature
  // table cut short by truncation) becomes a warning instead, so pass the same
  // options here as to read() for a --partial read of a truncated file.
  explicit PerfDataReader(std::string path, const ReadOptions& options = {});
  ~PerfDataReader();
  PerfDataReader(const PerfDataReader&) = delete;
  PerfDataReader& operator=(const PerfDataReader&) = delete;

  // Complete after read() in pipe mode.
  const PerfFileInfo& info() const;
  // Reads every record once and delivers it in time order. Throws
  // fg::InputError on damage unless options.partial. Call at most once.
  void read(RecordHandler& handler, const ReadOptions& options);
  void read(RecordHandler& handler);  // with the constructor's options
  const ReadStats& stats() const;
  const std::string& path() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fg
