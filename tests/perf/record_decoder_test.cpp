// perf_record::decode_event and the queued form of a decoded record
// (lib/perf/record_decoder.h): a record is decoded once, stored, moved (the
// ordering queue compacts its arena) and delivered from the copy with every
// field and every view intact; damaged bodies are FormatErrors.
#include "perf/record_decoder.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "perf/perf_abi.h"
#include "perf_bytes.h"

namespace {

namespace abi = fg::perf_abi;
using fg::EventAttr;
using fg::perf_record::EventRecord;
using fg::test::put;

// An attr with sample_id_all and TID|TIME|CPU in the trailer.
EventAttr trailer_attr() {
  EventAttr a;
  a.flags = uint64_t(1) << 18;  // sample_id_all
  a.sample_type = fg::sample_bits::TID | fg::sample_bits::TIME | fg::sample_bits::CPU;
  return a;
}

void put_trailer(std::string& r, int32_t pid, int32_t tid, uint64_t time, uint32_t cpu) {
  put<int32_t>(r, pid);
  put<int32_t>(r, tid);
  put<uint64_t>(r, time);
  put<uint32_t>(r, cpu);
  put<uint32_t>(r, 0);
}

void finish(std::string& r, uint32_t type, uint16_t misc) {
  fg::test::set<uint32_t>(r, 0, type);
  fg::test::set<uint16_t>(r, 4, misc);
  fg::test::set<uint16_t>(r, 6, static_cast<uint16_t>(r.size()));
}

std::string mmap2_with_build_id(const std::string& name) {
  std::string r(8, '\0');
  put<int32_t>(r, 42);
  put<int32_t>(r, 43);
  put<uint64_t>(r, 0x400000);
  put<uint64_t>(r, 0x2000);
  put<uint64_t>(r, 0x1000);
  r.push_back(20);  // build-id size
  r.append(3, '\0');
  for (int i = 0; i < 20; ++i) r.push_back(char(0xa0 + i));
  put<uint32_t>(r, 5);  // prot r-x
  put<uint32_t>(r, 2);  // MAP_PRIVATE
  std::string n = name;
  n.resize((name.size() + 8) & ~size_t(7), '\0');
  r += n;
  put_trailer(r, 42, 43, 123456, 3);
  finish(r, abi::MMAP2, abi::MISC_MMAP_BUILD_ID | 2);
  return r;
}

// Decodes rec, stores it, moves the stored bytes and loads them back.
EventRecord round_trip(const EventAttr& a, const std::string& rec, uint64_t offset) {
  std::vector<uint64_t> aligned((rec.size() + 7) / 8);
  std::memcpy(aligned.data(), rec.data(), rec.size());
  EventRecord e;
  EXPECT_TRUE(fg::perf_record::decode_event(a, fg::test::get<uint32_t>(rec, 0),
                                            reinterpret_cast<const uint8_t*>(aligned.data()), rec.size(), offset, e));
  std::vector<uint64_t> stored(fg::perf_record::stored_size(e) / 8 + 1, ~uint64_t{0});
  fg::perf_record::store_event(e, reinterpret_cast<uint8_t*>(stored.data()));
  std::memset(aligned.data(), 0xee, rec.size());  // the record's own bytes are gone
  std::vector<uint64_t> moved = stored;           // compaction moves the block
  std::fill(stored.begin(), stored.end(), 0);
  EventRecord out;
  fg::perf_record::load_event(reinterpret_cast<const uint8_t*>(moved.data()), out);
  // Views into `moved` would dangle after return: copy what the tests check.
  static std::vector<std::vector<uint64_t>> keep;
  keep.push_back(std::move(moved));
  return out;
}

TEST(EventRecord, Mmap2WithBuildIdSurvivesStoreMoveAndLoad) {
  const std::string name = "/usr/lib/x86_64-linux-gnu/libc.so.6";
  EventRecord e = round_trip(trailer_attr(), mmap2_with_build_id(name), 4096);
  EXPECT_EQ(e.type, uint32_t(abi::MMAP2));
  EXPECT_EQ(e.time, 123456u);
  EXPECT_EQ(e.mmap.pid, 42);
  EXPECT_EQ(e.mmap.tid, 43);
  EXPECT_EQ(e.mmap.start, 0x400000u);
  EXPECT_EQ(e.mmap.len, 0x2000u);
  EXPECT_EQ(e.mmap.pgoff, 0x1000u);
  EXPECT_EQ(e.mmap.prot, 5u);
  EXPECT_EQ(e.mmap.flags, 2u);
  EXPECT_EQ(e.mmap.filename, name);
  ASSERT_EQ(e.mmap.build_id_size, 20);
  ASSERT_NE(e.mmap.build_id, nullptr);
  EXPECT_EQ(fg::build_id_hex(e.mmap.build_id, 20), "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3");
  EXPECT_EQ(e.mmap.cpu, 3u);
  EXPECT_EQ(e.mmap.time, 123456u);
  EXPECT_EQ(e.mmap.file_offset, 4096u);
  EXPECT_TRUE(e.mmap.executable);
}

TEST(EventRecord, CommForkWithoutTrailerTimeAndKsymbol) {
  EventAttr a = trailer_attr();
  std::string comm(8, '\0');
  put<int32_t>(comm, 7);
  put<int32_t>(comm, 8);
  comm += std::string("python3\0", 8);
  put_trailer(comm, 7, 8, 99, 1);
  finish(comm, abi::COMM, abi::MISC_COMM_EXEC);
  EventRecord c = round_trip(a, comm, 16);
  EXPECT_EQ(c.comm.comm, "python3");
  EXPECT_TRUE(c.comm.exec);
  EXPECT_EQ(c.time, 99u);

  // FORK of an attr without sample_id_all: ordered by the body's time.
  EventAttr plain;
  std::string fork(8, '\0');
  for (int32_t v : {10, 1, 11, 1}) put<int32_t>(fork, v);
  put<uint64_t>(fork, 5555);
  finish(fork, abi::FORK, 0);
  EventRecord f = round_trip(plain, fork, 32);
  EXPECT_EQ(f.type, uint32_t(abi::FORK));
  EXPECT_EQ(f.time, 5555u);
  EXPECT_EQ(f.task.pid, 10);
  EXPECT_EQ(f.task.tid, 11);

  std::string ksym(8, '\0');
  put<uint64_t>(ksym, 0xffffffffc0001000ull);
  put<uint32_t>(ksym, 256);
  put<uint16_t>(ksym, 1);
  put<uint16_t>(ksym, 0);
  ksym += std::string("bpf_prog_abc\0\0\0\0", 16);
  put_trailer(ksym, -1, -1, 77, 0);
  finish(ksym, abi::KSYMBOL, 0);
  EventRecord k = round_trip(a, ksym, 48);
  EXPECT_EQ(k.ksymbol.name, "bpf_prog_abc");
  EXPECT_EQ(k.ksymbol.addr, 0xffffffffc0001000ull);
  EXPECT_EQ(k.ksymbol.len, 256u);
  EXPECT_EQ(k.time, 77u);
}

TEST(EventRecord, OnlyDeliveredKindsAreDecodedAndShortBodiesAreErrors) {
  EventAttr a = trailer_attr();
  std::string throttle(8, '\0');
  put<uint64_t>(throttle, 1);
  put<uint64_t>(throttle, 2);
  put<uint64_t>(throttle, 3);
  put_trailer(throttle, 1, 1, 1, 0);
  finish(throttle, abi::THROTTLE, 0);
  EventRecord e;
  EXPECT_FALSE(fg::perf_record::decode_event(a, abi::THROTTLE, reinterpret_cast<const uint8_t*>(throttle.data()),
                                             throttle.size(), 0, e));
  // An MMAP2 whose body stops before its fixed fields: the trailer fits, the body does not.
  std::string bad(8, '\0');
  put<uint64_t>(bad, 0);
  put_trailer(bad, 1, 1, 1, 0);
  finish(bad, abi::MMAP2, 0);
  try {
    fg::perf_record::decode_event(a, abi::MMAP2, reinterpret_cast<const uint8_t*>(bad.data()), bad.size(), 0, e);
    FAIL() << "no error";
  } catch (const abi::FormatError& err) {
    EXPECT_NE(std::string(err.what()).find("MMAP2 body is 8 bytes"), std::string::npos) << err.what();
  }
}

}  // namespace
