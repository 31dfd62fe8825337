// DWARF unwinding on the checked-in static-PIE recording (testdata/unwind):
// deterministic agreement with the stored perf script output, stack shape,
// outcome reasons for truncated or impossible unwinds, and the Dwfl cache.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <thread>

#include "test_support.h"
#include "unwind_harness.h"

namespace {

using fg::UnwindOutcome;
using namespace fg::test;

const char* kRecordedPath = "/tmp/fgtool-unwind-fixture/qsort_static";

std::string fixture(const std::string& name) { return testdata("unwind/" + name); }

fg::DwarfUnwinder::ElfPathResolver fixture_resolver() {
  return [](const fg::MapEntry& m) -> std::string {
    return m.path == kRecordedPath ? fixture("qsort_static") : std::string();
  };
}

std::unique_ptr<UnwindingCollector> unwind_fixture(fg::DwarfUnwinderOptions options = {}) {
  setenv("DEBUGINFOD_URLS", "", 1);
  auto c = std::make_unique<UnwindingCollector>(options, fixture_resolver());
  fg::PerfDataReader reader(fixture("qsort_static.data"));
  reader.read(*c);
  return c;
}

TEST(DwarfUnwindFixture, RecordedBuildIdIsTheCheckedInBinary) {
  fg::PerfDataReader reader(fixture("qsort_static.data"));
  bool found = false;
  for (const auto& b : reader.info().build_ids) {
    if (b.filename != kRecordedPath) continue;
    found = true;
    EXPECT_EQ(fg::build_id_hex(reinterpret_cast<const uint8_t*>(b.build_id.data()),
                               b.build_id.size()),
              "f8af71dbaa5d1a654163e7cb6193436e5ed5c496");
  }
  EXPECT_TRUE(found);
  auto r = run_shell("eu-readelf -n " + shell_quote(fixture("qsort_static")));
  if (r.status == 0) EXPECT_NE(r.out.find("f8af71dbaa5d1a654163e7cb6193436e5ed5c496"), std::string::npos);
}

TEST(DwarfUnwindFixture, AgreesWithPerfScriptFrameForFrame) {
  auto c = unwind_fixture();
  auto oracle = parse_perf_script(read_file(fixture("expected_perf_script.txt")));
  ASSERT_EQ(oracle.size(), 115u);
  ASSERT_EQ(c->samples.size(), 115u);
  Agreement a = compare_with_oracle(c->samples, oracle);
  std::string why;
  for (const auto& m : a.first_mismatches) why += "\n  " + m;
  EXPECT_EQ(a.compared_samples, 115u);
  EXPECT_GT(a.oracle_frames, 1000u);
  EXPECT_GE(a.ratio(), 0.98) << a.matching << " of " << a.oracle_frames << why;
}

TEST(DwarfUnwindFixture, StacksGoFromTheCallbackThroughQsortToTheThreadRoots) {
  auto c = unwind_fixture();
  size_t callback = 0, full = 0, main_roots = 0, thread_roots = 0;
  for (const auto& s : c->samples) {
    ASSERT_FALSE(s.frames.empty());
    EXPECT_FALSE(s.frames[0].is_return_address);
    for (size_t i = 1; i < s.frames.size(); ++i) EXPECT_TRUE(s.frames[i].is_return_address);
    if (s.frames[0].symbol != "compare_ints") continue;
    ++callback;
    int q = s.index_of("qsort"), w = s.index_of("worker");
    int root = s.index_of("main") >= 0 ? s.index_of("main") : s.index_of("start_thread");
    if (q > 1 && w > q && root > w && s.outcome == UnwindOutcome::complete) ++full;
    if (s.index_of("main") > 0) ++main_roots;
    if (s.index_of("start_thread") > 0) ++thread_roots;
  }
  EXPECT_GT(callback, 10u);
  EXPECT_EQ(full, callback);
  EXPECT_GT(main_roots, 0u);
  EXPECT_GT(thread_roots, 0u);
}

TEST(DwarfUnwindFixture, OneDwflForTheProcessAndOneModule) {
  auto c = unwind_fixture();
  const auto& st = c->unwinder.stats();
  EXPECT_EQ(st.samples, 115u);
  EXPECT_EQ(st.complete(), 115u);
  EXPECT_EQ(st.dwfl_created, 1u);
  EXPECT_LE(st.dwfl_created, c->pids.size() + st.dwfl_invalidated);
  EXPECT_EQ(st.modules_reported, 1u);
  EXPECT_EQ(st.truncated(), 0u);
}

TEST(DwarfUnwindFixture, DepthLimitKeepsTheLeafFrames) {
  fg::DwarfUnwinderOptions o;
  o.max_frames = 4;
  auto c = unwind_fixture(o);
  auto full = unwind_fixture();
  ASSERT_EQ(c->samples.size(), full->samples.size());
  for (size_t i = 0; i < c->samples.size(); ++i) {
    const auto& s = c->samples[i];
    const auto& f = full->samples[i];
    ASSERT_LE(s.frames.size(), 4u);
    if (f.frames.size() > 4) {
      EXPECT_EQ(s.outcome, UnwindOutcome::depth_limit);
    }
    for (size_t k = 0; k < s.frames.size(); ++k) EXPECT_EQ(s.frames[k].pc, f.frames[k].pc);
  }
  EXPECT_GT(c->unwinder.stats().by_outcome[size_t(UnwindOutcome::depth_limit)], 100u);
}

TEST(DwarfUnwindFixture, MissingElfIsCountedAsNoModule) {
  setenv("DEBUGINFOD_URLS", "", 1);
  UnwindingCollector c({}, [](const fg::MapEntry&) { return std::string(); });
  fg::PerfDataReader reader(fixture("qsort_static.data"));
  reader.read(c);
  ASSERT_EQ(c.samples.size(), 115u);
  for (const auto& s : c.samples) {
    EXPECT_EQ(s.outcome, UnwindOutcome::no_module);
    ASSERT_EQ(s.frames.size(), 1u);  // the IP is still known
  }
}

// Captures the raw REGS_USER/STACK_USER of every sample so that tests can
// replay them with changes.
struct RawSample {
  int32_t pid = 0, tid = 0;
  uint64_t abi = 0, mask = 0;
  std::vector<uint64_t> regs;
  std::vector<uint8_t> stack;
  fg::UserStackSample view() const {
    fg::UserStackSample u;
    u.pid = pid;
    u.tid = tid;
    u.abi = abi;
    u.regs = regs.data();
    u.regs_mask = mask;
    u.stack = stack.data();
    u.stack_size = stack.size();
    return u;
  }
};

struct RawCollector : fg::RecordHandler {
  fg::ProcessTable table;
  std::vector<RawSample> samples;
  void on_mmap(const fg::MmapRecord& r) override { table.apply(r); }
  void on_comm(const fg::CommRecord& r) override { table.apply(r); }
  void on_fork(const fg::TaskRecord& r) override { table.apply_fork(r); }
  void on_exit(const fg::TaskRecord& r) override { table.apply_exit(r); }
  void on_sample(const fg::Sample& s) override {
    RawSample r;
    r.pid = s.pid;
    r.tid = s.tid;
    r.abi = s.regs_abi;
    r.mask = s.regs_user_mask;
    if (s.regs_user) r.regs.assign(s.regs_user, s.regs_user + __builtin_popcountll(s.regs_user_mask));
    uint64_t n = std::min(s.stack_user_dyn_size, s.stack_user_size);
    if (s.stack_user) r.stack.assign(s.stack_user, s.stack_user + n);
    samples.push_back(std::move(r));
  }
};

class DwarfUnwindReplay : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("DEBUGINFOD_URLS", "", 1);
    fg::PerfDataReader reader(fixture("qsort_static.data"));
    reader.read(raw);
    ASSERT_EQ(raw.samples.size(), 115u);
  }
  RawCollector raw;
};

