// ReadOptions::reading_thread: records read, validated and decompressed on a
// second thread must reach the handler exactly as without it (same calls in the
// same order, on the calling thread, with the same info() visible, the same
// stats, the same damage handling), and a handler's exception must stop the
// reading thread without a hang. Every test reads the same input both ways.
#include <gtest/gtest.h>
#include <zstd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <future>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "diagnostics/input_error.h"
#include "perf/perf_data_reader.h"
#include "perf_bytes.h"
#include "test_support.h"

using namespace fg;
using fg::test::testdata;

namespace {

std::string fixture(const std::string& name) { return testdata("perf/" + name + ".data"); }

// Every committed fixture: file mode, pipe mode in a file (pipe, sched_pipe),
// zstd, two events, tracepoints, switch events, fork+exec, DWARF stacks,
// MMAP2 build-ids.
const std::vector<std::string> kFixtures = {"fp",    "dwarf",      "pipe",   "zstd", "two_clocks",
                                            "sched", "sched_pipe", "switch", "exec", "buildid_mmap"};

using fg::test::get;
using fg::test::put;
using fg::test::set;

uint64_t fnv1a(const void* p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<const uint8_t*>(p)[i]) * 1099511628211ull;
  return h;
}

std::string hex(uint64_t v) {
  char b[20];
  std::snprintf(b, sizeof b, "%llx", static_cast<unsigned long long>(v));
  return b;
}

// What the handler can see of info() during a callback. The reading thread
// may change info (HEADER_ATTR, EVENT_UPDATE, ...) only while no handler call
// runs, so this must read the same at every call in both modes (and without
// a data race: run under TSan).
std::string info_snapshot(const PerfFileInfo& info) {
  std::string s = "attrs=" + std::to_string(info.attrs.size());
  for (const auto& a : info.attrs) s += "," + a.name;
  s += " host=" + info.hostname + " build_ids=" + std::to_string(info.build_ids.size()) +
       " tracing=" + std::to_string(info.tracing_data.size()) + " compressed=" + std::to_string(info.compressed) +
       " comp_type=" + std::to_string(info.comp_type);
  return s;
}

// Records every handler call with the fields a consumer uses (samples: pid,
// tid, callchain words, hashes of RAW / user stack / registers), and a line
// whenever what info() says has changed since the previous call.
struct Trace : RecordHandler {
  explicit Trace(const PerfDataReader& r) : reader(r) {}
  const PerfDataReader& reader;
  std::vector<std::string> seq;
  uint64_t samples = 0;
  const std::thread::id caller = std::this_thread::get_id();
  uint64_t off_thread_calls = 0;
  std::string last_info;
  // Sleep briefly every N calls so that the reading thread runs ahead and
  // fills its batch queue (0 = never).
  size_t pause_every = 0;

