// Synthesized perf.data files for layouts the fixtures do not cover: every
// attr size perf has written (and a larger future one), AUXTRACE payloads,
// LOST records, attr choice by IDENTIFIER / ID position, ordering without
// FINISHED_ROUND, COMPRESSED2 with records straddling chunks, unknown bits.
#include <gtest/gtest.h>
#include <zstd.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <thread>

#include "diagnostics/input_error.h"
#include "perf/perf_data_reader.h"
#include "perf/sample_decoder.h"
#include "perf_bytes.h"
#include "test_support.h"

using namespace fg;

namespace {

using fg::test::put;
using fg::test::set;

namespace sb = sample_bits;
constexpr uint64_t kSampleIdAll = 1ull << 18;

std::string attr_raw(uint32_t size, uint64_t sample_type, uint64_t flags = kSampleIdAll, uint32_t config = 0) {
  std::string a(size, '\0');
  set<uint32_t>(a, 0, 1);  // SOFTWARE
  set<uint32_t>(a, 4, size);
  set<uint64_t>(a, 8, config);
  set<uint64_t>(a, 16, 1000);
  set<uint64_t>(a, 24, sample_type);
  set<uint64_t>(a, 40, flags);
  for (size_t i = 136; i < size; ++i) a[i] = char(0xAB);  // a future attr's unknown tail
  return a;
}

std::string record(uint32_t type, uint16_t misc, const std::string& body) {
  std::string r;
  put<uint32_t>(r, type);
  put<uint16_t>(r, misc);
  put<uint16_t>(r, uint16_t(8 + body.size()));
  return r + body;
}

// A SAMPLE record (misc USER) of `body`, 8-aligned as decode_sample reads it.
std::vector<uint64_t> sample_words(const std::string& body) {
  const std::string r = record(9, 2, body);
  std::vector<uint64_t> words((r.size() + 7) / 8);
  std::memcpy(words.data(), r.data(), r.size());
  return words;
}

// SAMPLE with IP|TID|TIME|PERIOD (plus IDENTIFIER/ID when asked).
std::string sample(uint64_t ip, int32_t tid, uint64_t time, uint64_t identifier = 0, bool with_identifier = false,
                   bool with_id = false) {
  std::string b;
  if (with_identifier) put<uint64_t>(b, identifier);
  put<uint64_t>(b, ip);
  put<int32_t>(b, tid);
  put<int32_t>(b, tid);
  put<uint64_t>(b, time);
  if (with_id) put<uint64_t>(b, identifier);
  put<uint64_t>(b, 1000);
  return record(9, 2, b);
}

// COMM with a TID|TIME trailer (plus ID/IDENTIFIER).
std::string comm(int32_t tid, const char* name, uint64_t time, uint64_t id = 0, bool with_identifier = false,
                 bool with_id = false) {
  std::string b;
  put<int32_t>(b, tid);
  put<int32_t>(b, tid);
  std::string n(name);
  n.resize((n.size() + 8) & ~size_t(7), '\0');
  b += n;
  put<int32_t>(b, tid);
  put<int32_t>(b, tid);
  put<uint64_t>(b, time);
  if (with_id) put<uint64_t>(b, id);
  if (with_identifier) put<uint64_t>(b, id);
  return record(3, 0, b);
}

std::string file_mode(const std::vector<std::string>& attrs, const std::vector<std::vector<uint64_t>>& ids,
                      const std::string& data, uint64_t attr_size = 0) {
  if (!attr_size) attr_size = attrs[0].size() + 16;
  uint64_t ids_off = 104 + attr_size * attrs.size();
  uint64_t nids = 0;
  for (auto& v : ids) nids += v.size();
  uint64_t data_off = ids_off + 8 * nids;
  std::string f = "PERFILE2";
  put<uint64_t>(f, 104);
  put<uint64_t>(f, attr_size);
  put<uint64_t>(f, 104);
  put<uint64_t>(f, attr_size * attrs.size());
  put<uint64_t>(f, data_off);
  put<uint64_t>(f, data.size());
  put<uint64_t>(f, 0);
  put<uint64_t>(f, 0);
  for (int i = 0; i < 4; ++i) put<uint64_t>(f, 0);
  uint64_t next_ids = ids_off;
  for (size_t i = 0; i < attrs.size(); ++i) {
    std::string entry = attrs[i];
    put<uint64_t>(entry, next_ids);
    put<uint64_t>(entry, 8 * ids[i].size());
    entry.resize(attr_size, '\0');
    f += entry;
    next_ids += 8 * ids[i].size();
  }
  for (auto& v : ids)
    for (uint64_t id : v) put<uint64_t>(f, id);
  return f + data;
}

std::string pipe_mode(const std::string& records) {
  std::string f = "PERFILE2";
  put<uint64_t>(f, 16);
  return f + records;
}

std::string header_attr(const std::string& attr, const std::vector<uint64_t>& ids) {
  std::string b = attr;
  for (uint64_t id : ids) put<uint64_t>(b, id);
  return record(64, 0, b);
}

struct Collect : RecordHandler {
  std::vector<std::string> seq;
  std::vector<size_t> attr_of_sample;
  std::vector<uint64_t> ips;
  void on_sample(const Sample& s) override {
    seq.push_back("S" + std::to_string(s.time));
    attr_of_sample.push_back(s.attr_index);
    ips.push_back(s.ip);
  }
  void on_comm(const CommRecord& c) override { seq.push_back("C" + std::to_string(c.time) + std::string(c.comm)); }
  void on_lost(const LostRecord& l) override { seq.push_back("L" + std::to_string(l.lost)); }
};

std::string write_temp(const std::string& name, const std::string& bytes) {
  static std::string dir = test::temp_dir();
  std::string p = dir + "/" + name;
  std::remove(p.c_str());  // rewriting in place would make ext4 flush on truncate (slow)
  test::write_file(p, bytes);
  return p;
}

}  // namespace