TEST_F(DwarfUnwindReplay, ImpossibleSamplesSayWhy) {
  fg::DwarfUnwinder u(raw.table, {}, fixture_resolver());
  std::vector<fg::UnwindFrame> frames;
  RawSample s = raw.samples[0];

  RawSample kernel_thread = s;
  kernel_thread.abi = fg::kRegsAbiNone;
  EXPECT_EQ(u.unwind(kernel_thread.view(), frames), UnwindOutcome::no_regs);
  EXPECT_TRUE(frames.empty());

  RawSample compat = s;
  compat.abi = fg::kRegsAbi32;
  EXPECT_EQ(u.unwind(compat.view(), frames), UnwindOutcome::unsupported_abi);
  EXPECT_TRUE(frames.empty());

  RawSample future = s;
  future.abi = 6;
  EXPECT_EQ(u.unwind(future.view(), frames), UnwindOutcome::unsupported_abi);

  RawSample no_ip = s;  // IP (perf reg 8) missing from the mask
  no_ip.mask &= ~(uint64_t{1} << 8);
  no_ip.regs.erase(no_ip.regs.begin() + 8);
  EXPECT_EQ(u.unwind(no_ip.view(), frames), UnwindOutcome::no_regs);

  RawSample no_stack = s;
  no_stack.stack.clear();
  EXPECT_EQ(u.unwind(no_stack.view(), frames), UnwindOutcome::no_stack);
  ASSERT_EQ(frames.size(), 1u);
  uint64_t ip = 0;
  ASSERT_TRUE(s.view().reg(8, &ip));
  EXPECT_EQ(frames[0].pc, ip);

  RawSample unknown_pid = s;
  unknown_pid.pid = 999999;
  EXPECT_EQ(u.unwind(unknown_pid.view(), frames), UnwindOutcome::no_module);

  const auto& st = u.stats();
  EXPECT_EQ(st.samples, 6u);
  EXPECT_EQ(st.by_outcome[size_t(UnwindOutcome::no_regs)], 2u);
  EXPECT_EQ(st.by_outcome[size_t(UnwindOutcome::unsupported_abi)], 2u);
  EXPECT_EQ(st.dwfl_created, 0u);  // nothing needed one
}

