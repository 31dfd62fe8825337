// The record stream of a perf.data: framing (mmap'ed data section or pipe),
// payloads outside hdr.size, COMPRESSED records, and what the reader does
// with each record: kernel records decoded once (perf_record::decode_event,
// perf_sample::decode_sample), counted and queued for time order; user
// records (HEADER_*, FINISHED_ROUND, ...) acted on at once; due records
// delivered to the handler.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>

#include "folded/prefetch.h"
#include "perf/perf_reader_impl.h"
#include "perf/sample_decoder.h"

namespace fg {

using perf_abi::FormatError;
using perf_abi::load;
namespace abi = perf_abi;
using perf_read::H;

InputError PerfDataReader::Impl::record_error(const std::string& what) const {
  std::string where = abi::record_type_name(cur_type) + " record (size " + std::to_string(cur_size) + ")";
  if (cur_inner)
    where = "COMPRESSED record: decompressed " + where + " at stream byte " + std::to_string(cur_inner_offset);
  return InputError::at_offset(path, cur_offset, where + ": " + what);
}

// Each record's header is the first touch of its cache lines, and those
// loads waited for memory one after another: 94% of next_record's time,
// 5% of a busy fold (busyp1.data). The lines a few records ahead are
// prefetched, so that the misses overlap.
void PerfDataReader::Impl::prefetch_ahead() {
  constexpr uint64_t kAhead = 2048, kLine = 64;
  const uint64_t upto = std::min(end, pos + kAhead);
  // Anywhere else (another file of a directory, a section read again):
  // start at this record.
  if (prefetched < pos || prefetched > upto + kLine) prefetched = pos & ~(kLine - 1);
  for (; prefetched < upto; prefetched += kLine) prefetch_for_read(map + prefetched);
}

// Asks the kernel to read ahead the parts of the next 64 MB of the input that
// are not in the page cache, every 8 MB of progress (when the reading is
// within 56 MB of what was asked for). Where the file is not cached (copied
// from elsewhere, recorded a while ago, or partly reclaimed, as these VMs'
// DAMON reclaim does), only the mapping's own read-ahead brought it
// in, a window per fault, each a wait: folding a 534 MB recording out of the
// cache took 0.84-1.85 s, now 0.92-0.99 s (warm: 0.8-0.9 s). The pages go to
// the page cache, not this process's resident set. One madvise per MB, at MB
// boundaries of the file: per call the kernel reads at most its read-ahead
// window (read_ahead_kb, often 128 KB) or the device's I/O size from where
// the call starts. mincore skips the MBs already cached: asking for those
// too cost a warm fold 1-3% (it tells the page cache's state for a file this
// process owns or may write; for others only what is mapped here, and then
// every MB is asked for).
void PerfDataReader::Impl::read_ahead_file() {
  constexpr uint64_t kWindow = 64u << 20, kStep = 8u << 20, kChunk = 1u << 20;
  if (advised >= end || pos + (kWindow - kStep) < advised) return;
  static const uint64_t kPage = uint64_t(sysconf(_SC_PAGESIZE));
  const uint64_t base = std::max(advised, pos) & ~(kPage - 1);
  const uint64_t to = std::min(end, pos + kWindow);
  residency.resize((to - base + kPage - 1) / kPage);
  const bool known = ::mincore(const_cast<uint8_t*>(map) + base, to - base, residency.data()) == 0;
  for (uint64_t from = base; from < to;) {
    const uint64_t next = std::min(to, (from + kChunk) & ~(kChunk - 1));
    const auto first = residency.begin() + std::ptrdiff_t((from - base) / kPage);
    const auto last = residency.begin() + std::ptrdiff_t((next - base + kPage - 1) / kPage);
    if (!known || std::any_of(first, last, [](unsigned char in) { return !(in & 1); }))
      ::madvise(const_cast<uint8_t*>(map) + from, next - from, MADV_WILLNEED);  // a hint: errors ignored
    from = next;
  }
  advised = to;
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
  prefetch_ahead();
  read_ahead_file();
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
  if (type < abi::USER_TYPE_START) process_kernel_record(type, rec, size, offset, stable);
  else process_user_record(type, rec, size, offset, inner);
}

// A kernel record is decoded here, once: the bookkeeping reads the decoded
// record now, and the handler gets it when its time comes. A SAMPLE is queued
// as its bytes (usually in place in the mapped file; copying ~370-byte
// decoded Samples would double a round's memory) and decoded again for
// delivery; every other kind is queued in its decoded form (store_event).
void PerfDataReader::Impl::process_kernel_record(uint32_t type, const uint8_t* rec, uint32_t size, uint64_t offset,
                                                 bool stable) {
  if (info.attrs.empty()) throw FormatError("kernel record before any event attr (HEADER_ATTR)");
  const size_t ai = selector.select(type, rec, size);
  const EventAttr& attr = info.attrs[ai];
  if (type == abi::SAMPLE) {
    perf_sample::decode_sample(attr, rec, size, parse_sample);  // validates the whole record
    const uint64_t time = parse_sample.time;
    ++stats.samples;
    ++stats.samples_per_attr[ai];
    if (attr.has(sample_bits::TIME)) {
      if (!stats.first_sample_time || time < stats.first_sample_time) stats.first_sample_time = time;
      if (time > stats.last_sample_time) stats.last_sample_time = time;
    }
    queue.push(time, rec, size, offset, static_cast<uint32_t>(ai), type, !stable);
  } else {
    if (!perf_record::decode_event(attr, type, rec, size, offset, event)) return;  // counted only
    if (type == abi::LOST_SAMPLES) {
      ++stats.lost_samples_records;
      stats.lost_samples += event.lost.lost;
    } else if (type == abi::LOST) {
      ++stats.lost_records;
      stats.lost_events += event.lost.lost;
    }
    const size_t n = perf_record::stored_size(event);
    perf_record::store_event(event, queue.push_owned(event.time, static_cast<uint32_t>(n), offset,
                                                     static_cast<uint32_t>(ai), type));
  }
  if (queue.footprint() > queue_limit) check_queue_budget();
}

// HEADER_*, FINISHED_ROUND, EVENT_UPDATE, COMPRESSED, AUXTRACE: acted on when
// read (they are not ordered by time).
void PerfDataReader::Impl::process_user_record(uint32_t type, const uint8_t* rec, uint32_t size, uint64_t offset,
                                               bool inner) {
  switch (type) {
    case abi::FINISHED_ROUND:
      // A directory's files are read one after another: a round of one
      // would deliver records that another file's earlier ones must precede.
      if (dir_files.empty()) finish_round(offset);
      break;
    case abi::HEADER_ATTR:
    case abi::HEADER_TRACING_DATA:
    case abi::HEADER_BUILD_ID:
    case abi::HEADER_FEATURE:
    case abi::EVENT_UPDATE:
      wait_until_delivered();  // these change info, which the handler may be reading
      process_header_record(type, rec, size, offset, inner);
      break;
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

// FINISHED_ROUND: deliver what perf's rule says is due (perf_order), or hand
// it to the delivering thread as a batch with its samples decoded.
void PerfDataReader::Impl::finish_round(uint64_t offset) {
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
  perf_record::load_event(r.data, delivered_event);  // stored by process_kernel_record
  try {
    perf_record::deliver_event(delivered_event, *handler);
  } catch (...) {
    handler_threw = true;
    throw;
  }
}

}  // namespace fg