TEST(PerfSynthetic, EveryAttrSize) {
  for (uint32_t size : {64u, 72u, 80u, 96u, 104u, 112u, 120u, 128u, 136u, 144u, 168u}) {
    SCOPED_TRACE(size);
    uint64_t st = sb::IP | sb::TID | sb::TIME | sb::PERIOD;
    std::string data = comm(5, "prog", 10) + sample(0x1234, 5, 20) + sample(0x5678, 5, 15);
    std::string p = write_temp("attr.data", file_mode({attr_raw(size, st)}, {{}}, data));
    PerfDataReader r(p);
    ASSERT_EQ(r.info().attrs.size(), 1u);
    EXPECT_EQ(r.info().attrs[0].size, size);
    EXPECT_EQ(r.info().attrs[0].sample_type, st);
    EXPECT_EQ(r.info().attrs[0].config3, 0u) << "bytes beyond the attr size are never read";
    EXPECT_EQ(r.info().attrs[0].name, "cpu-clock");
    Collect c;
    r.read(c);
    // No FINISHED_ROUND: sorted at EOF.
    EXPECT_EQ(c.seq, (std::vector<std::string>{"C10prog", "S15", "S20"}));
    EXPECT_TRUE(r.stats().warnings.empty());
  }
  // attr.size 0 means VER0 (64 bytes).
  std::string a = attr_raw(64, sb::IP | sb::TID | sb::TIME);
  set<uint32_t>(a, 4, 0);
  PerfDataReader r(write_temp("attr0.data", file_mode({a}, {{}}, "")));
  EXPECT_EQ(r.info().attrs[0].size, 64u);
  // attr.size larger than the stride: error with an offset.
  a = attr_raw(128, sb::IP);
  std::string f = file_mode({a}, {{}}, "", 96);
  std::string p = write_temp("attrbig.data", f);
  try {
    PerfDataReader bad(p);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(p + ": byte 104: attr 0", 0), 0u) << e.what();
  }
}

TEST(PerfSynthetic, UnknownSampleBitsAreRejected) {
  std::string p = write_temp("bits.data", file_mode({attr_raw(128, sb::IP | (1ull << 40))}, {{}}, ""));
  try {
    PerfDataReader r(p);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown bits"), std::string::npos) << e.what();
  }
}