  void add(std::string s) {
    if (std::this_thread::get_id() != caller) ++off_thread_calls;
    std::string now = info_snapshot(reader.info());
    if (now != last_info) {
      seq.push_back("info " + now);
      last_info = std::move(now);
    }
    seq.push_back(std::move(s));
    if (pause_every && seq.size() % pause_every == 0) std::this_thread::sleep_for(std::chrono::microseconds(300));
  }
  static std::string head(const char* type, uint64_t time, uint64_t offset) {
    return std::string(type) + " t=" + std::to_string(time) + " off=" + std::to_string(offset);
  }
  void on_sample(const Sample& s) override {
    ++samples;
    std::string l = head("SAMPLE", s.time, s.file_offset);
    l += " attr=" + std::to_string(s.attr_index) + ":" + (s.attr ? s.attr->name : "?");
    l += " pid=" + std::to_string(s.pid) + " tid=" + std::to_string(s.tid) + " cpu=" + std::to_string(s.cpu);
    l += " ip=" + hex(s.ip) + " period=" + std::to_string(s.period) + " id=" + std::to_string(s.id) +
         " misc=" + std::to_string(s.misc) + " cc=";
    for (uint64_t k = 0; k < s.callchain_nr; ++k) l += hex(s.callchain[k]) + ",";
    if (s.raw) l += " raw=" + hex(fnv1a(s.raw, s.raw_size));
    if (s.stack_user)
      l += " stack=" + hex(fnv1a(s.stack_user, s.stack_user_size)) + "/" + std::to_string(s.stack_user_dyn_size);
    if (s.regs_user) {
      size_t n = size_t(__builtin_popcountll(s.regs_user_mask));
      l += " regs=" + hex(fnv1a(s.regs_user, n * 8));
    }
    add(std::move(l));
  }
  void on_mmap(const MmapRecord& m) override {
    add(head(m.is_mmap2 ? "MMAP2" : "MMAP", m.time, m.file_offset) + " pid=" + std::to_string(m.pid) +
        " tid=" + std::to_string(m.tid) + " start=" + hex(m.start) + " len=" + hex(m.len) +
        " pgoff=" + hex(m.pgoff) + " exec=" + std::to_string(m.executable) + " " + std::string(m.filename) +
        (m.build_id ? " bid=" + hex(fnv1a(m.build_id, m.build_id_size)) : std::string()));
  }
  void on_comm(const CommRecord& c) override {
    add(head("COMM", c.time, c.file_offset) + " pid=" + std::to_string(c.pid) + " tid=" + std::to_string(c.tid) +
        " exec=" + std::to_string(c.exec) + " " + std::string(c.comm));
  }
  std::string task(const char* type, const TaskRecord& t) {
    return head(type, t.time, t.file_offset) + " pid=" + std::to_string(t.pid) + " ppid=" + std::to_string(t.ppid) +
           " tid=" + std::to_string(t.tid) + " ptid=" + std::to_string(t.ptid) +
           " body_time=" + std::to_string(t.body_time) + " cpu=" + std::to_string(t.cpu);
  }
  void on_fork(const TaskRecord& t) override { add(task("FORK", t)); }
  void on_exit(const TaskRecord& t) override { add(task("EXIT", t)); }
  void on_switch(const SwitchRecord& s) override {
    add(head("SWITCH", s.time, s.file_offset) + " out=" + std::to_string(s.out) +
        " preempt=" + std::to_string(s.preempt) + " wide=" + std::to_string(s.cpu_wide) +
        " pid=" + std::to_string(s.pid) + " tid=" + std::to_string(s.tid) +
        " next_prev=" + std::to_string(s.next_prev_pid) + "/" + std::to_string(s.next_prev_tid) +
        " cpu=" + std::to_string(s.cpu));
  }
  void on_lost(const LostRecord& l) override {
    add(head("LOST", l.time, l.file_offset) + " lost=" + std::to_string(l.lost) +
        " samples=" + std::to_string(l.samples) + " id=" + std::to_string(l.id) + " cpu=" + std::to_string(l.cpu));
  }
  void on_ksymbol(const KsymbolRecord& k) override {
    add(head("KSYMBOL", k.time, k.file_offset) + " addr=" + hex(k.addr) + " len=" + std::to_string(k.len) +
        " type=" + std::to_string(k.ksym_type) + " flags=" + std::to_string(k.flags) + " " + std::string(k.name));
  }
};

// One read of a file: the calls the handler received and how it ended.
struct Outcome {
  bool opened = false;       // the constructor did not throw
  std::string error;         // InputError text (constructor or read()); empty if none
  std::vector<std::string> seq;
  uint64_t samples = 0;
  ReadStats stats;
  std::string info_after;    // info() once read() has returned
  uint64_t off_thread_calls = 0;
};

Outcome read_with(const std::string& path, const ReadOptions& opt, size_t pause_every = 0) {
  Outcome o;
  std::unique_ptr<PerfDataReader> r;
  try {
    r = std::make_unique<PerfDataReader>(path, opt);
  } catch (const InputError& e) {
    o.error = e.what();
    return o;
  }
  o.opened = true;
  Trace t(*r);
  t.pause_every = pause_every;
  try {
    r->read(t, opt);
  } catch (const InputError& e) {
    o.error = e.what();
  }
  o.seq = std::move(t.seq);
  o.samples = t.samples;
  o.stats = r->stats();
  const PerfFileInfo& info = r->info();
  o.info_after = info_snapshot(info) + " pipe=" + std::to_string(info.pipe_mode) +
                 " first=" + std::to_string(info.first_sample_time) + " last=" + std::to_string(info.last_sample_time);
  o.off_thread_calls = t.off_thread_calls;
  return o;
}

// The first call where two sequences differ, so that a failure prints one
// line pair instead of thousands.
std::string sequence_difference(const std::vector<std::string>& single, const std::vector<std::string>& threaded) {
  size_t n = std::min(single.size(), threaded.size());
  for (size_t i = 0; i < n; ++i)
    if (single[i] != threaded[i])
      return "call " + std::to_string(i) + " differs:\n  without reading thread: " + single[i] +
             "\n  with reading thread:    " + threaded[i];
  if (single.size() != threaded.size())
    return std::to_string(single.size()) + " calls without the reading thread, " + std::to_string(threaded.size()) +
           " with it; first extra: " + (single.size() > n ? single[n] : threaded[n]);
  return "";
}