TEST_F(DwarfUnwindReplay, ShortStackCopyTruncatesHonestly) {
  fg::DwarfUnwinder full_u(raw.table, {}, fixture_resolver());
  fg::DwarfUnwinder short_u(raw.table, {}, fixture_resolver());
  std::vector<fg::UnwindFrame> full, part;
  size_t outside = 0;
  for (const RawSample& s : raw.samples) {
    ASSERT_EQ(full_u.unwind(s.view(), full), UnwindOutcome::complete);
    RawSample cut = s;
    cut.stack.resize(std::min<size_t>(cut.stack.size(), 96));
    UnwindOutcome o = short_u.unwind(cut.view(), part);
    ASSERT_FALSE(part.empty());
    ASSERT_LE(part.size(), full.size());
    for (size_t k = 0; k < part.size(); ++k) EXPECT_EQ(part[k].pc, full[k].pc);  // a prefix
    if (o == UnwindOutcome::memory_outside_copy || o == UnwindOutcome::memory_outside_copy_unmarked) {
      ++outside;
      EXPECT_LT(part.size(), full.size());
    }
  }
  std::string outcomes;
  for (size_t i = 0; i < fg::kUnwindOutcomeCount; ++i)
    if (short_u.stats().by_outcome[i])
      outcomes += std::string(fg::to_string(UnwindOutcome(i))) + " " +
                  std::to_string(short_u.stats().by_outcome[i]) + "; ";
  EXPECT_GT(outside, raw.samples.size() / 2) << outcomes << short_u.last_error();
  EXPECT_GT(short_u.stats().refused_reads, 0u);
}

// perf's stack readers count the copy's last word as outside it (addr + 8 >=
// end), so perf script cuts a stack whose next return address lies there.
// The unwinder does the same: whatever the last word holds never shapes the
// stack. Cutting copies at every 8 bytes puts a return address in the last
// word of many of them; poisoning that word must change nothing.
TEST_F(DwarfUnwindReplay, CopysLastWordIsOutsideItAsInPerf) {
  fg::DwarfUnwinder full_u(raw.table, {}, fixture_resolver());
  fg::DwarfUnwinder cut_u(raw.table, {}, fixture_resolver());
  fg::DwarfUnwinder poisoned_u(raw.table, {}, fixture_resolver());
  std::vector<fg::UnwindFrame> full, cut, poisoned;
  size_t return_address_in_last_word = 0;
  for (size_t i = 0; i < raw.samples.size(); i += 8) {
    ASSERT_EQ(full_u.unwind(raw.samples[i].view(), full), UnwindOutcome::complete);
    for (size_t size = 16; size <= 768 && size < raw.samples[i].stack.size(); size += 8) {
      RawSample c = raw.samples[i];
      c.stack.resize(size);
      RawSample p = c;
      uint64_t last = 0, junk = 0x5555deadbeefull;
      std::memcpy(&last, &c.stack[size - 8], 8);
      std::memcpy(&p.stack[size - 8], &junk, 8);
      UnwindOutcome oc = cut_u.unwind(c.view(), cut);
      UnwindOutcome op = poisoned_u.unwind(p.view(), poisoned);
      EXPECT_EQ(oc, op) << "sample " << i << " copy " << size;
      ASSERT_EQ(cut.size(), poisoned.size()) << "sample " << i << " copy " << size;
      for (size_t k = 0; k < cut.size(); ++k) EXPECT_EQ(cut[k].pc, poisoned[k].pc);
      if (cut.size() < full.size() && last == full[cut.size()].pc) {
        ++return_address_in_last_word;
        EXPECT_EQ(oc, UnwindOutcome::memory_outside_copy) << "sample " << i << " copy " << size;
      }
    }
  }
  EXPECT_GT(return_address_in_last_word, 5u);
}

