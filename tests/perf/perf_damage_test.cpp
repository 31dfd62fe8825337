// Bad input for the perf.data reader: truncation at every record boundary and
// inside records, corrupted sizes, wrong magic, synthesized headers with every
// attr size, killed recordings; plus partial reads and round ordering. Each bad
// file must give one fg::InputError naming the file and a byte offset, never a
// crash, hang or unbounded allocation.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <new>
#include <random>
#include <thread>

#include "diagnostics/input_error.h"
#include "perf/perf_data_reader.h"
#include "perf/record_order.h"
#include "perf_bytes.h"
#include "test_support.h"

using namespace fg;
using fg::test::testdata;

namespace {

std::string fixture(const std::string& name) { return testdata("perf/" + name + ".data"); }

using fg::test::get;
using fg::test::put;
using fg::test::set;

struct Rec {
  size_t offset;
  uint32_t type;
  uint16_t size;
};

// Independent walk over the records of a (file or pipe mode) perf.data.
std::vector<Rec> walk(const std::string& f, size_t* data_begin = nullptr, size_t* data_end = nullptr) {
  bool pipe = get<uint64_t>(f, 8) == 16;
  size_t pos = pipe ? 16 : get<uint64_t>(f, 40);
  size_t end = pipe ? f.size() : pos + get<uint64_t>(f, 48);
  if (data_begin) *data_begin = pos;
  if (data_end) *data_end = end;
  std::vector<Rec> v;
  while (pos + 8 <= end) {
    Rec r{pos, get<uint32_t>(f, pos), get<uint16_t>(f, pos + 6)};
    v.push_back(r);
    pos += r.size;
    if (r.type == 66) pos += get<uint32_t>(f, r.offset + 8);  // HEADER_TRACING_DATA payload
  }
  return v;
}

struct Collect : RecordHandler {
  uint64_t samples = 0, records = 0;
  std::vector<std::string> seq;  // (time, type, bytes) in delivery order
  void add(uint64_t t, char c, uint64_t extra) {
    ++records;
    seq.push_back(std::to_string(t) + c + std::to_string(extra));
  }
  void on_sample(const Sample& s) override {
    ++samples;
    add(s.time, 'S', s.ip ^ (s.callchain_nr << 48) ^ uint64_t(s.tid) << 32);
  }
  void on_mmap(const MmapRecord& m) override { add(m.time, 'M', m.start); }
  void on_comm(const CommRecord& c) override { add(c.time, 'C', uint64_t(c.tid)); }
  void on_fork(const TaskRecord& t) override { add(t.time, 'F', uint64_t(t.tid)); }
  void on_exit(const TaskRecord& t) override { add(t.time, 'E', uint64_t(t.tid)); }
  void on_switch(const SwitchRecord& s) override { add(s.time, 'W', s.out); }
  void on_lost(const LostRecord& l) override { add(l.time, 'L', l.lost); }
};

std::string write_temp(const std::string& name, const std::string& bytes) {
  static std::string dir = test::temp_dir();
  std::string p = dir + "/" + name;
  std::remove(p.c_str());  // rewriting in place would make ext4 flush on truncate (slow)
  test::write_file(p, bytes);
  return p;
}

// Reads path; returns the InputError text, or "" if it read fine.
std::string read_error(const std::string& path, Collect* out = nullptr, ReadOptions opt = {}) {
  try {
    PerfDataReader r(path, opt);
    Collect c;
    r.read(c, opt);
    if (out) *out = c;
    return "";
  } catch (const InputError& e) {
    return e.what();
  }
}

void expect_located_error(const std::string& err, const std::string& path) {
  EXPECT_FALSE(err.empty());
  EXPECT_EQ(err.rfind(path + ": byte ", 0), 0u) << err;
  EXPECT_EQ(err.find('\n'), std::string::npos) << err;
}

}  // namespace