void expect_same_stats(const ReadStats& a, const ReadStats& b) {
  EXPECT_EQ(a.records_by_type, b.records_by_type);
  EXPECT_EQ(a.samples_per_attr, b.samples_per_attr);
  EXPECT_EQ(a.samples, b.samples);
  EXPECT_EQ(a.lost_records, b.lost_records);
  EXPECT_EQ(a.lost_events, b.lost_events);
  EXPECT_EQ(a.lost_samples_records, b.lost_samples_records);
  EXPECT_EQ(a.lost_samples, b.lost_samples);
  EXPECT_EQ(a.first_sample_time, b.first_sample_time);
  EXPECT_EQ(a.last_sample_time, b.last_sample_time);
  EXPECT_EQ(a.unordered, b.unordered);
  EXPECT_EQ(a.rounds, b.rounds);
  EXPECT_EQ(a.bytes, b.bytes);
  EXPECT_EQ(a.compressed_bytes, b.compressed_bytes);
  EXPECT_EQ(a.decompressed_bytes, b.decompressed_bytes);
  EXPECT_EQ(a.max_buffered_records, b.max_buffered_records);
  EXPECT_EQ(a.damaged, b.damaged);
  EXPECT_EQ(a.warnings, b.warnings);
}

void expect_same(const Outcome& single, const Outcome& threaded) {
  EXPECT_EQ(single.opened, threaded.opened);
  EXPECT_EQ(single.error, threaded.error);
  EXPECT_EQ(sequence_difference(single.seq, threaded.seq), "");
  EXPECT_EQ(single.samples, threaded.samples);
  if (single.opened && threaded.opened) expect_same_stats(single.stats, threaded.stats);
  EXPECT_EQ(single.info_after, threaded.info_after);
  EXPECT_EQ(threaded.off_thread_calls, 0u) << "the handler must run on the thread that called read()";
}

// Reads path without the reading thread, then `repeats` times with it (every
// other time with a handler that pauses, so that batches pile up), and
// expects the same outcome each time. Returns the single-threaded outcome.
Outcome compare_modes(const std::string& path, ReadOptions opt, int repeats = 2) {
  opt.reading_thread = false;
  Outcome single = read_with(path, opt);
  EXPECT_EQ(single.off_thread_calls, 0u);
  opt.reading_thread = true;
  for (int i = 0; i < repeats; ++i) {
    SCOPED_TRACE("reading thread, run " + std::to_string(i) + (i % 2 ? " (pausing handler)" : ""));
    expect_same(single, read_with(path, opt, i % 2 ? 64 : 0));
  }
  return single;
}

std::string write_temp(const std::string& name, const std::string& bytes) {
  static std::string dir = test::temp_dir();
  std::string p = dir + "/" + name;
  std::remove(p.c_str());  // rewriting in place would make ext4 flush on truncate (slow)
  test::write_file(p, bytes);
  return p;
}

struct Rec {
  size_t offset;
  uint32_t type;
  uint16_t size;
};

// Independent walk over the outer records of a (file or pipe mode) perf.data.
std::vector<Rec> walk(const std::string& f) {
  bool pipe = get<uint64_t>(f, 8) == 16;
  size_t pos = pipe ? 16 : get<uint64_t>(f, 40);
  size_t end = pipe ? f.size() : pos + get<uint64_t>(f, 48);
  std::vector<Rec> v;
  while (pos + 8 <= end) {
    Rec r{pos, get<uint32_t>(f, pos), get<uint16_t>(f, pos + 6)};
    if (r.size < 8) break;
    v.push_back(r);
    pos += r.size;
    if (r.type == 66) pos += get<uint32_t>(f, r.offset + 8);  // HEADER_TRACING_DATA payload
  }
  return v;
}

std::vector<Rec> records_of_type(const std::vector<Rec>& recs, uint32_t type) {
  std::vector<Rec> out;
  for (const Rec& r : recs)
    if (r.type == type) out.push_back(r);
  return out;
}

// First, middle and last of v (damage in the first batch, a middle one, the last).
template <typename T>
std::vector<T> first_middle_last(const std::vector<T>& v) {
  if (v.empty()) return {};
  return {v.front(), v[v.size() / 2], v.back()};
}

// Byte offset of the callchain nr inside a SAMPLE record with this sample_type.
size_t callchain_nr_offset(uint64_t st) {
  namespace sb = sample_bits;
  size_t off = 8;
  for (uint64_t bit : {sb::IDENTIFIER, sb::IP, sb::TID, sb::TIME, sb::ADDR, sb::ID, sb::STREAM_ID, sb::CPU,
                       sb::PERIOD})
    if (st & bit) off += 8;
  return off;
}