TEST(PerfSynthetic, AuxtracePayloadIsSkipped) {
  uint64_t st = sb::IP | sb::TID | sb::TIME | sb::PERIOD;
  std::string aux;
  put<uint64_t>(aux, 100);  // size of the payload after the record
  put<uint64_t>(aux, 0);
  put<uint64_t>(aux, 0);
  for (int i = 0; i < 4; ++i) put<uint32_t>(aux, 0);
  std::string payload(100, char(9));  // looks like SAMPLE headers if misread
  std::string recs = header_attr(attr_raw(128, st), {}) + record(71, 0, aux) + payload + sample(0xabc, 1, 5);
  for (std::string f : {pipe_mode(recs)}) {
    Collect c;
    PerfDataReader r(write_temp("aux.data", f));
    r.read(c);
    EXPECT_EQ(c.ips, std::vector<uint64_t>{0xabc});
  }
  // File mode too, and a payload running past the data is an error.
  std::string data = record(71, 0, aux) + payload + sample(0xabc, 1, 5);
  Collect c;
  PerfDataReader r(write_temp("auxf.data", file_mode({attr_raw(128, st)}, {{}}, data)));
  r.read(c);
  EXPECT_EQ(c.ips, std::vector<uint64_t>{0xabc});
  set<uint64_t>(aux, 0, 1ull << 50);
  std::string p = write_temp("auxbad.data", file_mode({attr_raw(128, st)}, {{}}, record(71, 0, aux)));
  PerfDataReader bad(p);
  try {
    bad.read(c);
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("AUXTRACE"), std::string::npos) << e.what();
  }
}

TEST(PerfSynthetic, LostRecordsAreCounted) {
  uint64_t st = sb::IP | sb::TID | sb::TIME | sb::PERIOD;
  std::string lost, lost_samples;
  put<uint64_t>(lost, 0);
  put<uint64_t>(lost, 7);
  put<int32_t>(lost, 1), put<int32_t>(lost, 1), put<uint64_t>(lost, 30);
  put<uint64_t>(lost_samples, 3);
  put<int32_t>(lost_samples, 1), put<int32_t>(lost_samples, 1), put<uint64_t>(lost_samples, 31);
  std::string data = sample(1, 1, 29) + record(2, 0, lost) + record(13, 0, lost_samples) + sample(2, 1, 32);
  PerfDataReader r(write_temp("lost.data", file_mode({attr_raw(128, st)}, {{}}, data)));
  Collect c;
  r.read(c);
  EXPECT_EQ(c.seq, (std::vector<std::string>{"S29", "L7", "L3", "S32"}));
  EXPECT_EQ(r.stats().lost_events, 7u);
  EXPECT_EQ(r.stats().lost_samples, 3u);
  EXPECT_EQ(r.stats().lost_records, 1u);
  EXPECT_EQ(r.stats().lost_samples_records, 1u);
}

TEST(PerfSynthetic, AttrChoiceByIdentifierAndIdPosition) {
  // IDENTIFIER: first u64 of SAMPLE, last u64 of other records; 0/unknown -> attr 0.
  uint64_t st = sb::IDENTIFIER | sb::IP | sb::TID | sb::TIME | sb::PERIOD;
  std::string data = comm(1, "a", 0, 0, true) + sample(10, 1, 5, 200, true) + sample(11, 1, 6, 100, true) +
                     sample(12, 1, 7, 0, true) + sample(13, 1, 8, 999, true) + comm(1, "b", 9, 200, true);
  PerfDataReader r(write_temp("ident.data", file_mode({attr_raw(128, st), attr_raw(128, st, kSampleIdAll, 1)},
                                                      {{100}, {200}}, data)));
  Collect c;
  r.read(c);
  EXPECT_EQ(c.attr_of_sample, (std::vector<size_t>{1, 0, 0, 0}));
  EXPECT_EQ(c.seq.back(), "C9b");
  EXPECT_EQ(r.stats().samples_per_attr, (std::vector<uint64_t>{3, 1}));

  // Only PERF_SAMPLE_ID: after IP, TID, TIME in SAMPLE; counted from the end in trailers.
  uint64_t st2 = sb::IP | sb::TID | sb::TIME | sb::ID | sb::PERIOD;
  data = sample(10, 1, 5, 200, false, true) + sample(11, 1, 6, 100, false, true) + comm(1, "x", 9, 200, false, true);
  PerfDataReader r2(write_temp("id.data", file_mode({attr_raw(128, st2), attr_raw(128, st2, kSampleIdAll, 1)},
                                                    {{100}, {200}}, data)));
  Collect c2;
  r2.read(c2);
  EXPECT_EQ(c2.attr_of_sample, (std::vector<size_t>{1, 0}));
  EXPECT_EQ(c2.seq, (std::vector<std::string>{"S5", "S6", "C9x"}));
}

