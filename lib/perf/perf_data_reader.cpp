#include "perf/perf_data_reader.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perf/perf_features.h"
#include "perf/perf_reader_impl.h"

namespace fg {

using perf_abi::FormatError;
using perf_abi::load;
namespace abi = perf_abi;
using perf_read::H;

std::string perf_record_type_name(uint32_t type) { return perf_abi::record_type_name(type); }

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
  if (S_ISDIR(st.st_mode)) {
    open_directory();
    if (fstat(fd, &st) != 0) throw InputError(path + ": cannot stat: " + std::strerror(errno));
  }
  uint8_t first[perf_abi::FILE_HEADER_SIZE] = {};
  size_t avail = 0;
  if (S_ISREG(st.st_mode)) {
    info.file_size = static_cast<uint64_t>(st.st_size) + dir_bytes;
    if (st.st_size > 0) {
      void* m = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
      if (m == MAP_FAILED) throw InputError(path + ": cannot mmap: " + std::strerror(errno));
      map = own_map = static_cast<const uint8_t*>(m);
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

// `perf record --threads` writes a directory (perf's data.c): 'data' is a
// perf.data file with the header, attrs and features, and each data.N holds
// one recording thread's records, with no header and no FINISHED_ROUND.
// The data.N files are mapped here, in the order of N; 'data' becomes the
// file that open() reads.
void PerfDataReader::Impl::open_directory() {
  const std::string dir = path;
  std::vector<std::pair<uint64_t, std::string>> names;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* e = ::readdir(d)) {
      const std::string n = e->d_name;
      if (n.size() <= 5 || n.compare(0, 5, "data.") != 0) continue;
      const std::string num = n.substr(5);
      if (num.size() > 9 || num.find_first_not_of("0123456789") != std::string::npos) continue;
      names.emplace_back(std::stoull(num), n);
    }
    ::closedir(d);
  } else {
    throw InputError(dir + ": cannot list the directory: " + std::strerror(errno));
  }
  std::sort(names.begin(), names.end());
  ::close(fd);
  own_fd = false;
  path = dir + "/data";
  fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw InputError(dir + ": is a directory without a readable 'data' file (" + std::strerror(errno) +
                     "): not a `perf record --threads` directory");
  own_fd = true;
  for (const auto& [number, name] : names) {
    DirFile f;
    f.path = dir + "/" + name;
    const int file_fd = ::open(f.path.c_str(), O_RDONLY | O_CLOEXEC);
    if (file_fd < 0) throw InputError(f.path + ": cannot open: " + std::strerror(errno));
    struct stat st;
    const bool regular = fstat(file_fd, &st) == 0 && S_ISREG(st.st_mode);
    if (regular && st.st_size > 0) {
      void* m = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, file_fd, 0);
      if (m == MAP_FAILED) {
        ::close(file_fd);
        throw InputError(f.path + ": cannot mmap: " + std::strerror(errno));
      }
      f.map = static_cast<const uint8_t*>(m);
      f.size = static_cast<size_t>(st.st_size);
      madvise(m, f.size, MADV_SEQUENTIAL);
    }
    ::close(file_fd);
    if (!regular) continue;
    dir_bytes += f.size;
    info.dir_files.push_back(f.path);
    dir_files.push_back(std::move(f));
  }
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
  if (info.has_feature(perf_abi::FEAT_DIR_FORMAT) && info.dir_files.empty())
    warn(path + ": DIR_FORMAT feature set: this is the 'data' file of a `perf record --threads` directory; "
                "the records of its data.N files are missing (give the directory instead)");
  resolve_names();
  if (auto w = selector.reset(info.attrs); !w.empty()) warn(path + ": " + w);
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

// The records of the file being read (map, pos, end, or the pipe) through
// process(), until its end or damage, or until max_bytes more were read.
// Returns whether the end was reached.
bool PerfDataReader::Impl::read_records(const uint64_t start, Progress* progress, uint64_t max_bytes) {
  RawRecord r;
  uint64_t rounds_seen = 0;
  const uint64_t from = pos;
  while (pos - from < max_bytes) {
    if (!next_record(r)) {
      if (!zpending.empty())
        throw InputError::at_offset(path, cur_offset, "COMPRESSED data ends inside a record (" +
                                                          std::to_string(zpending.size()) + " bytes left over)");
      return true;
    }
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
    if (progress && options.progress) progress->update(stream ? stream->offset() : pos - start);
  }
  return false;
}

// Makes f the file being read (or, called again, puts its state back).
void PerfDataReader::Impl::swap_reading_state(DirFile& f) {
  std::swap(path, f.path);
  std::swap(pos, f.pos);
  std::swap(zstd, f.zstd);
  std::swap(zpending, f.zpending);
  std::swap(zstream_offset, f.zstream_offset);
  std::swap(advised, f.advised);
  map = f.map;
  end = f.size;
}

// The data.N files of a directory after its 'data' file, merged: each is
// read for a turn of dir_turn_bytes; then every queued record up to the
// earliest of the files' last times is delivered (no file holds an earlier
// one still unread), and the mapped pages no queued record needs are
// released. Memory follows the chunks and the files' skew, not the input.
void PerfDataReader::Impl::read_dir_files(Progress& progress, uint64_t main_bytes) {
  if (dir_files.empty()) return;
  if (threaded) throw std::logic_error("perf.data directories are read without the reading thread");
  // The 'data' file's cursor again when this returns or throws.
  struct MainCursor {
    Impl& impl;
    const uint8_t* map;
    uint64_t pos, end;
    ~MainCursor() { impl.map = map, impl.pos = pos, impl.end = end; }
  } main_cursor{*this, map, pos, end};
  auto deliver_due = [this](const perf_order::QueuedRecord& r) { deliver(r); };
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const uint64_t turn = options.dir_turn_bytes ? options.dir_turn_bytes : kDirTurnBytes;
  size_t left = dir_files.size();
  while (left) {
    for (DirFile& f : dir_files) {
      if (f.finished) continue;
      const uint64_t pushed_before = queue.pushed();
      swap_reading_state(f);
      bool at_end;
      try {
        at_end = read_records(0, nullptr, turn);
      } catch (const InputError& e) {
        swap_reading_state(f);  // the error already names f's path and offset
        // --partial: a damaged data.N ends there, the others are read on
        // (each is one recording thread's CPUs: stopping them all dropped
        // every other CPU's later records).
        stop_partially(e, "this file stopped here");
        at_end = true;
      } catch (...) {
        swap_reading_state(f);
        throw;
      }
      swap_reading_state(f);
      if (queue.pushed() != pushed_before) f.last_time = queue.last_push_time();
      if (at_end) {
        f.finished = true;
        --left;
      }
    }
    uint64_t done = main_bytes;
    for (const DirFile& f : dir_files) done += f.pos;
    if (options.progress) progress.update(done);
    if (!left) break;  // the rest is delivered with everything else at the end
    uint64_t limit = UINT64_MAX;
    for (const DirFile& f : dir_files)
      if (!f.finished) limit = std::min(limit, f.last_time);
    queue.flush_until(limit, deliver_due);
    for (DirFile& f : dir_files) {
      const uint64_t upto = queue.min_file_offset_in(f.map, f.map + f.size, f.pos) & ~(page - 1);
      if (f.map && upto > f.released + (4u << 20)) {
        madvise(const_cast<uint8_t*>(f.map) + f.released, upto - f.released, MADV_DONTNEED);
        f.released = upto;
      }
    }
  }
}

// The reading side: every record through process() until the end or damage.
void PerfDataReader::Impl::read_loop(const uint64_t start, Progress& progress) {
  read_records(start, &progress);
  read_dir_files(progress, end - start);
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

void PerfDataReader::Impl::run(RecordHandler& h) {
  if (read_called) throw UsageError("PerfDataReader::read called twice");
  read_called = true;
  handler = &h;
  Progress progress("reading " + path, stream ? 0 : end - pos + dir_bytes, options.progress);
  const uint64_t start = pos;
  // A directory's data.N files are merged by read_dir_files, which delivers
  // after each turn: on this thread (the reading thread hands over batches
  // at rounds, which a directory has none of).
  if (options.reading_thread && map && dir_files.empty()) {
    run_threaded(progress, start);
  } else {
    try {
      read_loop(start, progress);
    } catch (const InputError& e) {
      stop_partially(e, "stopped here");
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
