// PerfDataReader's internals, shared by the units that implement it:
// perf_data_reader.cpp (opening the input, file-mode sections, the read),
// perf_record_stream.cpp (framing, per-record bookkeeping, COMPRESSED, rounds,
// delivery), perf_stream_header.cpp (attrs, features and names
// as records, naming attrs) and perf_reading_thread.cpp
// (ReadOptions::reading_thread). Internal to lib/perf.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <unordered_map>

#include "diagnostics/input_error.h"
#include "diagnostics/progress.h"
#include "perf/perf_abi.h"
#include "perf/perf_data_reader.h"
#include "perf/perf_file_header.h"
#include "perf/record_decoder.h"
#include "perf/record_order.h"
#include "perf/tracing_data.h"
#include "perf/zstd_stream.h"

namespace fg {

namespace perf_read {

constexpr size_t H = perf_abi::RECORD_HEADER_SIZE;

// Sequential reads from a pipe (stdin), with 8-aligned record copies.
class StreamInput {
 public:
  explicit StreamInput(int fd) : fd_(fd), buf_(1 << 16) {}
  // Reads up to n bytes into dst; returns how many (short only at EOF).
  size_t read(uint8_t* dst, size_t n) {
    size_t got = 0;
    while (got < n) {
      if (pos_ == len_) {
        ssize_t r;
        do r = ::read(fd_, buf_.data(), buf_.size());
        while (r < 0 && errno == EINTR);
        if (r < 0) throw InputError("read error: " + std::string(std::strerror(errno)));
        if (r == 0) break;
        pos_ = 0;
        len_ = static_cast<size_t>(r);
      }
      size_t k = std::min(n - got, len_ - pos_);
      if (dst) std::memcpy(dst + got, buf_.data() + pos_, k);
      pos_ += k;
      got += k;
    }
    offset_ += got;
    return got;
  }
  uint64_t offset() const { return offset_; }

 private:
  int fd_;
  std::vector<uint8_t> buf_;
  size_t pos_ = 0, len_ = 0;
  uint64_t offset_ = 0;
};

// Thrown inside the reading thread when the handler failed and reading must stop.
struct HandlerStopped {};

struct RawRecord {
  const uint8_t* data = nullptr;
  uint32_t size = 0;
  uint32_t type = 0;
  uint64_t offset = 0;
  bool stable = false;  // bytes stay valid until the end of read() (mmap)
};

}  // namespace perf_read

struct PerfDataReader::Impl {
  using StreamInput = perf_read::StreamInput;
  using RawRecord = perf_read::RawRecord;
  using HandlerStopped = perf_read::HandlerStopped;

  std::string path;
  ReadOptions options;
  PerfFileInfo info;
  ReadStats stats;
  perf_file::FileHeader header;
  std::vector<EventAttr> event_desc;
  std::vector<std::string> update_names;  // EVENT_UPDATE names, by attr index
  TracingData tracing;                    // parsed only to name tracepoint attrs
  size_t tracing_parsed_size = SIZE_MAX;

  // Input: the whole file mmap'ed, or a pipe. map, pos and end are the
  // file being read (a directory's data.N files in turn, see DirFile);
  // map_size is the size of the first.
  int fd = -1;
  bool own_fd = false;
  const uint8_t* map = nullptr;
  size_t map_size = 0;
  const uint8_t* own_map = nullptr;  // the first file's mapping, unmapped at the end
  // A `perf record --threads` directory: its data.N files, mapped whole.
  // They have no rounds; each is one recording thread's records, in time
  // order. They are read in turns (ReadOptions::dir_turn_bytes) and merged: after
  // a turn, everything up to the earliest of the files' last times is due
  // (read_dir_files). A file's reading state is kept here between turns.
  struct DirFile {
    std::string path;
    const uint8_t* map = nullptr;
    size_t size = 0;
    uint64_t pos = 0;
    uint64_t released = 0;  // its pages below this were handed back (read_dir_files)
    uint64_t advised = 0;  // read_ahead_file's state for it
    std::unique_ptr<perf_zstd::ZstdStream> zstd;  // each thread compressed its own stream
    std::vector<uint8_t> zpending;
    uint64_t zstream_offset = 0;
    uint64_t last_time = 0;  // of the last record queued from it
    bool finished = false;
  };
  static constexpr uint64_t kDirTurnBytes = uint64_t(1) << 20;
  std::vector<DirFile> dir_files;
  uint64_t dir_bytes = 0;  // their sizes together
  std::unique_ptr<StreamInput> stream;
  uint64_t pos = 0, end = 0;  // mmap: current offset and end of the data
  uint64_t prefetched = 0;    // mmap: the lines below this were prefetched (next_record)
  // mmap: the file below `advised` was asked for ahead (read_ahead_file).
  uint64_t advised = 0;
  std::vector<unsigned char> residency;  // read_ahead_file's mincore answer
  void read_ahead_file();
  std::vector<uint64_t> scratch = std::vector<uint64_t>(65536 / 8 + 1);  // one stream record, aligned