// Time-0 records first in file order; rounds flush up to the previous round's max.
TEST(PerfSynthetic, RoundsAndTimeZeroRecords) {
  uint64_t st = sb::IP | sb::TID | sb::TIME | sb::PERIOD;
  std::string round = record(68, 0, "");
  std::string data = comm(1, "z1", 0) + comm(2, "z2", 0) + sample(1, 1, 50) + sample(2, 1, 40) + round +
                     sample(3, 1, 45) + comm(3, "z3", 0) + sample(4, 1, 70) + round + sample(5, 1, 60) + round;
  PerfDataReader r(write_temp("rounds.data", file_mode({attr_raw(128, st)}, {{}}, data)));
  Collect c;
  r.read(c);
  // z3 (time 0) arrives after time 40/50 were queued but before any flush beyond them:
  // the first round flushes nothing (no previous max), the second flushes <= 50.
  EXPECT_EQ(c.seq, (std::vector<std::string>{"C0z1", "C0z2", "C0z3", "S40", "S45", "S50", "S60", "S70"}));
  EXPECT_EQ(r.stats().rounds, 3u);
  EXPECT_EQ(r.stats().unordered, 0u);
}

TEST(PerfSynthetic, ZeroSizeRecordIsAnErrorNotAHang) {
  uint64_t st = sb::IP | sb::TID | sb::TIME | sb::PERIOD;
  std::string zero = record(9, 0, "");
  set<uint16_t>(zero, 6, 0);
  for (std::string f : {pipe_mode(header_attr(attr_raw(128, st), {}) + zero),
                        file_mode({attr_raw(128, st)}, {{}}, sample(1, 1, 1) + zero)}) {
    std::string p = write_temp("zero.data", f);
    Collect c;
    try {
      PerfDataReader r(p);
      r.read(c);
      ADD_FAILURE() << "no error";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("smaller than the 8-byte record header"), std::string::npos) << e.what();
    }
    // Partial: the sample before it is delivered, the error is a warning.
    ReadOptions opt;
    opt.partial = true;
    PerfDataReader r(p, opt);
    Collect pc;
    r.read(pc, opt);
    EXPECT_TRUE(r.stats().damaged);
    EXPECT_EQ(r.stats().warnings.size(), 1u);
  }
}

// A handler's own exception is never turned into a partial-read warning.
TEST(PerfSynthetic, HandlerExceptionsPropagate) {
  uint64_t st = sb::IP | sb::TID | sb::TIME | sb::PERIOD;
  std::string p = write_temp("h.data", file_mode({attr_raw(128, st)}, {{}}, sample(1, 1, 1)));
  struct Thrower : RecordHandler {
    void on_sample(const Sample&) override { throw InputError("handler"); }
  } t;
  ReadOptions opt;
  opt.partial = true;
  PerfDataReader r(p, opt);
  EXPECT_THROW(r.read(t, opt), InputError);
}