// Runs f on its own thread and waits at most 60 s: a reader that hangs
// (a reading thread never joined) cannot be cancelled, so fail loudly rather
// than leave the suite hanging.
template <typename F>
void within_deadline(const std::string& what, F f) {
  auto task = std::make_shared<std::packaged_task<void()>>(std::move(f));
  std::future<void> done = task->get_future();
  std::thread runner([task] { (*task)(); });
  if (done.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
    std::fprintf(stderr, "FATAL: %s did not finish within 60 s (reading thread hang?)\n", what.c_str());
    std::fflush(stderr);
    std::abort();
  }
  runner.join();
  done.get();
}

int thread_count() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("Threads:", 0) == 0) return std::atoi(line.c_str() + 8);
  return -1;
}

// The thread count once it has stopped changing: a joined thread may still be
// counted for a moment (the kernel reaps it after pthread_join returns).
int settled_thread_count() {
  int last = thread_count(), same = 0;
  for (int i = 0; i < 200 && same < 5; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    int now = thread_count();
    same = now == last ? same + 1 : 0;
    last = now;
  }
  return last;
}

// --- Synthetic perf.data (the builders of perf_synthetic_test.cpp, cut down) ---

namespace sb = sample_bits;
constexpr uint64_t kSampleIdAll = 1ull << 18;
constexpr uint64_t kSampleType = sb::IDENTIFIER | sb::IP | sb::TID | sb::TIME | sb::PERIOD;

std::string attr_raw(uint64_t config) {
  std::string a(128, '\0');
  set<uint32_t>(a, 0, 1);  // SOFTWARE: config 0 cpu-clock, 1 task-clock
  set<uint32_t>(a, 4, 128);
  set<uint64_t>(a, 8, config);
  set<uint64_t>(a, 16, 1000);
  set<uint64_t>(a, 24, kSampleType);
  set<uint64_t>(a, 40, kSampleIdAll);
  return a;
}

std::string record(uint32_t type, uint16_t misc, std::string body) {
  body.resize((body.size() + 7) & ~size_t(7), '\0');
  std::string r;
  put<uint32_t>(r, type);
  put<uint16_t>(r, misc);
  put<uint16_t>(r, uint16_t(8 + body.size()));
  return r + body;
}

std::string sample(uint64_t id, uint64_t ip, int32_t tid, uint64_t time) {
  std::string b;
  put<uint64_t>(b, id);
  put<uint64_t>(b, ip);
  put<int32_t>(b, tid);
  put<int32_t>(b, tid);
  put<uint64_t>(b, time);
  put<uint64_t>(b, 1000);
  return record(9, 2, b);
}

// COMM with a TID|TIME|IDENTIFIER trailer.
std::string comm(uint64_t id, int32_t tid, const std::string& name, uint64_t time) {
  std::string b;
  put<int32_t>(b, tid);
  put<int32_t>(b, tid);
  std::string n = name;
  n.resize((n.size() + 8) & ~size_t(7), '\0');
  b += n;
  put<int32_t>(b, tid);
  put<int32_t>(b, tid);
  put<uint64_t>(b, time);
  put<uint64_t>(b, id);
  return record(3, 0, b);
}

std::string finished_round() { return record(68, 0, ""); }

std::string header_attr(uint64_t config, uint64_t id) {
  std::string b = attr_raw(config);
  put<uint64_t>(b, id);
  return record(64, 0, b);
}

std::string event_update_name(uint64_t id, const std::string& name) {
  std::string b;
  put<uint64_t>(b, 2);  // PERF_EVENT_UPDATE__NAME
  put<uint64_t>(b, id);
  b += name;
  b += '\0';
  return record(78, 0, b);
}

std::string feature_hostname(const std::string& host) {
  std::string b;
  put<uint64_t>(b, 3);  // HEADER_HOSTNAME
  std::string s = host;
  s.resize((s.size() + 8) & ~size_t(7), '\0');
  put<uint32_t>(b, uint32_t(s.size()));
  return record(80, 0, b + s);
}

std::string header_build_id(const std::string& filename) {
  std::string b;
  put<int32_t>(b, -1);
  for (int i = 0; i < 24; ++i) b += char(i < 20 ? 0x40 + i : 0);
  return record(67, 0, b + filename + '\0');
}

// HEADER_TRACING_DATA: the record, then `size` payload bytes outside it.
std::string header_tracing_data(uint32_t size) {
  std::string b;
  put<uint32_t>(b, size);
  return record(66, 0, b) + std::string(size, 't');
}