  perf_record::AttrSelector selector;
  perf_order::RecordOrderQueue queue;
  std::unique_ptr<perf_zstd::ZstdStream> zstd;
  std::vector<uint8_t> zpending;  // decompressed bytes not yet forming a whole record
  uint64_t zstream_offset = 0;    // decompressed bytes consumed before zpending[0]

  std::array<uint64_t, 128> type_counts{};  // records by type below 128; the rest in stats directly
  uint64_t released = 0;  // mmap bytes before this were handed back to the kernel

  // Memory budget (ReadBudget). queue_limit caches the limit for the check
  // after each queued record; it is recomputed when exceeded, since a pipe's
  // limit grows with the bytes read.
  uint64_t queue_limit = 0;
  uint64_t decompressed_limit = 0;
  uint64_t decompressed_records = 0, decompressed_record_limit = 0;
  uint64_t input_bytes() const { return stream ? stream->offset() : map_size + dir_bytes; }
  uint64_t memory_limit() const { return ReadBudget::memory_limit(options.max_memory, input_bytes()); }
  void check_queue_budget();

  // Event names. A new attr (HEADER_ATTR) or name (EVENT_UPDATE) is named on
  // its own, in O(its ids); EVENT_DESC and TRACING_DATA re-resolve all attrs
  // while that work stays within kResolveWorkPerByte per input byte, and are
  // otherwise left for the end of the read (names_dirty). Re-resolving all
  // attrs on every HEADER_ATTR made a stream of them quadratic.
  static constexpr uint64_t kResolveWorkPerByte = 16;
  std::unordered_map<uint64_t, size_t> desc_by_id;  // EVENT_DESC id -> first entry listing it
  size_t descs_indexed = 0;
  uint64_t total_ids = 0;     // ids of all attrs
  uint64_t resolve_work = 0;  // attrs + ids visited by full re-resolutions
  bool names_dirty = false;
  void index_event_desc();
  void resolve_one(size_t i);
  void names_changed();

  uint32_t last_type = 0;  // type of the last top-level record (pipe: FINISHED_ROUND when complete)

  RecordHandler* handler = nullptr;
  bool handler_threw = false;
  bool read_called = false;

  // What is being read, for error messages.
  uint64_t cur_offset = 0;
  uint32_t cur_type = 0, cur_size = 0;
  bool cur_inner = false;
  uint64_t cur_inner_offset = 0;

  Sample sample;        // delivered to the handler
  Sample parse_sample;  // decoded to validate and time a record when it is read
  perf_record::EventRecord event;            // the non-SAMPLE record being read
  perf_record::EventRecord delivered_event;  // the one being delivered (load_event)