// The reader asks for the file ahead of where it reads (read_ahead_file, a
// call per MB of the file): on a file out of the page cache, the first page
// of each MB from 32 to 40 MB comes in while the handler holds the reader
// near the start. The mapping's own read-ahead reads a window or two past
// the last fault (at most 8 MB each, even where read_ahead_kb is that large).
TEST(PerfSynthetic, FileIsReadAheadOfTheRecords) {
  uint64_t st = sb::IP | sb::TID | sb::TIME | sb::PERIOD;
  std::string data;
  const std::string round = record(68, 0, "");
  for (uint64_t i = 0; data.size() < (44u << 20); ++i) {
    data += sample(i, 1, i);
    if (i % 2000 == 1999) data += round;
  }
  const std::string bytes = file_mode({attr_raw(128, st)}, {{}}, data);
  const std::string path = write_temp("ahead.data", bytes);
  const size_t page = size_t(sysconf(_SC_PAGESIZE));
  std::vector<size_t> probes;  // the first page of each MB from 32 to 40 MB
  for (size_t mb = 32; mb < 40; ++mb) probes.push_back(mb << 20);
  // Out of the page cache (written back first: dirty pages stay).
  int fd = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ::fdatasync(fd);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  void* probe = ::mmap(nullptr, bytes.size(), PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  ASSERT_NE(probe, MAP_FAILED);
  auto resident = [&] {
    size_t n = 0;
    for (size_t at : probes) {
      unsigned char in = 0;
      if (::mincore(static_cast<char*>(probe) + at, page, &in) == 0) n += in & 1;
    }
    return n;
  };
  if (resident() != 0) {
    ::munmap(probe, bytes.size());
    GTEST_SKIP() << "this file system keeps the file cached (tmpfs?): nothing to read ahead";
  }
  struct Hold : RecordHandler {
    std::function<void()> first;
    bool seen = false;
    void on_sample(const Sample&) override {
      if (!seen) first();
      seen = true;
    }
  } hold;
  size_t at_first_sample = 0;
  hold.first = [&] {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while ((at_first_sample = resident()) < probes.size() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  };
  PerfDataReader r(path);
  r.read(hold);
  ::munmap(probe, bytes.size());
  EXPECT_TRUE(hold.seen);
  EXPECT_EQ(at_first_sample, probes.size()) << "pages resident of the " << probes.size() << " probed at 32-40 MB";
}

// COMPRESSED2 records holding one zstd stream flushed at arbitrary points, so
// records straddle payloads; the inner stream has FINISHED_ROUNDs too.
TEST(PerfSynthetic, Compressed2StreamStraddlingRecords) {
  uint64_t st = sb::IP | sb::TID | sb::TIME | sb::PERIOD;
  std::string inner;
  std::vector<std::string> expect;
  for (int i = 0; i < 300; ++i) {
    inner += sample(uint64_t(i), 1, uint64_t(1000 - i % 7 + i * 10));
    if (i % 50 == 49) inner += record(68, 0, "");
  }
  ZSTD_CStream* cs = ZSTD_createCStream();
  ZSTD_initCStream(cs, 1);
  std::string data;
  size_t pos = 0;
  size_t piece = 37;
  while (pos < inner.size()) {
    size_t n = std::min(piece, inner.size() - pos);
    piece = piece * 3 % 1000 + 13;
    std::string out(ZSTD_compressBound(n) + 64, '\0');
    ZSTD_inBuffer in{inner.data() + pos, n, 0};
    ZSTD_outBuffer o{&out[0], out.size(), 0};
    ZSTD_compressStream(cs, &o, &in);
    ZSTD_flushStream(cs, &o);
    out.resize(o.pos);
    pos += n;
    std::string body;
    put<uint64_t>(body, out.size());
    body += out;
    body.resize((body.size() + 7) & ~size_t(7), '\0');
    data += record(83, 0, body);
  }
  ZSTD_freeCStream(cs);
  Collect ref;
  PerfDataReader plain(write_temp("plain.data", file_mode({attr_raw(128, st)}, {{}}, inner)));
  plain.read(ref);
  ASSERT_EQ(ref.ips.size(), 300u);
  for (size_t chunk : {size_t(0), size_t(3), size_t(64)}) {
    ReadOptions opt;
    opt.zstd_output_chunk = chunk;
    PerfDataReader r(write_temp("z2.data", file_mode({attr_raw(128, st)}, {{}}, data)), opt);
    Collect c;
    r.read(c, opt);
    EXPECT_EQ(c.seq, ref.seq);
    EXPECT_EQ(r.stats().records_by_type.at(9), 300u);
    EXPECT_EQ(r.stats().decompressed_bytes, inner.size());
  }
  // Cut the zstd stream short: the leftover partial record is an error.
  std::string cut = data.substr(0, data.size() / 2);
  auto f = file_mode({attr_raw(128, st)}, {{}}, cut);
  std::string p = write_temp("z2cut.data", f);
  // The cut may land inside a COMPRESSED2 record; either way one located error.
  try {
    PerfDataReader r(p);
    Collect c;
    r.read(c);
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(p + ": byte ", 0), 0u) << e.what();
  }
}

// Every sample_type bit at once, in the kernel's order (evsel.c), with READ
// as a group with ids and lost counts, BRANCH_STACK with hw_idx, regs by mask.
TEST(PerfSynthetic, AllSampleFields) {
  const uint64_t st = sample_bits::KNOWN & ~sb::WEIGHT;  // WEIGHT and WEIGHT_STRUCT share one u64
  std::string a = attr_raw(136, st);
  set<uint64_t>(a, 32, 8 | 4 | 16 | 1 | 2);          // read_format GROUP|ID|LOST|ENABLED|RUNNING
  set<uint64_t>(a, 72, 1ull << 17);                  // branch_sample_type HW_INDEX
  set<uint64_t>(a, 80, 0x1c0);                       // regs_user: SP(7) IP(8) and reg 6
  set<uint32_t>(a, 88, 16);
  set<uint64_t>(a, 96, 0x3);                         // regs_intr: AX BX
  std::string b;
  put<uint64_t>(b, 77);                              // IDENTIFIER
  put<uint64_t>(b, 0x401000);                        // IP
  put<int32_t>(b, 10), put<int32_t>(b, 11);          // TID
  put<uint64_t>(b, 5000);                            // TIME
  put<uint64_t>(b, 0xdead);                          // ADDR
  put<uint64_t>(b, 77);                              // ID
  put<uint64_t>(b, 78);                              // STREAM_ID
  put<uint32_t>(b, 1), put<uint32_t>(b, 0);          // CPU
  put<uint64_t>(b, 1000);                            // PERIOD
  put<uint64_t>(b, 2), put<uint64_t>(b, 9), put<uint64_t>(b, 8);  // READ nr, enabled, running
  for (int i = 0; i < 2; ++i) put<uint64_t>(b, 100 + i), put<uint64_t>(b, 200 + i), put<uint64_t>(b, 0);
  put<uint64_t>(b, 3);                               // CALLCHAIN
  put<uint64_t>(b, callchain_context::USER), put<uint64_t>(b, 0x401000), put<uint64_t>(b, 0x402000);
  put<uint32_t>(b, 12);                              // RAW: 4 + 12 = 16
  b += std::string("rawpayload!!", 12);
  put<uint64_t>(b, 1), put<uint64_t>(b, 42);         // BRANCH_STACK nr, hw_idx
  put<uint64_t>(b, 0xa), put<uint64_t>(b, 0xb), put<uint64_t>(b, 0xc);
  put<uint64_t>(b, 2);                               // REGS_USER abi 64
  put<uint64_t>(b, 0x66), put<uint64_t>(b, 0x77), put<uint64_t>(b, 0x88);
  put<uint64_t>(b, 16);                              // STACK_USER size
  b += std::string(16, 's');
  put<uint64_t>(b, 8);                               // dyn_size
  put<uint64_t>(b, 300);                             // WEIGHT_STRUCT
  put<uint64_t>(b, 0x5a);                            // DATA_SRC
  put<uint64_t>(b, 0x7);                             // TRANSACTION
  put<uint64_t>(b, 2), put<uint64_t>(b, 0xaa), put<uint64_t>(b, 0xbb);  // REGS_INTR
  put<uint64_t>(b, 0x1000);                          // PHYS_ADDR
  put<uint64_t>(b, 5);                               // CGROUP
  put<uint64_t>(b, 4096);                            // DATA_PAGE_SIZE
  put<uint64_t>(b, 8192);                            // CODE_PAGE_SIZE
  put<uint64_t>(b, 8);                               // AUX
  b += std::string(8, 'x');
  std::string p = write_temp("all.data", file_mode({a}, {{77}}, record(9, 2, b)));
  struct H : RecordHandler {
    int n = 0;
    void on_sample(const Sample& s) override {
      ++n;
      EXPECT_EQ(s.identifier, 77u);
      EXPECT_EQ(s.ip, 0x401000u);
      EXPECT_EQ(s.pid, 10);
      EXPECT_EQ(s.tid, 11);
      EXPECT_EQ(s.time, 5000u);
      EXPECT_EQ(s.addr, 0xdeadu);
      EXPECT_EQ(s.id, 77u);
      EXPECT_EQ(s.stream_id, 78u);
      EXPECT_EQ(s.cpu, 1u);
      EXPECT_EQ(s.period, 1000u);
      ASSERT_EQ(s.read_nr_words, 9u);
      EXPECT_EQ(s.read_values[3], 100u);
      ASSERT_EQ(s.callchain_nr, 3u);
      EXPECT_EQ(s.callchain[2], 0x402000u);
      EXPECT_EQ(std::string(reinterpret_cast<const char*>(s.raw), s.raw_size), "rawpayload!!");
      EXPECT_EQ(s.branch_nr, 1u);
      EXPECT_TRUE(s.has_branch_hw_idx);
      EXPECT_EQ(s.branch_hw_idx, 42u);
      EXPECT_EQ(s.branch_entries[1], 0xbu);
      uint64_t v = 0;
      EXPECT_TRUE(s.user_reg(7, &v));
      EXPECT_EQ(v, 0x77u);
      EXPECT_TRUE(s.user_reg(8, &v));
      EXPECT_EQ(v, 0x88u);
      EXPECT_FALSE(s.user_reg(0, &v));
      EXPECT_EQ(s.stack_user_size, 16u);
      EXPECT_EQ(s.stack_user_dyn_size, 8u);
      EXPECT_EQ(s.weight, 300u);
      EXPECT_EQ(s.data_src, 0x5au);
      EXPECT_EQ(s.transaction, 7u);
      EXPECT_TRUE(s.intr_reg(1, &v));
      EXPECT_EQ(v, 0xbbu);
      EXPECT_EQ(s.phys_addr, 0x1000u);
      EXPECT_EQ(s.cgroup, 5u);
      EXPECT_EQ(s.data_page_size, 4096u);
      EXPECT_EQ(s.code_page_size, 8192u);
      EXPECT_EQ(s.aux_size, 8u);
      EXPECT_EQ(s.cpumode(), 2);
    }
  } h;
  PerfDataReader r(p);
  r.read(h);
  EXPECT_EQ(h.n, 1);
  // One byte more or less than the fields: a located error naming SAMPLE.
  for (int delta : {-8, 8}) {
    std::string b2 = delta < 0 ? b.substr(0, b.size() - 8) : b + std::string(8, '\0');
    std::string p2 = write_temp("all2.data", file_mode({a}, {{77}}, record(9, 2, b2)));
    PerfDataReader r2(p2);
    try {
      r2.read(h);
      ADD_FAILURE() << "no error for delta " << delta;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("SAMPLE record"), std::string::npos) << e.what();
    }
  }
  // REGS_USER abi 0 (kernel thread): no registers follow; STACK_USER size 0: no dyn_size.
  std::string a2 = attr_raw(136, sb::IP | sb::REGS_USER | sb::STACK_USER);
  set<uint64_t>(a2, 80, 0xff0fff);
  std::string b3;
  put<uint64_t>(b3, 1), put<uint64_t>(b3, 0), put<uint64_t>(b3, 0);
  struct H2 : RecordHandler {
    int n = 0;
    void on_sample(const Sample& s) override {
      ++n;
      uint64_t v;
      EXPECT_EQ(s.regs_abi, 0u);
      EXPECT_FALSE(s.user_reg(7, &v));
      EXPECT_EQ(s.stack_user, nullptr);
    }
  } h2;
  PerfDataReader r3(write_temp("abi0.data", file_mode({a2}, {{}}, record(9, 1, b3))));
  r3.read(h2);
  EXPECT_EQ(h2.n, 1);
}