std::string file_mode(const std::string& data, uint64_t id) {
  const uint64_t attr_size = 128 + 16, ids_off = 104 + attr_size, data_off = ids_off + 8;
  std::string f = "PERFILE2";
  put<uint64_t>(f, 104);
  put<uint64_t>(f, attr_size);
  put<uint64_t>(f, 104);
  put<uint64_t>(f, attr_size);
  put<uint64_t>(f, data_off);
  put<uint64_t>(f, data.size());
  for (int i = 0; i < 6; ++i) put<uint64_t>(f, 0);  // event types, feature bitmap
  f += attr_raw(0);
  put<uint64_t>(f, ids_off);
  put<uint64_t>(f, 8);
  put<uint64_t>(f, id);
  return f + data;
}

std::string pipe_mode(const std::string& records) {
  std::string f = "PERFILE2";
  put<uint64_t>(f, 16);
  return f + records;
}

// The inner stream as COMPRESSED2 records, flushed at uneven points so that
// records straddle them.
std::string compressed2(const std::string& inner) {
  ZSTD_CStream* cs = ZSTD_createCStream();
  ZSTD_initCStream(cs, 1);
  std::string data;
  size_t pos = 0, piece = 301;
  while (pos < inner.size()) {
    size_t n = std::min(piece, inner.size() - pos);
    piece = piece * 7 % 5000 + 97;
    std::string out(ZSTD_compressBound(n) + 64, '\0');
    ZSTD_inBuffer in{inner.data() + pos, n, 0};
    ZSTD_outBuffer o{&out[0], out.size(), 0};
    ZSTD_compressStream(cs, &o, &in);
    ZSTD_flushStream(cs, &o);
    out.resize(o.pos);
    pos += n;
    std::string body;
    put<uint64_t>(body, out.size());
    data += record(83, 0, body + out);
  }
  ZSTD_freeCStream(cs);
  return data;
}

// One round of records with times in [base, base + 8), deliberately out of
// order, on both ids when two attrs exist.
std::string round_records(uint64_t base, bool two_attrs, int k) {
  std::string r;
  const uint64_t order[] = {3, 0, 5, 1, 7, 2, 6, 4};
  for (int i = 0; i < 8; ++i) {
    uint64_t id = two_attrs && i % 2 ? 200 : 100;
    r += sample(id, 0x400000 + uint64_t(k) * 16 + uint64_t(i), 10 + i % 3, base + order[i]);
  }
  r += comm(100, 10 + k % 3, "c" + std::to_string(k), base + 4);
  return r;
}

}  // namespace

// Every fixture, read both ways: the same calls (type, time, offset, sample
// pid/tid/callchain, ...) in the same order and the same stats.
TEST(PerfReadingThread, FixturesDeliverTheSameSequenceAndStats) {
  for (const std::string& name : kFixtures) {
    SCOPED_TRACE(name);
    Outcome single = compare_modes(fixture(name), ReadOptions{});
    EXPECT_EQ(single.error, "");
    EXPECT_GT(single.stats.samples, 0u);
    EXPECT_GT(single.seq.size(), single.stats.samples) << "samples and other records are both delivered";
  }
}

// zstd with the default and tiny output chunks: records straddle chunks and
// are copied into the arena whose blocks travel with the batches.
TEST(PerfReadingThread, ZstdWithTinyOutputChunks) {
  for (size_t chunk : {size_t(0), size_t(1), size_t(7), size_t(100)}) {
    SCOPED_TRACE("zstd_output_chunk " + std::to_string(chunk));
    ReadOptions opt;
    opt.zstd_output_chunk = chunk;
    Outcome single = compare_modes(fixture("zstd"), opt);
    EXPECT_EQ(single.error, "");
    EXPECT_GT(single.stats.decompressed_bytes, 0u);
  }
}

// Many rounds with info-changing records between them, a pausing handler so
// that the reading thread fills its batch queue, and the same stream inside
// COMPRESSED2 records: identical either way. Also checks that a second
// thread really exists while the handler runs.
TEST(PerfReadingThread, ManyRoundsPlainAndCompressed) {
  std::string inner;
  for (int k = 0; k < 400; ++k) {
    inner += round_records(1000 + 10 * uint64_t(k), false, k) + finished_round();
    if (k % 37 == 36) inner += feature_hostname("host-" + std::to_string(k));
  }
  for (bool compressed : {false, true}) {
    SCOPED_TRACE(compressed ? "COMPRESSED2" : "plain");
    std::string path = write_temp("rounds.data", file_mode(compressed ? compressed2(inner) : inner, 100));
    for (size_t chunk : {size_t(0), size_t(5)}) {
      if (!compressed && chunk) continue;
      ReadOptions opt;
      opt.zstd_output_chunk = chunk;
      Outcome single = compare_modes(path, opt, 4);
      EXPECT_EQ(single.error, "");
      EXPECT_EQ(single.stats.samples, 400u * 8);
      EXPECT_EQ(single.stats.rounds, 400u);
    }
    // The reading thread is alive at the first call: 400 rounds do not fit the batch queue.
    for (bool threaded : {false, true}) {
      ReadOptions opt;
      opt.reading_thread = threaded;
      PerfDataReader r(path, opt);
      struct Count : RecordHandler {
        int at_first = 0;
        void on_sample(const Sample&) override {
          if (!at_first) at_first = thread_count();
        }
      } h;
      int before = settled_thread_count();
      r.read(h, opt);
      if (threaded) {
        EXPECT_GE(h.at_first, before + 1) << "a reading thread runs alongside the handler";
      } else {
        EXPECT_LE(h.at_first, before) << "no thread without reading_thread";
      }
      EXPECT_LE(settled_thread_count(), before) << "the reading thread is gone once read() has returned";
    }
  }
}