  // --- The reading thread (ReadOptions::reading_thread). It runs next_record
  // and process(); each FINISHED_ROUND's deliverable records become a batch
  // that the calling thread delivers, so the two overlap. ---
  struct Batch {
    std::vector<perf_order::QueuedRecord> records;
    perf_order::RecordOrderQueue::ArenaBlocks arena;  // storage of owned records
    // Samples decoded by the reading thread (samples[i] for records[i] of
    // type SAMPLE), so that the delivering thread, the busier one, only
    // calls the handler.
    std::vector<Sample> samples;
    uint64_t release_upto = 0;  // file bytes below this are unreferenced once delivered
    uint64_t bytes = 0;         // arena and record memory, for the hand-over budget
    bool last = false;
    std::exception_ptr error;   // what stopped the reading thread (with last)
  };
  bool threaded = false;
  std::mutex batch_mutex;
  std::condition_variable batch_cv;
  std::deque<Batch> batches;     // ready for delivery
  bool delivering = false;       // the calling thread is delivering a batch
  bool stop_reading = false;     // the handler threw: the reading thread quits
  // Two rounds ready are enough to keep the calling thread fed; each one
  // queued or spare keeps its decoded samples' buffers (busy.data: 4 cost
  // 6 MB more of the peak, no speed).
  static constexpr size_t kMaxBatches = 2;
  std::vector<Batch> spare_batches;  // delivered batches, kept for their buffers
  // Bytes of the batches handed over and not yet delivered; the reading
  // thread waits while they exceed a quarter of the memory budget (a round
  // of decompressed records can be large; several would add up).
  uint64_t pending_batch_bytes = 0;
  // Reading thread: an empty batch, recycled when one is spare.
  Batch spare_batch() {
    std::lock_guard<std::mutex> lock(batch_mutex);
    if (spare_batches.empty()) return Batch();
    Batch b = std::move(spare_batches.back());
    spare_batches.pop_back();
    return b;
  }

  void hand_over(Batch&& b);
  void decode_samples(Batch& b);
  void decode_queued_sample(const perf_order::QueuedRecord& r, Sample& s);
  void deliver_sample(const Sample& s);
  void wait_until_delivered();
  void read_loop(const uint64_t start, Progress& progress);
  bool read_records(const uint64_t start, Progress* progress, uint64_t max_bytes = UINT64_MAX);
  void swap_reading_state(DirFile& f);
  void run_threaded(Progress& progress, uint64_t start);
  std::exception_ptr deliver_batches();

  ~Impl() {
    if (own_map) munmap(const_cast<uint8_t*>(own_map), map_size);
    for (const DirFile& f : dir_files)
      if (f.map) munmap(const_cast<uint8_t*>(f.map), f.size);
    if (own_fd && fd >= 0) ::close(fd);
  }

  void warn(const std::string& w) { stats.warnings.push_back(w); }
  // Damage (`e`, being handled): with --partial the records before it are
  // kept and a warning says where `stopped` ("stopped here", "this file
  // stopped here"); otherwise, or when the handler threw, it is rethrown.
  // Call from a catch block only.
  void stop_partially(const InputError& e, const char* stopped) {
    if (handler_threw || !options.partial) throw;
    stats.damaged = true;
    warn(std::string(e.what()) + " (partial read: " + stopped + ", the records before it were kept)");
  }

  // Header damage that --partial may step over.
  void header_damage(uint64_t offset, const std::string& what) {
    if (!options.partial) throw InputError::at_offset(path, offset, what);
    stats.damaged = true;
    warn(path + ": byte " + std::to_string(offset) + ": " + what);
  }

  void open();
  void open_directory();
  void read_dir_files(Progress& progress, uint64_t main_bytes);
  void parse_file_mode();
  void resolve_names();
  bool next_record(RawRecord& r);
  void prefetch_ahead();
  std::string read_extra(uint64_t n, bool keep);
  void process(const uint8_t* rec, uint32_t size, uint64_t offset, bool stable, bool inner);
  void process_kernel_record(uint32_t type, const uint8_t* rec, uint32_t size, uint64_t offset, bool stable);
  void process_user_record(uint32_t type, const uint8_t* rec, uint32_t size, uint64_t offset, bool inner);
  void process_header_record(uint32_t type, const uint8_t* rec, uint32_t size, uint64_t offset, bool inner);
  void finish_round(uint64_t offset);
  void decompress(const uint8_t* payload, size_t n, uint64_t offset);
  void deliver(const perf_order::QueuedRecord& r);
  void release_consumed(uint64_t upto);
  void run(RecordHandler& h);
  InputError record_error(const std::string& what) const;
};

}  // namespace fg