TEST(PerfSynthetic, KsymbolAndSwitchRecords) {
  uint64_t st = sb::TID | sb::TIME | sb::CPU;
  std::string k;
  put<uint64_t>(k, 0xffffffffc0000000ull);
  put<uint32_t>(k, 0x100);
  put<uint16_t>(k, 1);
  put<uint16_t>(k, 0);
  k += std::string("bpf_prog_x\0\0\0\0\0\0", 16);
  put<int32_t>(k, 0), put<int32_t>(k, 0), put<uint64_t>(k, 7), put<uint32_t>(k, 0), put<uint32_t>(k, 0);
  std::string sw;
  put<int32_t>(sw, 42), put<int32_t>(sw, 43);  // next_prev pid/tid
  put<int32_t>(sw, 5), put<int32_t>(sw, 6), put<uint64_t>(sw, 9), put<uint32_t>(sw, 1), put<uint32_t>(sw, 0);
  std::string data = record(17, 0, k) + record(15, (1 << 13) | (1 << 14), sw);
  struct H : RecordHandler {
    int n = 0;
    void on_ksymbol(const KsymbolRecord& k) override {
      ++n;
      EXPECT_EQ(k.addr, 0xffffffffc0000000ull);
      EXPECT_EQ(k.len, 0x100u);
      EXPECT_EQ(k.ksym_type, 1);
      EXPECT_EQ(k.name, "bpf_prog_x");
      EXPECT_EQ(k.time, 7u);
    }
    void on_switch(const SwitchRecord& s) override {
      ++n;
      EXPECT_TRUE(s.out);
      EXPECT_TRUE(s.preempt);
      EXPECT_TRUE(s.cpu_wide);
      EXPECT_EQ(s.next_prev_pid, 42);
      EXPECT_EQ(s.pid, 5);
      EXPECT_EQ(s.tid, 6);
      EXPECT_EQ(s.cpu, 1u);
      EXPECT_EQ(s.time, 9u);
    }
  } h;
  PerfDataReader r(write_temp("ksym.data", file_mode({attr_raw(128, st)}, {{}}, data)));
  r.read(h);
  EXPECT_EQ(h.n, 2);
}