TEST(PerfDamage, EmptyWrongMagicForeignEndianV1) {
  std::string p = write_temp("empty.data", "");
  expect_located_error(read_error(p), p);
  EXPECT_NE(read_error(p).find("empty"), std::string::npos);

  std::string good = test::read_file(fixture("fp"));
  std::string bad = good;
  bad[0] = 'X';
  p = write_temp("magic.data", bad);
  EXPECT_NE(read_error(p).find("bad magic"), std::string::npos) << read_error(p);

  bad = good;
  std::reverse(bad.begin(), bad.begin() + 8);
  p = write_temp("swapped.data", bad);
  EXPECT_NE(read_error(p).find("foreign-endian"), std::string::npos) << read_error(p);

  bad = good;
  std::memcpy(&bad[0], "PERFFILE", 8);
  p = write_temp("v1.data", bad);
  EXPECT_NE(read_error(p).find("version 1"), std::string::npos) << read_error(p);

  // A directory that is not a `perf record --threads` one (no 'data' file)
  // is refused with a clear message.
  std::string dir = test::temp_dir();
  try {
    PerfDataReader r(dir);
    ADD_FAILURE() << "no error for a directory";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              dir + ": is a directory without a readable 'data' file (No such file or directory): not a `perf "
                    "record --threads` directory");
  }
  try {
    PerfDataReader r(dir + "/missing.data");
    ADD_FAILURE() << "no error for a missing file";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot open"), std::string::npos) << e.what();
  }

  p = write_temp("short.data", good.substr(0, 5));
  expect_located_error(read_error(p), p);
  p = write_temp("shorthdr.data", good.substr(0, 60));
  expect_located_error(read_error(p), p);
}

// File mode cut at every record boundary and inside records: an error naming
// file and offset; with `partial`, exactly the records before the cut.
TEST(PerfDamage, TruncatedFileMode) {
  for (const char* name : {"fp", "sched", "zstd", "dwarf"}) {
    SCOPED_TRACE(name);
    std::string good = test::read_file(fixture(name));
    auto recs = walk(good);
    ASSERT_GT(recs.size(), 10u);
    Collect full;
    ASSERT_EQ(read_error(fixture(name), &full), "");
    // Every record boundary of the small fixtures, a sample of them elsewhere.
    bool every = std::string(name) == "fp" || std::string(name) == "sched";
    size_t step = every ? 1 : std::max<size_t>(1, recs.size() / 60);
    for (size_t i = 0; i < recs.size(); i += step) {
      for (size_t delta : {size_t(0), size_t(3), size_t(8), size_t(recs[i].size / 2 + 1)}) {
        if (delta && delta >= recs[i].size) continue;
        size_t cut = recs[i].offset + delta;
        std::string p = write_temp("trunc.data", good.substr(0, cut));
        expect_located_error(read_error(p), p);
        ReadOptions opt;
        opt.partial = true;
        PerfDataReader r(p, opt);
        Collect c;
        r.read(c, opt);
        EXPECT_TRUE(r.stats().damaged);
        ASSERT_FALSE(r.stats().warnings.empty());
        // Samples wholly before the cut are delivered (uncompressed files).
        if (std::string(name) != "zstd") {
          uint64_t expect = 0;
          for (size_t k = 0; k < i; ++k) expect += recs[k].type == 9;
          EXPECT_EQ(c.samples, expect) << "cut at " << cut;
        }
        EXPECT_LE(c.samples, full.samples);
      }
    }
  }
}