// Records that change info in the middle of the data (HEADER_ATTR,
// EVENT_UPDATE, HEADER_FEATURE, HEADER_BUILD_ID, HEADER_TRACING_DATA, the
// first COMPRESSED2): the handler sees the same names and info at every call.
TEST(PerfReadingThread, InfoChangingRecordsMidStream) {
  std::string data;
  int k = 0;
  uint64_t t = 1000;
  auto rounds = [&](int n, bool two) {
    std::string s;
    for (int i = 0; i < n; ++i, ++k, t += 10) s += round_records(t, two, k) + finished_round();
    return s;
  };
  data += rounds(3, false);
  data += event_update_name(100, "renamed");
  data += rounds(3, false);
  data += header_attr(1, 200);  // task-clock, id 200
  data += rounds(3, true);
  data += feature_hostname("host-b");
  data += rounds(3, true);
  data += header_build_id("/usr/bin/synthetic");
  data += rounds(3, true);
  data += header_tracing_data(16);
  data += rounds(3, true);
  data += compressed2(rounds(6, true));
  data += rounds(2, true);
  data += event_update_name(200, "second");
  data += round_records(t, true, k);  // no FINISHED_ROUND after: delivered at the end

  for (bool pipe : {false, true}) {
    SCOPED_TRACE(pipe ? "pipe mode" : "file mode");
    // A complete pipe stream ends with a FINISHED_ROUND (else it was cut short).
    std::string bytes = pipe ? pipe_mode(header_attr(0, 100) + data + finished_round()) : file_mode(data, 100);
    std::string path = write_temp("midstream.data", bytes);
    Outcome single = compare_modes(path, ReadOptions{}, 4);
    ASSERT_EQ(single.error, "");
    // The changes are visible to the handler part-way through (so the test
    // covers them), in this order.
    std::vector<std::string> expect_seen = {"attr=0:cpu-clock", "attr=0:renamed", "attr=1:task-clock",
                                            "host=host-b",      "build_ids=1",    "tracing=16",
                                            "compressed=1",     "attr=1:second"};
    size_t from = 0;
    for (const std::string& needle : expect_seen) {
      auto it = std::find_if(single.seq.begin() + std::ptrdiff_t(from), single.seq.end(),
                             [&](const std::string& l) { return l.find(needle) != std::string::npos; });
      EXPECT_NE(it, single.seq.end()) << needle << " never seen (after call " << from << ")";
      if (it != single.seq.end()) from = size_t(it - single.seq.begin());
    }
    EXPECT_NE(single.seq.front().find("host= "), std::string::npos) << single.seq.front();
  }
}

// Truncation, as a killed perf leaves it (data size 0: read to the end) and
// as a cut file (data section past the end): the same records, warnings and
// errors both ways, with and without `partial`.
TEST(PerfReadingThread, TruncatedFilesGiveTheSameRecordsWarningsAndErrors) {
  for (const char* name : {"fp", "sched", "zstd", "dwarf", "two_clocks", "pipe", "sched_pipe"}) {
    SCOPED_TRACE(name);
    const std::string good = test::read_file(fixture(name));
    const bool pipe = get<uint64_t>(good, 8) == 16;
    auto recs = walk(good);
    ASSERT_GT(recs.size(), 10u);
    int read_errors = 0, partial_damage = 0;
    for (size_t eighth : {1, 3, 5, 7}) {
      const Rec& rec = recs[recs.size() * eighth / 8];
      for (size_t delta : {size_t(0), size_t(3), size_t(rec.size / 2 + 1)}) {
        size_t cut = rec.offset + delta;
        std::vector<std::string> variants;
        std::string cut_file = good.substr(0, cut);
        variants.push_back(cut_file);
        if (!pipe) {
          set<uint64_t>(cut_file, 48, 0);  // killed recorder
          variants.push_back(cut_file);
        }
        for (size_t v = 0; v < variants.size(); ++v) {
          std::string path = write_temp("trunc.data", variants[v]);
          for (bool partial : {false, true}) {
            SCOPED_TRACE("cut at " + std::to_string(cut) + (v ? " (data size 0)" : "") +
                         (partial ? " partial" : ""));
            ReadOptions opt;
            opt.partial = partial;
            Outcome single = compare_modes(path, opt, 1);
            if (single.opened && !single.error.empty()) ++read_errors;
            if (single.stats.damaged) ++partial_damage;
            if (partial) {
              EXPECT_EQ(single.error, "");
            }
            if (delta) {
              EXPECT_TRUE(partial ? single.stats.damaged : !single.error.empty()) << "the cut is found";
            }
          }
        }
      }
    }
    EXPECT_GT(read_errors, 0) << "some damage must be found by read(), i.e. by the reading thread";
    EXPECT_GT(partial_damage, 0);
  }
}