// decode_sample skips its full reset when the Sample was last decoded with
// the same sample_type (the reading thread decodes millions into recycled
// buffers): fields that depend on the data, not the type, must still never
// keep a previous record's values.
TEST(PerfSynthetic, ReusedSampleKeepsNoStaleFields) {
  EventAttr with_stack;
  with_stack.sample_type = sb::TID | sb::REGS_USER | sb::STACK_USER;
  with_stack.sample_regs_user = 0x3;
  std::string full;
  put<int32_t>(full, 10), put<int32_t>(full, 11);
  put<uint64_t>(full, 2), put<uint64_t>(full, 0x66), put<uint64_t>(full, 0x77);  // REGS_USER abi 64
  put<uint64_t>(full, 16);                                                        // STACK_USER size
  full += std::string(16, 's');
  put<uint64_t>(full, 8);                                                         // dyn_size
  std::string empty;
  put<int32_t>(empty, 12), put<int32_t>(empty, 13);
  put<uint64_t>(empty, 0);  // REGS_USER abi none (a kernel thread)
  put<uint64_t>(empty, 0);  // STACK_USER size 0
  auto r1 = sample_words(full), r2 = sample_words(empty);
  Sample s;
  perf_sample::decode_sample(with_stack, reinterpret_cast<const uint8_t*>(r1.data()), 8 + full.size(), s);
  ASSERT_NE(s.regs_user, nullptr);
  ASSERT_NE(s.stack_user, nullptr);
  EXPECT_EQ(s.stack_user_dyn_size, 8u);
  s.attr_index = 3;
  perf_sample::decode_sample(with_stack, reinterpret_cast<const uint8_t*>(r2.data()), 8 + empty.size(), s);
  EXPECT_EQ(s.pid, 12);
  EXPECT_EQ(s.regs_user, nullptr);
  EXPECT_EQ(s.stack_user, nullptr);
  EXPECT_EQ(s.stack_user_size, 0u);
  EXPECT_EQ(s.stack_user_dyn_size, 0u);
  EXPECT_EQ(s.attr_index, 0u);
  // Another sample_type: everything it lacks is back to the defaults.
  EventAttr ip_only;
  ip_only.sample_type = sb::IP;
  std::string ip;
  put<uint64_t>(ip, 0x401000);
  auto r3 = sample_words(ip);
  perf_sample::decode_sample(ip_only, reinterpret_cast<const uint8_t*>(r3.data()), 8 + ip.size(), s);
  EXPECT_EQ(s.ip, 0x401000u);
  EXPECT_EQ(s.pid, -1);
  EXPECT_EQ(s.tid, -1);
  EXPECT_EQ(s.regs_abi, 0u);
  EXPECT_EQ(s.stack_user_size, 0u);
}

