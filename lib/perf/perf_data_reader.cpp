#include "perf/perf_data_reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "diagnostics/input_error.h"
#include "diagnostics/progress.h"
#include "perf/perf_abi.h"
#include "perf/perf_features.h"
#include "perf/perf_file_header.h"
#include "perf/record_decoder.h"
#include "perf/record_order.h"
#include "perf/sample_decoder.h"
#include "perf/tracing_data.h"
#include "perf/zstd_stream.h"

namespace fg {

using perf_abi::FormatError;
using perf_abi::load;
namespace abi = perf_abi;

std::string perf_abi::record_type_name(uint32_t type) {
  static const char* const kernel[] = {nullptr, "MMAP", "LOST", "COMM", "EXIT", "THROTTLE", "UNTHROTTLE", "FORK",
                                       "READ", "SAMPLE", "MMAP2", "AUX", "ITRACE_START", "LOST_SAMPLES", "SWITCH",
                                       "SWITCH_CPU_WIDE", "NAMESPACES", "KSYMBOL", "BPF_EVENT", "CGROUP",
                                       "TEXT_POKE", "AUX_OUTPUT_HW_ID", "CALLCHAIN_DEFERRED"};
  static const char* const user[] = {"HEADER_ATTR", "HEADER_EVENT_TYPE", "HEADER_TRACING_DATA", "HEADER_BUILD_ID",
                                     "FINISHED_ROUND", "ID_INDEX", "AUXTRACE_INFO", "AUXTRACE", "AUXTRACE_ERROR",
                                     "THREAD_MAP", "CPU_MAP", "STAT_CONFIG", "STAT", "STAT_ROUND", "EVENT_UPDATE",
                                     "TIME_CONV", "HEADER_FEATURE", "COMPRESSED", "FINISHED_INIT", "COMPRESSED2"};
  if (type < sizeof kernel / sizeof *kernel && kernel[type]) return kernel[type];
  if (type >= 64 && type - 64 < sizeof user / sizeof *user) return user[type - 64];
  return "type " + std::to_string(type);
}

std::string perf_record_type_name(uint32_t type) { return perf_abi::record_type_name(type); }

namespace {

constexpr size_t H = abi::RECORD_HEADER_SIZE;

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

}  // namespace

struct PerfDataReader::Impl {
  std::string path;
  ReadOptions options;
  PerfFileInfo info;
  ReadStats stats;
  perf_file::FileHeader header;
  std::vector<EventAttr> event_desc;
  std::vector<std::string> update_names;  // EVENT_UPDATE names, by attr index
  TracingData tracing;                    // parsed only to name tracepoint attrs
  size_t tracing_parsed_size = SIZE_MAX;

  // Input: the whole file mmap'ed, or a pipe.
  int fd = -1;
  bool own_fd = false;
  const uint8_t* map = nullptr;
  size_t map_size = 0;
  std::unique_ptr<StreamInput> stream;
  uint64_t pos = 0, end = 0;  // mmap: current offset and end of the data
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
  uint64_t input_bytes() const { return stream ? stream->offset() : map_size; }
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
  static constexpr size_t kMaxBatches = 4;
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
  void run_threaded(Progress& progress, uint64_t start);

  ~Impl() {
    if (map) munmap(const_cast<uint8_t*>(map), map_size);
    if (own_fd && fd >= 0) ::close(fd);
  }

  void warn(const std::string& w) { stats.warnings.push_back(w); }

  // Header damage that --partial may step over.
  void header_damage(uint64_t offset, const std::string& what) {
    if (!options.partial) throw InputError::at_offset(path, offset, what);
    stats.damaged = true;
    warn(path + ": byte " + std::to_string(offset) + ": " + what);
  }