// A corrupted SAMPLE size or callchain nr early, in the middle and at the end
// of the data, and a corrupted zstd payload: the same records, warnings and
// errors both ways.
TEST(PerfReadingThread, CorruptedRecordsGiveTheSameRecordsWarningsAndErrors) {
  std::vector<std::pair<std::string, std::string>> damaged;  // (what, bytes)
  {
    const std::string good = test::read_file(fixture("sched"));
    for (const Rec& r : first_middle_last(records_of_type(walk(good), 9)))
      for (uint16_t size : {uint16_t(r.size + 8), uint16_t(r.size - 8), uint16_t(4), uint16_t(0xffff)}) {
        std::string bad = good;
        set<uint16_t>(bad, r.offset + 6, size);
        damaged.push_back({"sched: SAMPLE at " + std::to_string(r.offset) + " size " + std::to_string(size), bad});
      }
  }
  for (const char* name : {"fp", "pipe", "two_clocks"}) {
    const std::string good = test::read_file(fixture(name));
    PerfDataReader probe(fixture(name));
    Trace ignore(probe);
    probe.read(ignore);  // pipe mode: the attrs arrive as records
    ASSERT_FALSE(probe.info().attrs.empty());
    const uint64_t st = probe.info().attrs[0].sample_type;
    ASSERT_TRUE(st & sb::CALLCHAIN);
    ASSERT_FALSE(st & sb::READ);
    const size_t nr_at = callchain_nr_offset(st);
    for (const Rec& r : first_middle_last(records_of_type(walk(good), 9)))
      for (uint64_t nr : {uint64_t(1) << 60, uint64_t(r.size - nr_at) / 8}) {  // huge; one word too many
        std::string bad = good;
        set<uint64_t>(bad, r.offset + nr_at, nr);
        damaged.push_back({std::string(name) + ": callchain nr " + std::to_string(nr) + " at " +
                               std::to_string(r.offset),
                           bad});
      }
  }
  {
    const std::string good = test::read_file(fixture("zstd"));
    for (const Rec& r : first_middle_last(records_of_type(walk(good), 81))) {
      std::string bad = good;
      for (size_t at : {size_t(16), size_t(r.size / 2)}) bad[r.offset + at] = char(bad[r.offset + at] ^ 0x5a);
      damaged.push_back({"zstd: COMPRESSED payload at " + std::to_string(r.offset), bad});
    }
  }
  ASSERT_GE(damaged.size(), 30u);
  int errors = 0;
  for (const auto& [what, bytes] : damaged) {
    std::string path = write_temp("corrupt.data", bytes);
    for (bool partial : {false, true}) {
      SCOPED_TRACE(what + (partial ? " partial" : ""));
      ReadOptions opt;
      opt.partial = partial;
      for (size_t chunk : {size_t(0), size_t(3)}) {
        opt.zstd_output_chunk = chunk;
        Outcome single = compare_modes(path, opt, 1);
        EXPECT_TRUE(single.opened) << single.error;
        if (partial) {
          EXPECT_EQ(single.error, "");
        }
        errors += !single.error.empty();
        if (what.find("callchain") != std::string::npos) {
          EXPECT_TRUE(partial ? single.stats.damaged : !single.error.empty()) << "the damage is found";
        }
      }
    }
  }
  EXPECT_GT(errors, 20);
}

