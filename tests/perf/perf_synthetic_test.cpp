// Synthesized perf.data files for layouts the fixtures do not cover: every
// attr size perf has written (and a larger future one), AUXTRACE payloads,
// LOST records, attr choice by IDENTIFIER / ID position, ordering without
// FINISHED_ROUND, COMPRESSED2 with records straddling chunks, unknown bits.
#include <gtest/gtest.h>
#include <zstd.h>

#include <cstdio>
#include <cstring>

#include "diagnostics/input_error.h"
#include "perf/perf_data_reader.h"
#include "test_support.h"

using namespace fg;

namespace {

template <typename T>
void put(std::string& s, T v) {
  s.append(reinterpret_cast<const char*>(&v), sizeof v);
}
template <typename T>
void set(std::string& s, size_t off, T v) {
  std::memcpy(&s[off], &v, sizeof v);
}

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