// Pipe mode has no end marker: a cut at a boundary reads fine (fewer
// records), a cut inside a record is an error.
TEST(PerfDamage, TruncatedPipeMode) {
  std::string good = test::read_file(fixture("sched_pipe"));
  auto recs = walk(good);
  ASSERT_GT(recs.size(), 10u);
  for (size_t i = 1; i < recs.size(); i += 3) {
    std::string p = write_temp("ptrunc.data", good.substr(0, recs[i].offset));
    Collect c;
    std::string err = read_error(p, &c);
    // A cut at a record boundary is found unless it falls right after a
    // FINISHED_ROUND (where a complete stream may end too).
    if (recs[i - 1].type == 68) {
      EXPECT_EQ(err, "") << "cut at boundary " << recs[i].offset;
    } else {
      expect_located_error(err, p);
      EXPECT_NE(err.find("pipe-mode stream cut short: it ends after " + std::to_string(recs[i].offset) + " bytes"),
                std::string::npos)
          << err;
      // With partial, the records before the cut are delivered and the cut is a warning.
      ReadOptions opt;
      opt.partial = true;
      PerfDataReader r(p, opt);
      Collect partial;
      r.read(partial, opt);
      EXPECT_TRUE(r.stats().damaged);
      ASSERT_FALSE(r.stats().warnings.empty());
      EXPECT_NE(r.stats().warnings.back().find("cut short"), std::string::npos) << r.stats().warnings.back();
    }
    p = write_temp("ptrunc2.data", good.substr(0, recs[i].offset + 5));
    expect_located_error(read_error(p), p);
  }
}

TEST(PerfDamage, CorruptedSizes) {
  std::string good = test::read_file(fixture("sched"));
  auto recs = walk(good);
  int errors = 0;
  for (size_t i = 0; i < recs.size(); i += 2) {
    for (int variant = 0; variant < 6; ++variant) {
      std::string bad = good;
      uint16_t sz = recs[i].size;
      uint16_t v[] = {0, 4, 7, uint16_t(sz + 8), uint16_t(sz >= 16 ? sz - 8 : 0), 0xffff};
      set<uint16_t>(bad, recs[i].offset + 6, v[variant]);
      std::string p = write_temp("size.data", bad);
      std::string err = read_error(p);  // must return, not crash or hang
      if (v[variant] < 8) expect_located_error(err, p);
      if (recs[i].type == 9 && v[variant] != sz) expect_located_error(err, p);
      errors += !err.empty();
    }
  }
  EXPECT_GT(errors, 0);
}

TEST(PerfDamage, CallchainNrMustFitTheRecord) {
  std::string good = test::read_file(fixture("fp"));
  for (const auto& r : walk(good)) {
    if (r.type != 9) continue;
    // fp.data: IP|TID|TIME|CALLCHAIN|PERIOD: nr at 8 + 8 + 8 + 8 + 8.
    std::string bad = good;
    set<uint64_t>(bad, r.offset + 40, uint64_t(1) << 60);
    std::string p = write_temp("nr.data", bad);
    std::string err = read_error(p);
    expect_located_error(err, p);
    EXPECT_NE(err.find("SAMPLE"), std::string::npos) << err;
    EXPECT_NE(err.find("byte " + std::to_string(r.offset)), std::string::npos) << err;
    break;
  }
}

TEST(PerfDamage, HeaderSectionsOutsideTheFile) {
  std::string good = test::read_file(fixture("fp"));
  for (size_t field : {24, 32, 40, 48}) {  // attrs.offset/size, data.offset/size
    std::string bad = good;
    set<uint64_t>(bad, field, uint64_t(1) << 40);
    std::string p = write_temp("sect.data", bad);
    expect_located_error(read_error(p), p);
  }
  // attr_size below the minimum.
  std::string bad = good;
  set<uint64_t>(bad, 16, 8);
  std::string p = write_temp("attrsize.data", bad);
  expect_located_error(read_error(p), p);
}

// `perf record` killed: data.size == 0 and no feature table.
TEST(PerfDamage, KilledRecorderReadsToEof) {
  std::string good = test::read_file(fixture("fp"));
  size_t b, e;
  walk(good, &b, &e);
  std::string killed = good.substr(0, e);
  set<uint64_t>(killed, 48, 0);
  std::string p = write_temp("killed.data", killed);
  PerfDataReader r(p);
  Collect c, full;
  r.read(c);
  ASSERT_EQ(read_error(fixture("fp"), &full), "");
  EXPECT_EQ(c.samples, full.samples);
  ASSERT_FALSE(r.stats().warnings.empty());
  EXPECT_NE(r.stats().warnings[0].find("data size field is 0"), std::string::npos);
}