// A handler that throws on the first, a middle and the last sample: the
// exception comes out of read() unchanged after exactly the calls (and
// warnings) seen without the reading thread, no hang, and the reader is
// destroyed cleanly. Also on damaged files read with `partial`, where the
// last samples come from the flush after the damage.
namespace {

struct Stop : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Thrower : Trace {
  using Trace::Trace;
  uint64_t throw_at = 0;
  bool input_error = false;  // throw fg::InputError instead of Stop
  void on_sample(const Sample& s) override {
    Trace::on_sample(s);
    if (samples == throw_at) {
      if (input_error) throw InputError("handler gave up at sample " + std::to_string(samples));
      throw Stop("stop at sample " + std::to_string(samples));
    }
  }
};

struct ThrowOutcome {
  std::string caught;  // "Stop: ...", "InputError: ..." or "" (nothing thrown)
  std::vector<std::string> seq;
  uint64_t samples = 0, off_thread_calls = 0;
  std::vector<std::string> warnings;
};

ThrowOutcome read_throwing(const std::string& path, ReadOptions opt, uint64_t n, bool input_error) {
  ThrowOutcome o;
  auto reader = std::make_unique<PerfDataReader>(path, opt);
  Thrower h(*reader);
  h.throw_at = n;
  h.input_error = input_error;
  try {
    reader->read(h, opt);
  } catch (const Stop& e) {
    o.caught = std::string("Stop: ") + e.what();
  } catch (const InputError& e) {
    o.caught = std::string("InputError: ") + e.what();
  }
  o.seq = std::move(h.seq);
  o.samples = h.samples;
  o.off_thread_calls = h.off_thread_calls;
  o.warnings = reader->stats().warnings;
  reader.reset();  // joins nothing left behind, unmaps
  return o;
}

}  // namespace

TEST(PerfReadingThread, HandlerExceptionStopsTheReadingThread) {
  std::string inner;
  for (int k = 0; k < 300; ++k) {
    inner += round_records(1000 + 10 * uint64_t(k), false, k) + finished_round();
    if (k % 11 == 10) inner += event_update_name(100, "name-" + std::to_string(k));  // the reading thread waits here
  }
  std::vector<std::pair<std::string, bool>> cases;  // (path, partial)
  for (const char* name : {"fp", "zstd", "sched_pipe", "dwarf", "exec"}) cases.push_back({fixture(name), false});
  cases.push_back({write_temp("throw_rounds.data", file_mode(inner, 100)), false});
  cases.push_back({write_temp("throw_rounds_z.data", file_mode(compressed2(inner), 100)), false});
  // Cut inside a record (fp.data; the COMPRESSED2 one: zstd.data holds all
  // its samples in one COMPRESSED record), as a killed perf leaves it: read() finds the cut.
  for (const std::string& good : {test::read_file(fixture("fp")), file_mode(compressed2(inner), 100)}) {
    auto recs = walk(good);
    const Rec& r = recs[recs.size() * 5 / 8];
    std::string cut = good.substr(0, r.offset + r.size / 2 + 1);
    set<uint64_t>(cut, 48, 0);
    cases.push_back({write_temp("throw_cut_" + std::to_string(cases.size()) + ".data", cut), true});
  }

  for (const auto& [path, partial] : cases) {
    SCOPED_TRACE(path + (partial ? " (partial)" : ""));
    ReadOptions opt;
    opt.partial = partial;
    Outcome ref = read_with(path, opt);
    ASSERT_EQ(ref.error, "");
    ASSERT_GE(ref.samples, 3u);
    EXPECT_EQ(ref.stats.damaged, partial);
    for (uint64_t n : {uint64_t(1), ref.samples / 2, ref.samples}) {
      for (bool input_error : {false, true}) {
        SCOPED_TRACE("throw at sample " + std::to_string(n) + (input_error ? " (InputError)" : ""));
        // A handler's InputError must not become a partial-read warning.
        ReadOptions o = opt;
        o.partial = partial || input_error;
        ThrowOutcome single, threaded;
        within_deadline(path + " throwing at sample " + std::to_string(n), [&] {
          o.reading_thread = false;
          single = read_throwing(path, o, n, input_error);
          o.reading_thread = true;
          threaded = read_throwing(path, o, n, input_error);
        });
        std::string expected = input_error ? "InputError: handler gave up at sample " : "Stop: stop at sample ";
        EXPECT_EQ(single.caught, expected + std::to_string(n));
        EXPECT_EQ(threaded.caught, single.caught);
        EXPECT_EQ(threaded.samples, n) << "no call after the throw";
        EXPECT_EQ(threaded.off_thread_calls, 0u);
        EXPECT_EQ(sequence_difference(single.seq, threaded.seq), "");
        EXPECT_EQ(threaded.warnings, single.warnings);
        size_t made = std::min(ref.seq.size(), single.seq.size());
        std::vector<std::string> prefix(ref.seq.begin(), ref.seq.begin() + std::ptrdiff_t(made));
        EXPECT_EQ(sequence_difference(prefix, single.seq), "") << "the calls before the throw are those of a full read";
      }
    }
  }
}