  void open();
  void parse_file_mode();
  void resolve_names();
  bool next_record(RawRecord& r);
  std::string read_extra(uint64_t n, bool keep);
  void process(const uint8_t* rec, uint32_t size, uint64_t offset, bool stable, bool inner);
  void decompress(const uint8_t* payload, size_t n, uint64_t offset);
  void deliver(const perf_order::QueuedRecord& r);
  void release_consumed(uint64_t upto);
  void run(RecordHandler& h);
  InputError record_error(const std::string& what) const;
};

void PerfDataReader::Impl::open() {
  if (path == "-") {
    fd = 0;
  } else {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw InputError(path + ": cannot open: " + std::strerror(errno));
    own_fd = true;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) throw InputError(path + ": cannot stat: " + std::strerror(errno));
  if (S_ISDIR(st.st_mode))
    throw InputError(path + ": is a directory: perf.data directories (`perf record --threads`) are not "
                            "supported; record without --threads");
  uint8_t first[perf_abi::FILE_HEADER_SIZE] = {};
  size_t avail = 0;
  if (S_ISREG(st.st_mode)) {
    info.file_size = static_cast<uint64_t>(st.st_size);
    if (st.st_size > 0) {
      void* m = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
      if (m == MAP_FAILED) throw InputError(path + ": cannot mmap: " + std::strerror(errno));
      map = static_cast<const uint8_t*>(m);
      map_size = static_cast<size_t>(st.st_size);
      madvise(m, map_size, MADV_SEQUENTIAL);
    }
    avail = std::min<size_t>(map_size, sizeof first);
    if (avail) std::memcpy(first, map, avail);
  } else {
    stream = std::make_unique<StreamInput>(fd);
    avail = stream->read(first, perf_abi::PIPE_HEADER_SIZE);
    // A file-mode header on a pipe: say so before parse_file_header, which
    // would only see the 16 bytes read so far and call the header truncated.
    if (avail == perf_abi::PIPE_HEADER_SIZE && load<uint64_t>(first) == perf_abi::MAGIC2 &&
        load<uint64_t>(first + 8) == perf_abi::FILE_HEADER_SIZE)
      throw InputError::at_offset(path, 8, "a file-mode perf.data cannot be read from a pipe (its sections are found "
                                           "by seeking): pass the file's path instead, or record for a pipe with "
                                           "`perf record -o -`");
  }
  header = perf_file::parse_file_header(first, avail, path);
  info.pipe_mode = header.pipe_mode;
  if (stream) {
    if (!header.pipe_mode)
      throw InputError::at_offset(path, 8, "file-mode perf.data arrived on a pipe; pass the file name instead "
                                           "(or record with `perf record -o -`)");
    return;
  }
  if (header.pipe_mode) {
    pos = perf_abi::PIPE_HEADER_SIZE;
    end = map_size;
    info.data_offset = pos;
    info.data_size = end - pos;
    return;
  }
  parse_file_mode();
}

void PerfDataReader::Impl::parse_file_mode() {
  const uint64_t fsize = map_size;
  info.attrs = perf_file::read_attrs_section(map, fsize, header, path);
  for (const auto& a : info.attrs) total_ids += a.ids.size();
  info.features = header.features;
  const auto& d = header.data;
  if (d.offset < perf_abi::FILE_HEADER_SIZE || d.offset > fsize)
    throw InputError::at_offset(path, 40, "file header: data section offset " + std::to_string(d.offset) +
                                              " lies outside the " + std::to_string(fsize) + "-byte file");
  pos = d.offset;
  bool features_ok = true;
  if (d.size == 0) {
    end = fsize;
    features_ok = false;
    warn(path + ": data size field is 0 (perf record was killed?): reading records to the end of the file "
                "and ignoring the feature sections");
  } else if (d.size > fsize - d.offset) {
    header_damage(48, "file header: data section [" + std::to_string(d.offset) + ", +" + std::to_string(d.size) +
                          ") extends past the end of the " + std::to_string(fsize) +
                          "-byte file (truncated?)");
    end = fsize;
    features_ok = false;
  } else {
    end = d.offset + d.size;
  }
  info.data_offset = pos;
  info.data_size = end - pos;

  if (features_ok) {
    uint64_t nr = 0;
    for (uint64_t w : header.features) nr += static_cast<uint64_t>(__builtin_popcountll(w));
    uint64_t table = end;
    if (nr > (fsize - table) / 16) {
      header_damage(table, "feature section table (" + std::to_string(nr) + " entries) extends past the end of the " +
                               std::to_string(fsize) + "-byte file");
      nr = 0;
    }
    uint64_t idx = 0;
    for (int bit = 0; bit < 256 && idx < nr; ++bit) {
      if (!((header.features[bit / 64] >> (bit % 64)) & 1)) continue;
      uint64_t entry = table + 16 * idx++;
      uint64_t off = load<uint64_t>(map + entry), size = load<uint64_t>(map + entry + 8);
      if (off > fsize || size > fsize - off) {
        header_damage(entry, "feature " + std::to_string(bit) + " section [" + std::to_string(off) + ", +" +
                                 std::to_string(size) + ") lies outside the " + std::to_string(fsize) + "-byte file");
        continue;
      }
      try {
        perf_features::parse_feature(bit, map + off, size, info, event_desc);
        if (bit == abi::FEAT_TRACING_DATA) info.tracing_data_offset = off;
      } catch (const FormatError& e) {
        header_damage(off, e.what());
      }
    }
  }
  if (info.has_feature(perf_abi::FEAT_DIR_FORMAT))
    warn(path + ": DIR_FORMAT feature set: this is one file of a `perf record --threads` directory; "
                "records of the other files are missing");
  resolve_names();
  if (auto w = selector.reset(info.attrs); !w.empty()) warn(path + ": " + w);
}

// Names, best source first: EVENT_UPDATE (pipe), EVENT_DESC, the tracepoint
// format for TRACEPOINT attrs, then a name derived from type/config. All
// attrs, in O(attrs + ids): once for a file's header, and for a pipe when
// names_changed() allows it or at the end of the read (names_dirty).
void PerfDataReader::Impl::resolve_names() {
  names_dirty = false;
  index_event_desc();
  update_names.resize(info.attrs.size());
  for (size_t i = 0; i < info.attrs.size(); ++i) resolve_one(i);
  stats.samples_per_attr.resize(info.attrs.size());
}

void PerfDataReader::Impl::index_event_desc() {
  for (; descs_indexed < event_desc.size(); ++descs_indexed)
    for (uint64_t id : event_desc[descs_indexed].ids) desc_by_id.emplace(id, descs_indexed);
}

// One attr's name, best source first (see resolve_names).
void PerfDataReader::Impl::resolve_one(size_t i) {
  EventAttr& a = info.attrs[i];
  a.name.clear();
  if (i < update_names.size() && !update_names[i].empty()) {
    a.name = update_names[i];
    return;
  }
  // EVENT_DESC: by the first of the attr's ids it lists, else by position
  // when it describes exactly the attrs there are.
  const std::string* desc = nullptr;
  for (uint64_t id : a.ids)
    if (auto it = desc_by_id.find(id); it != desc_by_id.end()) {
      desc = &event_desc[it->second].name;
      break;
    }
  if (!desc && event_desc.size() == info.attrs.size()) desc = &event_desc[i].name;
  if (desc && !desc->empty()) {
    a.name = *desc;
    return;
  }
  if (a.type == 2) {
    if (!info.tracing_data.empty() && tracing_parsed_size != info.tracing_data.size()) {
      tracing_parsed_size = info.tracing_data.size();
      try {
        tracing = TracingData::parse(info.tracing_data, path, info.tracing_data_offset);
      } catch (const InputError& e) {
        tracing = TracingData();
        warn(std::string(e.what()));
      }
    }
    if (const auto* f = tracing.find(a.config)) {
      a.name = f->full_name();
      return;
    }
  }
  a.name = perf_file::default_event_name(a);
}

// A source of names for all attrs changed: re-resolve now while the work
// done so is proportional to the input, else at the end of the read.
void PerfDataReader::Impl::names_changed() {
  const uint64_t cost = info.attrs.size() + total_ids + 1;
  if (resolve_work + cost <= kResolveWorkPerByte * input_bytes() + (uint64_t(1) << 20)) {
    resolve_work += cost;
    resolve_names();
  } else {
    names_dirty = true;
  }
}

InputError PerfDataReader::Impl::record_error(const std::string& what) const {
  std::string where = abi::record_type_name(cur_type) + " record (size " + std::to_string(cur_size) + ")";
  if (cur_inner)
    where = "COMPRESSED record: decompressed " + where + " at stream byte " + std::to_string(cur_inner_offset);
  return InputError::at_offset(path, cur_offset, where + ": " + what);
}

bool PerfDataReader::Impl::next_record(RawRecord& r) {
  cur_inner = false;
  if (stream) {
    uint8_t* buf = reinterpret_cast<uint8_t*>(scratch.data());
    uint64_t off = stream->offset();
    cur_offset = off;
    cur_type = 0;
    cur_size = 0;
    size_t got = stream->read(buf, H);
    if (got == 0) return false;
    if (got < H)
      throw InputError::at_offset(path, off, "record header truncated: the input ends after " +
                                                 std::to_string(got) + " of its 8 bytes");
    r.type = load<uint32_t>(buf);
    r.size = load<uint16_t>(buf + 6);
    cur_type = r.type;
    cur_size = r.size;
    if (r.size < H)
      throw record_error("size " + std::to_string(r.size) + " is smaller than the 8-byte record header");
    got = stream->read(buf + H, r.size - H);
    if (got < r.size - H)
      throw record_error("truncated: the input ends " + std::to_string(got + H) + " bytes into the record");
    r.data = buf;
    r.offset = off;
    r.stable = false;
    stats.bytes += r.size;
    return true;
  }
  if (pos >= end) return false;
  cur_offset = pos;
  cur_type = 0;
  cur_size = 0;
  if (end - pos < H)
    throw InputError::at_offset(path, pos, "record header truncated: only " + std::to_string(end - pos) +
                                               " bytes left before the end of the data at byte " + std::to_string(end));
  r.type = load<uint32_t>(map + pos);
  r.size = load<uint16_t>(map + pos + 6);
  cur_type = r.type;
  cur_size = r.size;
  if (r.size < H) throw record_error("size " + std::to_string(r.size) + " is smaller than the 8-byte record header");
  if (r.size > end - pos)
    throw record_error("truncated: the record would end at byte " + std::to_string(pos + r.size) +
                       " but the data ends at byte " + std::to_string(end));
  r.data = map + pos;
  r.offset = pos;
  r.stable = true;
  pos += r.size;
  stats.bytes += r.size;
  return true;
}

// Payload that follows a record outside hdr.size (HEADER_TRACING_DATA, AUXTRACE).
std::string PerfDataReader::Impl::read_extra(uint64_t n, bool keep) {
  std::string out;
  if (stream) {
    // Never allocate by the unchecked size: grow only as bytes really arrive.
    uint8_t chunk[1 << 14];
    uint64_t left = n;
    while (left) {
      size_t want = static_cast<size_t>(std::min<uint64_t>(left, sizeof chunk));
      size_t got = stream->read(chunk, want);
      if (keep) out.append(reinterpret_cast<const char*>(chunk), got);
      if (got < want)
        throw record_error("its " + std::to_string(n) + "-byte payload is truncated by the end of the input");
      left -= got;
    }
    stats.bytes += n;
    return out;
  }
  if (n > end - pos)
    throw record_error("its " + std::to_string(n) + "-byte payload extends past the end of the data at byte " +
                       std::to_string(end));
  if (keep) out.assign(reinterpret_cast<const char*>(map + pos), n);
  pos += n;
  stats.bytes += n;
  return out;
}

void PerfDataReader::Impl::decompress(const uint8_t* payload, size_t n, uint64_t offset) {
  if (!zstd) zstd = std::make_unique<perf_zstd::ZstdStream>(options.zstd_output_chunk);
  if (!info.compressed) {
    wait_until_delivered();
    info.compressed = true;
  }
  stats.compressed_bytes += n;
  decompressed_limit = ReadBudget::decompressed_limit(options.max_memory, input_bytes());
  decompressed_record_limit = ReadBudget::decompressed_record_limit(options.max_memory, input_bytes());
  const uint32_t outer_size = cur_size;  // the COMPRESSED record's, for errors after an inner record
  zstd->feed(payload, n, [&](const uint8_t* out, size_t len) {
    stats.decompressed_bytes += len;
    if (stats.decompressed_bytes > decompressed_limit)
      throw FormatError("zstd output reached " + std::to_string(stats.decompressed_bytes >> 20) + " MiB from " +
                        std::to_string(stats.compressed_bytes) + " compressed bytes, more than the limit of " +
                        std::to_string(decompressed_limit >> 20) + " MiB (" +
                        std::to_string(ReadBudget::kDecompressedPerInputByte) +
                        " x the input, at least 4 x the memory budget; --max-memory raises it): a decompression "
                        "bomb?");
    zpending.insert(zpending.end(), out, out + len);
    size_t p = 0;
    while (zpending.size() - p >= H) {
      uint32_t size = load<uint16_t>(zpending.data() + p + 6);
      cur_inner = true;
      cur_inner_offset = zstream_offset + p;
      cur_type = load<uint32_t>(zpending.data() + p);
      cur_size = size;
      if (size < H) throw record_error("size " + std::to_string(size) + " is smaller than the 8-byte record header");
      if (size > zpending.size() - p) break;  // straddles into the next chunk
      process(zpending.data() + p, size, offset, false, true);
      p += size;
      ++decompressed_records;
    }
    zpending.erase(zpending.begin(), zpending.begin() + static_cast<std::ptrdiff_t>(p));
    zstream_offset += p;
    cur_inner = false;
    cur_type = abi::COMPRESSED;
    cur_size = outer_size;
    if (decompressed_records > decompressed_record_limit)
      throw FormatError("zstd output held " + std::to_string(decompressed_records) + " records from " +
                        std::to_string(stats.compressed_bytes) + " compressed bytes, more than the limit of " +
                        std::to_string(decompressed_record_limit) + " (" +
                        std::to_string(ReadBudget::kDecompressedRecordsPerInputByte) + " per input byte, at least " +
                        std::to_string(ReadBudget::kDecompressedRecordsFloor) +
                        "; --max-memory unlimited lifts it): a decompression bomb?");
  });
}

void PerfDataReader::Impl::process(const uint8_t* rec, uint32_t size, uint64_t offset, bool stable, bool inner) {
  const uint32_t type = load<uint32_t>(rec);
  // A plain array: a std::map update per record showed in profiles.
  if (type < type_counts.size()) ++type_counts[type];
  else ++stats.records_by_type[type];
  if (type < abi::USER_TYPE_START) {
    if (info.attrs.empty()) throw FormatError("kernel record before any event attr (HEADER_ATTR)");
    size_t ai = selector.select(type, rec, size);
    const EventAttr& attr = info.attrs[ai];
    uint64_t time = 0;
    bool queue_it = true;
    if (type == abi::SAMPLE) {
      perf_sample::decode_sample(attr, rec, size, parse_sample);  // validates the whole record
      time = parse_sample.time;
      ++stats.samples;
      ++stats.samples_per_attr[ai];
      if (attr.has(sample_bits::TIME)) {
        if (!stats.first_sample_time || time < stats.first_sample_time) stats.first_sample_time = time;
        if (time > stats.last_sample_time) stats.last_sample_time = time;
      }
    } else {
      perf_record::SampleId sid;
      size_t trailer = perf_record::parse_sample_id(attr, rec, size, sid);
      time = sid.time;
      switch (type) {
        case abi::MMAP:
        case abi::MMAP2: {
          MmapRecord m;
          perf_record::decode_mmap(rec, size, trailer, type == abi::MMAP2, m);
          break;
        }
        case abi::COMM: {
          CommRecord c;
          perf_record::decode_comm(rec, size, trailer, c);
          break;
        }
        case abi::FORK:
        case abi::EXIT: {
          TaskRecord t;
          perf_record::decode_task(rec, size, trailer, t);
          if (!sid.has_time) time = t.body_time;
          break;
        }
        case abi::LOST:
        case abi::LOST_SAMPLES: {
          LostRecord l;
          perf_record::decode_lost(rec, size, trailer, type == abi::LOST_SAMPLES, l);
          if (l.samples) {
            ++stats.lost_samples_records;
            stats.lost_samples += l.lost;
          } else {
            ++stats.lost_records;
            stats.lost_events += l.lost;
          }
          break;
        }
        case abi::SWITCH:
        case abi::SWITCH_CPU_WIDE: {
          SwitchRecord s;
          perf_record::decode_switch(rec, size, trailer, type == abi::SWITCH_CPU_WIDE, s);
          break;
        }
        case abi::KSYMBOL: {
          KsymbolRecord k;
          perf_record::decode_ksymbol(rec, size, trailer, k);
          break;
        }
        default:
          queue_it = false;  // THROTTLE, NAMESPACES, CGROUP, AUX, ...: counted only
      }
    }
    if (queue_it) {
      queue.push(time, rec, size, offset, static_cast<uint32_t>(ai), type, !stable);
      if (queue.footprint() > queue_limit) check_queue_budget();
    }
    return;
  }
  switch (type) {
    case abi::FINISHED_ROUND:
      ++stats.rounds;
      if (threaded) {
        Batch b = spare_batch();
        queue.finish_round_into(b.records, b.arena);
        decode_samples(b);
        b.bytes = b.arena.size() * perf_order::RecordOrderQueue::kArenaBlockBytes +
                  b.records.capacity() * sizeof(perf_order::QueuedRecord);
        b.release_upto = queue.min_file_offset(offset);
        hand_over(std::move(b));
      } else {
        queue.finish_round([this](const perf_order::QueuedRecord& r) { deliver(r); });
      }
      break;
    case abi::HEADER_ATTR: {
      wait_until_delivered();  // these change info, which the handler may be reading
      EventAttr a = perf_file::parse_event_attr(rec + H, size - H);
      size_t nids = (size - H - a.size) / 8;
      a.ids.resize(nids);
      if (nids) std::memcpy(a.ids.data(), rec + H + a.size, nids * 8);
      total_ids += nids;
      info.attrs.push_back(std::move(a));
      stats.samples_per_attr.resize(info.attrs.size());
      if (auto w = selector.add(info.attrs.back(), info.attrs[0]); !w.empty()) warn(path + ": " + w);
      resolve_one(info.attrs.size() - 1);
      // EVENT_DESC names by position depend on the number of attrs.
      if (!event_desc.empty()) names_dirty = true;
      break;
    }
    case abi::HEADER_TRACING_DATA: {
      wait_until_delivered();  // these change info, which the handler may be reading
      if (inner) throw FormatError("HEADER_TRACING_DATA inside a COMPRESSED record is not supported");
      if (size < H + 4) throw FormatError("too short for its size field");
      uint32_t n = load<uint32_t>(rec + H);
      info.tracing_data_offset = (stream ? stream->offset() : pos);
      info.tracing_data = read_extra(n, true);
      // The blob is padded to 8; the exact size is found by parsing.
      info.features[0] |= uint64_t(1) << abi::FEAT_TRACING_DATA;
      names_changed();
      break;
    }
    case abi::HEADER_BUILD_ID:
      wait_until_delivered();  // these change info, which the handler may be reading
      perf_features::parse_build_id_entry(load<uint16_t>(rec + 4), rec + H, size - H, info);
      break;
    case abi::HEADER_FEATURE: {
      wait_until_delivered();  // these change info, which the handler may be reading
      if (size < H + 8) throw FormatError("too short for its feature id");
      uint64_t feat = load<uint64_t>(rec + H);
      // The run of features ends with a sentinel (HEADER_LAST_FEATURE, whose value
      // depends on the perf version) with an empty payload: nothing to parse.
      if (feat < 256 && size > H + 8) {
        perf_features::parse_feature(static_cast<int>(feat), rec + H + 8, size - H - 8, info, event_desc);
        if (feat == abi::FEAT_TRACING_DATA) info.tracing_data_offset = inner ? offset : offset + H + 8;
        if (feat == abi::FEAT_EVENT_DESC) names_changed();
      }
      break;
    }
    case abi::EVENT_UPDATE: {
      wait_until_delivered();  // these change info, which the handler may be reading
      if (size < H + 16) throw FormatError("too short for its type and id");
      uint64_t utype = load<uint64_t>(rec + H), id = load<uint64_t>(rec + H + 8);
      if (utype == 2) {  // PERF_EVENT_UPDATE__NAME
        const char* s = reinterpret_cast<const char*>(rec + H + 16);
        std::string name(s, strnlen(s, size - H - 16));
        // The attr that listed the id (an id map lookup, not a scan of every
        // attr's ids per record).
        size_t i = selector.attr_of_id(id);
        if (!name.empty() && i < info.attrs.size()) {
          update_names.resize(info.attrs.size());
          update_names[i] = std::move(name);
          resolve_one(i);
        }
      }
      break;
    }
    case abi::COMPRESSED:
    case abi::COMPRESSED2: {
      if (inner) throw FormatError("COMPRESSED record nested inside a COMPRESSED record");
      const uint8_t* payload = rec + H;
      size_t n = size - H;
      if (type == abi::COMPRESSED2) {
        if (size < H + 8) throw FormatError("too short for its data_size field");
        uint64_t ds = load<uint64_t>(rec + H);
        if (ds > size - H - 8)
          throw FormatError("data_size " + std::to_string(ds) + " exceeds the record's " + std::to_string(size - H - 8) +
                            " payload bytes");
        payload = rec + H + 8;
        n = static_cast<size_t>(ds);
      }
      decompress(payload, n, offset);
      break;
    }
    case abi::AUXTRACE: {
      if (inner) throw FormatError("AUXTRACE inside a COMPRESSED record is not supported");
      if (size < H + 8) throw FormatError("too short for its size field");
      read_extra(load<uint64_t>(rec + H), false);
      break;
    }
    default:
      break;  // FINISHED_INIT, ID_INDEX, THREAD_MAP, CPU_MAP, TIME_CONV, ...
  }
}

void PerfDataReader::Impl::check_queue_budget() {
  queue_limit = memory_limit();
  const uint64_t used = queue.footprint();
  if (used <= queue_limit) return;
  throw FormatError("records waiting for their FINISHED_ROUND take " + std::to_string((used + (1u << 20) - 1) >> 20) +
                    " MiB, more than the memory budget of " + std::to_string(queue_limit >> 20) + " MiB (" +
                    (options.max_memory ? std::string("--max-memory")
                                        : std::to_string(ReadBudget::kPerInputByte) + " x the " +
                                              std::to_string(input_bytes()) + "-byte input, at least " +
                                              std::to_string(ReadBudget::kFloor >> 20) +
                                              " MiB; --max-memory raises it") +
                    "): too many records between FINISHED_ROUNDs (hostile or damaged input?)");
}

void PerfDataReader::Impl::deliver(const perf_order::QueuedRecord& r) {
  if (r.type == abi::SAMPLE) {
    decode_queued_sample(r, sample);
    deliver_sample(sample);
    return;
  }
  const EventAttr& attr = info.attrs[r.attr_index];
  const uint8_t* rec = r.data;
  const size_t size = r.size;
  try {
    perf_record::SampleId sid;
    size_t trailer = perf_record::parse_sample_id(attr, rec, size, sid);
    switch (r.type) {
      case abi::MMAP:
      case abi::MMAP2: {
        MmapRecord m;
        perf_record::decode_mmap(rec, size, trailer, r.type == abi::MMAP2, m);
        m.time = sid.time;
        m.cpu = sid.cpu;
        m.file_offset = r.file_offset;
        handler->on_mmap(m);
        break;
      }
      case abi::COMM: {
        CommRecord c;
        perf_record::decode_comm(rec, size, trailer, c);
        c.time = sid.time;
        c.cpu = sid.cpu;
        c.file_offset = r.file_offset;
        handler->on_comm(c);
        break;
      }
      case abi::FORK:
      case abi::EXIT: {
        TaskRecord t;
        perf_record::decode_task(rec, size, trailer, t);
        if (sid.has_time) t.time = sid.time;
        t.cpu = sid.cpu;
        t.file_offset = r.file_offset;
        if (r.type == abi::FORK)
          handler->on_fork(t);
        else
          handler->on_exit(t);
        break;
      }
      case abi::LOST:
      case abi::LOST_SAMPLES: {
        LostRecord l;
        perf_record::decode_lost(rec, size, trailer, r.type == abi::LOST_SAMPLES, l);
        l.time = sid.time;
        l.cpu = sid.cpu;
        l.file_offset = r.file_offset;
        handler->on_lost(l);
        break;
      }
      case abi::SWITCH:
      case abi::SWITCH_CPU_WIDE: {
        SwitchRecord s;
        perf_record::decode_switch(rec, size, trailer, r.type == abi::SWITCH_CPU_WIDE, s);
        s.pid = sid.pid;
        s.tid = sid.tid;
        s.cpu = sid.cpu;
        s.time = sid.time;
        s.file_offset = r.file_offset;
        handler->on_switch(s);
        break;
      }
      case abi::KSYMBOL: {
        KsymbolRecord k;
        perf_record::decode_ksymbol(rec, size, trailer, k);
        k.time = sid.time;
        k.file_offset = r.file_offset;
        handler->on_ksymbol(k);
        break;
      }
      default:
        break;
    }
  } catch (const FormatError& e) {
    // Validated when read; reaching this means a reader bug, still report it cleanly.
    throw InputError::at_offset(path, r.file_offset, abi::record_type_name(r.type) + " record: " + e.what());
  } catch (...) {
    handler_threw = true;
    throw;
  }
}

// Keeps the resident set bounded by about a round: mapped pages that no queued
// record refers to any more are dropped (they are re-read from the file if
// ever touched again, which does not happen for data already delivered).
void PerfDataReader::Impl::release_consumed(uint64_t upto) {
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  upto &= ~(page - 1);
  if (upto <= released + (4u << 20)) return;  // in steps of a few MB
  madvise(const_cast<uint8_t*>(map) + released, upto - released, MADV_DONTNEED);
  released = upto;
}

// The reading side: every record through process() until the end or damage.
void PerfDataReader::Impl::read_loop(const uint64_t start, Progress& progress) {
  RawRecord r;
  uint64_t rounds_seen = 0;
  while (next_record(r)) {
    try {
      process(r.data, r.size, r.offset, r.stable, false);
    } catch (const FormatError& e) {
      throw record_error(e.what());
    }
    last_type = r.type;
    if (map && !threaded && stats.rounds != rounds_seen) {
      rounds_seen = stats.rounds;
      release_consumed(queue.min_file_offset(r.offset));
    }
    if (options.progress) progress.update(stream ? stream->offset() : pos - start);
  }
  if (!zpending.empty())
    throw InputError::at_offset(path, cur_offset, "COMPRESSED data ends inside a record (" +
                                                      std::to_string(zpending.size()) + " bytes left over)");
  if (info.pipe_mode && last_type != abi::FINISHED_ROUND) {
    // `perf record -o -` ends every complete stream with a FINISHED_ROUND,
    // even one without samples. A stream without one was cut short at a
    // record boundary, unless it never had rounds at all and is not perf's
    // (records but no FINISHED_ROUND, FINISHED_INIT or HEADER_FEATURE).
    uint64_t kernel_records = 0;
    for (uint32_t t = 0; t < abi::USER_TYPE_START; ++t) kernel_records += type_counts[t];
    bool perf_stream = stats.rounds || type_counts[abi::FINISHED_INIT] || type_counts[abi::HEADER_FEATURE];
    if (perf_stream || kernel_records == 0) {
      const uint64_t at = stream ? stream->offset() : pos;
      throw InputError::at_offset(
          path, at,
          "pipe-mode stream cut short: it ends after " + std::to_string(at) + " bytes " +
              (kernel_records == 0 ? std::string("before any event record (only header records)")
                                   : "without the FINISHED_ROUND that ends a complete `perf record -o -` stream") +
              " (the recorder was killed or the pipe closed early)");
    }
  }
}

// Reading thread: decodes a batch's samples where they will stay until the
// batch is delivered (the file mapping, or the batch's arena blocks).
void PerfDataReader::Impl::decode_samples(Batch& b) {
  // Grow only: a recycled batch's Samples are overwritten by decode_sample,
  // and value-initialising ~1000 of them per round showed in profiles.
  if (b.samples.size() < b.records.size()) b.samples.resize(b.records.size());
  for (size_t i = 0; i < b.records.size(); ++i)
    if (b.records[i].type == abi::SAMPLE) decode_queued_sample(b.records[i], b.samples[i]);
}

// A queued SAMPLE, decoded for delivery with its index and offset.
void PerfDataReader::Impl::decode_queued_sample(const perf_order::QueuedRecord& r, Sample& s) {
  try {
    perf_sample::decode_sample(info.attrs[r.attr_index], r.data, r.size, s);
  } catch (const FormatError& e) {
    // Validated when read; reaching this means a reader bug, still report it cleanly.
    throw InputError::at_offset(path, r.file_offset, "SAMPLE record: " + std::string(e.what()));
  }
  s.attr_index = r.attr_index;
  s.file_offset = r.file_offset;
}

void PerfDataReader::Impl::deliver_sample(const Sample& s) {
  try {
    handler->on_sample(s);
  } catch (...) {
    handler_threw = true;
    throw;
  }
}

// Reading thread: queue a batch for delivery, waiting while kMaxBatches are
// pending (memory stays bounded by a few rounds).
void PerfDataReader::Impl::hand_over(Batch&& b) {
  std::unique_lock<std::mutex> lock(batch_mutex);
  const uint64_t budget = memory_limit() / 4;
  batch_cv.wait(lock, [&] {
    return (batches.size() < kMaxBatches && (pending_batch_bytes == 0 || pending_batch_bytes + b.bytes <= budget)) ||
           stop_reading;
  });
  if (stop_reading) throw HandlerStopped();
  pending_batch_bytes += b.bytes;
  batches.push_back(std::move(b));
  batch_cv.notify_all();
}

// Reading thread: wait until the calling thread has delivered everything
// handed over, so that info can change without racing the handler.
void PerfDataReader::Impl::wait_until_delivered() {
  if (!threaded) return;
  std::unique_lock<std::mutex> lock(batch_mutex);
  batch_cv.wait(lock, [&] { return (batches.empty() && !delivering) || stop_reading; });
  if (stop_reading) throw HandlerStopped();
}

void PerfDataReader::Impl::run_threaded(Progress& progress, uint64_t start) {
  threaded = true;
  std::thread reader([&] {
    Batch end;
    end.last = true;
    try {
      read_loop(start, progress);
    } catch (const HandlerStopped&) {
      return;  // the calling thread is unwinding already
    } catch (...) {
      end.error = std::current_exception();
    }
    if (!end.error) {
      try {
        queue.flush_all_into(end.records, end.arena);
        decode_samples(end);
      } catch (...) {
        end.error = std::current_exception();
      }
    }
    std::lock_guard<std::mutex> lock(batch_mutex);
    batches.push_back(std::move(end));  // never blocks: the last one may exceed kMaxBatches
    batch_cv.notify_all();
  });
  auto stop = [&] {
    {
      std::lock_guard<std::mutex> lock(batch_mutex);
      stop_reading = true;
      batch_cv.notify_all();
    }
    reader.join();
  };
  std::exception_ptr read_error;
  try {
    for (;;) {
      Batch b;
      {
        std::unique_lock<std::mutex> lock(batch_mutex);
        batch_cv.wait(lock, [&] { return !batches.empty(); });
        b = std::move(batches.front());
        batches.pop_front();
        delivering = true;
        batch_cv.notify_all();  // room for the reading thread to queue the next one
      }
      for (size_t i = 0; i < b.records.size(); ++i) {
        if (b.records[i].type == abi::SAMPLE) deliver_sample(b.samples[i]);
        else deliver(b.records[i]);
      }
      if (map && b.release_upto) release_consumed(b.release_upto);
      if (b.last) {
        read_error = b.error;
        std::lock_guard<std::mutex> lock(batch_mutex);
        pending_batch_bytes -= b.bytes;
        delivering = false;
        batch_cv.notify_all();
        break;
      }
      b.records.clear();
      b.arena.clear();  // frees the owned records' blocks
      {
        std::lock_guard<std::mutex> lock(batch_mutex);
        pending_batch_bytes -= b.bytes;
        b.bytes = 0;
        delivering = false;
        if (spare_batches.size() < kMaxBatches) spare_batches.push_back(std::move(b));
        batch_cv.notify_all();
      }
    }
  } catch (...) {
    handler_threw = true;
    stop();
    throw;
  }
  reader.join();
  threaded = false;
  // Damage: the same handling as the single-threaded path, now that the
  // reading thread is gone and the queue is ours.
  if (read_error) {
    try {
      std::rethrow_exception(read_error);
    } catch (const InputError& e) {
      if (!options.partial) throw;
      stats.damaged = true;
      warn(std::string(e.what()) + " (partial read: stopped here, the records before it were kept)");
    }
    queue.flush_all([this](const perf_order::QueuedRecord& r) { deliver(r); });
  }
}

void PerfDataReader::Impl::run(RecordHandler& h) {
  if (read_called) throw UsageError("PerfDataReader::read called twice");
  read_called = true;
  handler = &h;
  Progress progress("reading " + path, stream ? 0 : end - pos, options.progress);
  const uint64_t start = pos;
  if (options.reading_thread && map) {
    run_threaded(progress, start);
  } else {
    try {
      read_loop(start, progress);
    } catch (const InputError& e) {
      if (handler_threw || !options.partial) throw;
      stats.damaged = true;
      warn(std::string(e.what()) + " (partial read: stopped here, the records before it were kept)");
    }
    queue.flush_all([this](const perf_order::QueuedRecord& r) { deliver(r); });
  }
  for (size_t t = 0; t < type_counts.size(); ++t)
    if (type_counts[t]) stats.records_by_type[uint32_t(t)] += type_counts[t];
  stats.unordered = queue.unordered();
  stats.max_buffered_records = queue.max_size();
  if (names_dirty) resolve_names();
  if (!info.has_sample_time) {
    // Pipe mode / killed recorder: no SAMPLE_TIME feature; use what was read.
    info.first_sample_time = stats.first_sample_time;
    info.last_sample_time = stats.last_sample_time;
  }
  if (options.progress) progress.finish();
}

PerfDataReader::PerfDataReader(std::string path, const ReadOptions& options) : impl_(std::make_unique<Impl>()) {
  impl_->path = std::move(path);
  impl_->options = options;
  impl_->open();
}

PerfDataReader::~PerfDataReader() = default;

const PerfFileInfo& PerfDataReader::info() const { return impl_->info; }
const ReadStats& PerfDataReader::stats() const { return impl_->stats; }
const std::string& PerfDataReader::path() const { return impl_->path; }

void PerfDataReader::read(RecordHandler& handler, const ReadOptions& options) {
  impl_->options = options;
  impl_->run(handler);
}

void PerfDataReader::read(RecordHandler& handler) { impl_->run(handler); }

}  // namespace fg