// Records inside each round shuffled (keeping the relative order of records
// with equal times): the delivered sequence is unchanged.
TEST(PerfOrdering, ShuffledRoundsGiveTheSameOrder) {
  for (const char* name : {"sched", "switch", "two_clocks", "exec"}) {
    SCOPED_TRACE(name);
    std::string good = test::read_file(fixture(name));
    Collect ref;
    ASSERT_EQ(read_error(fixture(name), &ref), "");
    ASSERT_TRUE(std::is_sorted(ref.seq.begin(), ref.seq.end(), [](const std::string& a, const std::string& b) {
      return std::stoull(a) < std::stoull(b);
    }));
    auto recs = walk(good);
    std::mt19937 rng(42);
    std::string shuffled = good;
    size_t start = 0;
    for (size_t i = 0; i <= recs.size(); ++i) {
      if (i < recs.size() && recs[i].type != 68) continue;
      // recs[start, i) is one round; never move the time-0 records at the start.
      std::vector<size_t> idx;
      for (size_t k = start; k < i; ++k)
        if (recs[k].type == 9) idx.push_back(k);  // samples only: their time is at a known place
      std::vector<size_t> perm = idx;
      std::shuffle(perm.begin(), perm.end(), rng);
      // Rebuild the round: non-samples stay, sample slots get the permuted samples.
      // Samples of equal size only, so offsets of the others do not change.
      std::map<uint16_t, std::vector<size_t>> by_size_slots, by_size_src;
      for (size_t k : idx) by_size_slots[recs[k].size].push_back(k);
      for (size_t k : perm) by_size_src[recs[k].size].push_back(k);
      for (auto& [sz, slots] : by_size_slots) {
        auto& src = by_size_src[sz];
        for (size_t j = 0; j < slots.size(); ++j)
          shuffled.replace(recs[slots[j]].offset, sz, good, recs[src[j]].offset, sz);
      }
      start = i + 1;
    }
    ASSERT_NE(shuffled, good);
    std::string p = write_temp("shuffled.data", shuffled);
    Collect got;
    ASSERT_EQ(read_error(p, &got), "");
    EXPECT_EQ(got.samples, ref.samples);
    // Equal-time samples could legitimately swap; compare as (time-sorted) multisets
    // per time and the time sequence exactly.
    std::vector<uint64_t> t1, t2;
    for (auto& s : ref.seq) t1.push_back(std::stoull(s));
    for (auto& s : got.seq) t2.push_back(std::stoull(s));
    EXPECT_EQ(t1, t2);
    auto a = ref.seq, b = got.seq;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    EXPECT_EQ(a, b);
    size_t same = 0;
    for (size_t k = 0; k < ref.seq.size() && k < got.seq.size(); ++k) same += ref.seq[k] == got.seq[k];
    EXPECT_GE(same + 4, ref.seq.size()) << "only equal-time records may differ in order";
  }
}

// Pipe input from stdin ("-") through a real pipe, not a regular file.
TEST(PerfReader, PipeFromStdin) {
  std::string bytes = test::read_file(fixture("sched_pipe"));
  Collect ref;
  ASSERT_EQ(read_error(fixture("sched_pipe"), &ref), "");
  signal(SIGPIPE, SIG_IGN);
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  int saved = dup(0);
  dup2(fds[0], 0);
  close(fds[0]);
  std::thread writer([&] {
    size_t off = 0;
    while (off < bytes.size()) {
      ssize_t n = write(fds[1], bytes.data() + off, std::min<size_t>(777, bytes.size() - off));
      if (n <= 0) break;
      off += size_t(n);
    }
    close(fds[1]);
  });
  Collect got;
  std::string err;
  try {
    PerfDataReader r("-");
    r.read(got);
    EXPECT_EQ(r.info().attrs.size(), 2u);
    EXPECT_FALSE(r.info().tracing_data.empty());
  } catch (const InputError& e) {
    err = e.what();
  }
  dup2(saved, 0);  // closes the pipe's read end: a stuck writer gets EPIPE
  close(saved);
  writer.join();
  EXPECT_EQ(err, "");
  EXPECT_EQ(got.seq, ref.seq);
}