TEST_F(DwarfUnwindReplay, MapChangesInvalidateTheDwflOnlyWhenTheyTouchReportedModules) {
  fg::DwarfUnwinder u(raw.table, {}, fixture_resolver());
  std::vector<fg::UnwindFrame> frames;
  const RawSample& s = raw.samples[0];
  ASSERT_EQ(u.unwind(s.view(), frames), UnwindOutcome::complete);
  EXPECT_EQ(u.stats().dwfl_created, 1u);
  // A new mapping elsewhere (dlopen of something unrelated): the Dwfl stays.
  raw.table.add_mmap(s.pid, 0x10000, 0x1000, 0, "/nonexistent/libx.so", true);
  ASSERT_EQ(u.unwind(s.view(), frames), UnwindOutcome::complete);
  EXPECT_EQ(u.stats().dwfl_created, 1u);
  EXPECT_EQ(u.stats().dwfl_invalidated, 0u);
  // Re-mapping the binary's text (a new MMAP over the reported mapping)
  // makes the Dwfl stale: it is rebuilt once and unwinding still works.
  uint64_t ip = 0;
  ASSERT_TRUE(s.view().reg(8, &ip));
  const fg::MapEntry* text = raw.table.find(s.pid, ip);
  ASSERT_NE(text, nullptr);
  raw.table.add_mmap(s.pid, text->start, text->end - text->start, text->pgoff, text->path, true,
                     text->prot, text->flags);
  ASSERT_EQ(u.unwind(s.view(), frames), UnwindOutcome::complete);
  EXPECT_EQ(u.stats().dwfl_created, 2u);
  EXPECT_EQ(u.stats().dwfl_invalidated, 1u);
  for (const RawSample& r : raw.samples) u.unwind(r.view(), frames);
  EXPECT_EQ(u.stats().dwfl_created, 2u);
}

TEST_F(DwarfUnwindReplay, InstancesAreIndependentAcrossThreads) {
  // One DwarfUnwinder per worker thread over a shared, unchanging table.
  std::vector<std::vector<uint64_t>> results(2);
  std::vector<std::thread> workers;
  for (int w = 0; w < 2; ++w) {
    workers.emplace_back([&, w] {
      fg::DwarfUnwinder u(raw.table, {}, fixture_resolver());
      std::vector<fg::UnwindFrame> frames;
      for (int round = 0; round < 3; ++round)
        for (const RawSample& s : raw.samples) {
          u.unwind(s.view(), frames);
          if (round == 0)
            for (const auto& f : frames) results[w].push_back(f.pc);
        }
    });
  }
  for (auto& t : workers) t.join();
  EXPECT_GT(results[0].size(), 1000u);
  EXPECT_EQ(results[0], results[1]);
}

}  // namespace

namespace {

TEST_F(DwarfUnwindReplay, ForkedChildGetsItsOwnDwflAndTheCacheIsBounded) {
  const RawSample& s = raw.samples[0];
  raw.table.on_fork(s.pid + 1000, s.pid, s.pid + 1000, s.tid);  // a child with a copy of the maps
  RawSample child = s;
  child.pid = child.tid = s.pid + 1000;
  std::vector<fg::UnwindFrame> a, b;

  fg::DwarfUnwinder roomy(raw.table, {}, fixture_resolver());
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(roomy.unwind(s.view(), a), UnwindOutcome::complete);
    ASSERT_EQ(roomy.unwind(child.view(), b), UnwindOutcome::complete);
    EXPECT_EQ(a.size(), b.size());
  }
  EXPECT_EQ(roomy.stats().dwfl_created, 2u);  // one per pid, not per sample
  EXPECT_EQ(roomy.stats().dwfl_evicted, 0u);

  fg::DwarfUnwinderOptions o;
  o.max_cached_processes = 1;
  fg::DwarfUnwinder tight(raw.table, o, fixture_resolver());
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(tight.unwind(s.view(), a), UnwindOutcome::complete);
    ASSERT_EQ(tight.unwind(child.view(), b), UnwindOutcome::complete);
  }
  EXPECT_EQ(tight.stats().dwfl_created, 6u);
  EXPECT_EQ(tight.stats().dwfl_evicted, 5u);
  EXPECT_LE(tight.stats().dwfl_created, 2 + tight.stats().dwfl_invalidated + tight.stats().dwfl_evicted);
}

}  // namespace