// `perf record -c N` (or -e EVENT/period=N/) leaves PERF_SAMPLE_PERIOD out:
// a sample weighs its attribute's sample_period, as perf reads it, also when
// the Sample was last decoded for another event of the same sample_type.
TEST(PerfSynthetic, FixedPeriodComesFromTheSamplesAttribute) {
  EventAttr a, b, with_period;
  a.sample_type = b.sample_type = sb::IP;
  a.sample_period = 250000;
  b.sample_period = 100000;
  with_period.sample_type = sb::IP | sb::PERIOD;
  with_period.sample_period = 4000;  // a frequency: the record's period counts
  with_period.flags = 1u << 10;      // freq
  std::string ip, ip_period;
  put<uint64_t>(ip, 0x401000);
  put<uint64_t>(ip_period, 0x401000), put<uint64_t>(ip_period, 777);
  auto r1 = sample_words(ip), r2 = sample_words(ip_period);
  Sample s;
  perf_sample::decode_sample(a, reinterpret_cast<const uint8_t*>(r1.data()), 8 + ip.size(), s);
  EXPECT_EQ(s.period, 250000u);
  perf_sample::decode_sample(b, reinterpret_cast<const uint8_t*>(r1.data()), 8 + ip.size(), s);
  EXPECT_EQ(s.period, 100000u);
  perf_sample::decode_sample(with_period, reinterpret_cast<const uint8_t*>(r2.data()), 8 + ip_period.size(), s);
  EXPECT_EQ(s.period, 777u);
}