// Random byte and size-field damage over whole fixtures (file, pipe, zstd,
// dwarf, tracepoint): every read ends with either success or one located
// InputError; never a crash, hang or runaway allocation (run under ASan too).
TEST(PerfDamage, RandomMutations) {
  std::mt19937 rng(1234);
  for (const char* name : {"sched", "sched_pipe", "zstd", "dwarf", "pipe"}) {
    SCOPED_TRACE(name);
    std::string good = test::read_file(fixture(name));
    auto recs = walk(good);
    int errors = 0;
    for (int iter = 0; iter < (std::getenv("FG_PERF_FUZZ_ITERS") ? std::atoi(std::getenv("FG_PERF_FUZZ_ITERS")) : 120); ++iter) {
      std::string bad = good;
      int n = 1 + int(rng() % 4);
      for (int k = 0; k < n; ++k) {
        if (rng() % 2) {
          // A random byte anywhere (header, attrs, features, payloads).
          bad[rng() % bad.size()] = char(rng());
        } else {
          // A field inside a random record: size, type or a body word.
          const Rec& r = recs[rng() % recs.size()];
          size_t off = r.offset + (rng() % 3 == 0 ? 6 : rng() % 3 == 0 ? 0 : 8 + 8 * (rng() % 4));
          if (off + 8 <= bad.size()) set<uint64_t>(bad, off, rng() % 2 ? uint64_t(rng()) : ~uint64_t(0) >> (rng() % 64));
        }
      }
      std::string p = write_temp("mut.data", bad);
      for (bool partial : {false, true}) {
        ReadOptions opt;
        opt.partial = partial;
        std::string err = read_error(p, nullptr, opt);
        if (!err.empty()) {
          ++errors;
          EXPECT_EQ(err.rfind(p + ": byte ", 0), 0u) << err;
          EXPECT_EQ(err.find('\n'), std::string::npos) << err;
        }
      }
    }
    EXPECT_GT(errors, 0);
  }
}

// A handler that throws (std::bad_alloc here) while a round is delivered:
// the exception propagates as itself (the queue's cleanup on that path does
// not allocate, so it cannot turn into std::terminate), the records already
// delivered are dropped and the rest stay queued, in order.
TEST(PerfOrdering, ThrowingDeliveryDropsOnlyWhatWasDelivered) {
  fg::perf_order::RecordOrderQueue q;
  uint64_t rec[2] = {0, 0};
  for (uint64_t t = 0; t < 1000; ++t) q.push(1000 - t, reinterpret_cast<const uint8_t*>(rec), 16, t, 0, 14, true);
  int delivered = 0;
  EXPECT_THROW(q.flush_all([&](const fg::perf_order::QueuedRecord&) {
    if (++delivered == 10) throw std::bad_alloc();
  }),
               std::bad_alloc);
  EXPECT_EQ(q.size(), 990u);
  std::vector<uint64_t> times;
  q.flush_all([&](const fg::perf_order::QueuedRecord& r) { times.push_back(r.time); });
  ASSERT_EQ(times.size(), 990u);
  EXPECT_EQ(times.front(), 11u);  // 1..10 were delivered before the throw
  EXPECT_TRUE(std::is_sorted(times.begin(), times.end()));
  EXPECT_GT(q.footprint(), 0u);
}
