// PerfDataCollector fed directly (as the fold feeds it): thousands of
// threads, so that its root table is looked up after it has grown, and
// enough frames that raw stacks reach the location thread in several
// hand-offs; the thread gives the same locations as the fold's own thread.
#include <gtest/gtest.h>

#include <cstdlib>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "pprof/perf_data_collector.h"
#include "fixture_fold_options.h"
#include "test_support.h"
#include "folded_text.h"
#include "pprof/pprof_reader.h"
#include "pprof/pprof_export.h"
#include "unwind/process_table.h"

namespace fg {
namespace {

// A synthetic fold: `threads` threads (short comms, as most are) in
// `processes` processes, each process mapping the same two objects at its
// own place; `stacks` raw stacks of 12 frames cycling through the threads,
// each stack's frames at offsets depending on its index.
struct SyntheticFold {
  std::deque<MapEntry> maps;         // per process: two objects
  std::deque<std::string> comms;     // per thread
  std::vector<FrameId> arena;        // names: entry e is arena[e] = e % 97
  std::vector<std::vector<RawStackFrame>> stacks;
  std::vector<RawStackRoot> roots;

  SyntheticFold(int processes, int threads, int stacks_count) {
    for (int p = 0; p < processes; ++p)
      for (int o = 0; o < 2; ++o) {
        MapEntry m;
        m.start = 0x400000 + uint64_t(p) * 0x10000000 + uint64_t(o) * 0x1000000;
        m.end = m.start + 0x100000;
        m.path = o ? "/usr/lib/libb.so" : "/usr/bin/a";
        m.id = maps.size() + 1;
        maps.push_back(m);
      }
    arena.resize(4096);
    for (size_t e = 0; e < arena.size(); ++e) arena[e] = FrameId(e % 97);
    for (int t = 0; t < threads; ++t) comms.push_back("t" + std::to_string(t % 50));  // comms repeat across pids
    for (int i = 0; i < stacks_count; ++i) {
      const int t = i % threads, p = t % processes;
      RawStackRoot r;
      r.comm = comms[size_t(t)];
      r.pid = 1000 + p;
      r.tid = 1000 + t;
      r.frame = FrameId(100 + t % 50);
      roots.push_back(r);
      std::vector<RawStackFrame> frames;
      for (int k = 0; k < 12; ++k) {
        RawStackFrame f;
        const MapEntry& m = maps[size_t(p) * 2 + size_t(k & 1)];
        // A frame-cache entry is one object offset: the objects' are apart.
        const uint32_t entry = uint32_t((i * 7 + k * 131) % 2000) + uint32_t(k & 1) * 2000;
        f.address = m.start + entry * 16;
        f.map = &m;
        f.return_address = k > 0;
        f.names_start = entry;
        f.name_count = 1;
        f.names = &arena[entry];
        frames.push_back(f);
      }
      if (i % 5 == 0) {  // a kernel frame and an unmapped (JIT) one
        RawStackFrame k;
        k.address = 0xffffffff81000000ull + uint64_t(i % 50) * 8;
        k.kernel = true;
        k.names_start = 4000 + uint32_t(i % 50);
        k.name_count = 1;
        k.names = &arena[k.names_start];
        frames.insert(frames.begin(), k);
        RawStackFrame j;
        j.address = 0x7f0000000000ull + uint64_t(i % 700);
        j.names_start = 4050;
        j.name_count = 1;
        j.names = &arena[j.names_start];
        frames.push_back(j);
      }
      stacks.push_back(frames);
    }
  }

  void feed(PerfDataCollector& c) const {
    feed_raw_stacks(c);
    for (size_t i = 0; i < stacks.size(); ++i) c.on_samples(uint32_t(i), 1, 1e6, NodeId(i + 1));
    c.finish();
  }

  void feed_raw_stacks(PerfDataCollector& c) const {
    for (size_t i = 0; i < stacks.size(); ++i) {
      if (c.follows_memo()) feed_with_memo(c, i);
      else c.on_raw_stack(uint32_t(i), roots[i], stacks[i].data(), stacks[i].size(), RawStackMemo{});
    }
  }

  // As the fold's path memo would: a slot per thread, holding the stack
  // before's outermost mapped frames; the callers shared with it are not
  // handed over again.
  void feed_with_memo(PerfDataCollector& c, size_t i) const {
    const std::vector<RawStackFrame>& st = stacks[i];
    const size_t t = size_t(roots[i].tid - 1000);
    std::vector<const RawStackFrame*>& memo = memos[t];
    size_t reused = 0;
    while (reused < memo.size() && reused < st.size() && memo[reused]->address == st[st.size() - 1 - reused].address &&
           memo[reused]->kernel == st[st.size() - 1 - reused].kernel)
      ++reused;
    const size_t fresh = st.size() - reused;
    memo.resize(reused);
    for (size_t k = fresh; k-- > 0 && (st[k].kernel || st[k].map);) memo.push_back(&st[k]);
    c.on_raw_stack(uint32_t(i), roots[i], st.data(), fresh,
                   RawStackMemo{uint32_t(t), uint32_t(reused), uint32_t(memo.size())});
  }
  mutable std::map<size_t, std::vector<const RawStackFrame*>> memos;
};

TEST(PerfDataCollector, EveryThreadKeepsItsOwnRootAmongThousands) {
  const SyntheticFold fold(40, 3000, 9000);
  PerfDataCollector c(false, PprofAddresses::process);
  fold.feed(c);
  ASSERT_EQ(c.roots.size(), 3000u);  // one per (comm, pid, tid), none twice
  ASSERT_EQ(c.raws.size(), fold.stacks.size());
  for (size_t i = 0; i < fold.stacks.size(); ++i) {
    const PerfDataCollector::Root& r = c.roots[c.raws[i].root];
    EXPECT_EQ(r.comm, fold.roots[i].comm) << "raw stack " << i;
    EXPECT_EQ(r.pid, fold.roots[i].pid);
    EXPECT_EQ(r.tid, fold.roots[i].tid);
  }
}

TEST(PerfDataCollector, LocationThreadGivesTheSameLocations) {
  // 9000 stacks of 12-14 frames: over 100k frames, a dozen hand-offs.
  const SyntheticFold fold(40, 300, 9000);
  PerfDataCollector threaded(true, PprofAddresses::process), inline_(false, PprofAddresses::process);
  fold.feed(threaded);
  fold.feed(inline_);
  ASSERT_EQ(threaded.stack_locs.size(), inline_.stack_locs.size());
  for (size_t i = 0; i < threaded.stack_locs.size(); ++i) ASSERT_EQ(threaded.stack_locs[i], inline_.stack_locs[i]) << i;
  ASSERT_EQ(threaded.locations.size(), inline_.locations.size());
  for (size_t i = 0; i < threaded.locations.size(); ++i) {
    EXPECT_EQ(threaded.locations[i].address, inline_.locations[i].address);
    EXPECT_EQ(threaded.locations[i].mapping, inline_.locations[i].mapping);
    EXPECT_EQ(threaded.locations[i].names, inline_.locations[i].names);
  }
  ASSERT_EQ(threaded.mappings.size(), inline_.mappings.size());
  EXPECT_EQ(threaded.mappings.size(), 40u * 2 + 1);  // the kernel's too

  // Each raw stack: its frames' locations (one per mapping and address),
  // then the root frame's.
  for (size_t i = 0; i < fold.stacks.size(); ++i) {
    const PerfDataCollector::RawStack& r = threaded.raws[i];
    ASSERT_EQ(r.locs_count, fold.stacks[i].size() + 1);
    for (size_t k = 0; k < fold.stacks[i].size(); ++k) {
      const PerfDataCollector::LocationCopy& l = threaded.locations[threaded.stack_locs[r.locs_start + k]];
      EXPECT_EQ(l.address, fold.stacks[i][k].address);
      EXPECT_EQ(PerfDataCollector::return_address(l), fold.stacks[i][k].return_address);
      ASSERT_EQ(threaded.name_count(l), 1u);
      EXPECT_EQ(threaded.location_names(l)[0], fold.arena[fold.stacks[i][k].names_start]);
    }
    const PerfDataCollector::LocationCopy& root = threaded.locations[threaded.stack_locs[r.locs_start + r.locs_count - 1]];
    EXPECT_EQ(root.address, 0u);
    EXPECT_EQ(root.mapping, PerfDataCollector::kNone);
    EXPECT_EQ(threaded.location_names(root)[0], fold.roots[i].frame);
  }
  // One location per object offset in each process, kernel address, JIT
  // address and root frame.
  std::set<std::tuple<int, uint64_t, uint64_t>> distinct;
  for (size_t i = 0; i < fold.stacks.size(); ++i) {
    for (const RawStackFrame& f : fold.stacks[i]) {
      if (f.kernel) distinct.emplace(1, f.address, 0);
      else if (f.map) distinct.emplace(2, f.map->id, f.names_start);
      else distinct.emplace(3, f.address, f.names_start);
    }
    distinct.emplace(4, fold.roots[i].frame, 0);
  }
  EXPECT_EQ(threaded.locations.size(), distinct.size());
}

// Keyed by object offset: a location per fold frame-cache entry (one
// object offset, kernel address or JIT address) whatever the process, its
// address rebased onto the object's first mapping (the same file offset),
// a mapping per object (not per process), and unmapped addresses one
// location each. Fed through the memo (the shared callers not handed over
// again), each stack's locations are those of the whole stack.
TEST(PerfDataCollector, ObjectAddressesAreOneLocationPerObjectOffset) {
  SyntheticFold fold(40, 300, 9000);
  // Some stacks repeat their predecessor's callers, so the memo is used.
  for (size_t i = 300; i < fold.stacks.size(); i += 3) {
    std::vector<RawStackFrame>& st = fold.stacks[i];
    const std::vector<RawStackFrame>& before = fold.stacks[i - 300];  // the same thread's
    const size_t n = std::min(st.size(), before.size());
    for (size_t k = 3; k < n; ++k) st[st.size() - 1 - (k - 3)] = before[before.size() - 1 - (k - 3)];
  }
  PerfDataCollector c(false, PprofAddresses::object);
  ASSERT_TRUE(c.follows_memo());
  fold.feed(c);
  size_t reused = 0;
  for (size_t i = 0; i < fold.stacks.size(); ++i) {
    const PerfDataCollector::RawStack& r = c.raws[i];
    ASSERT_EQ(r.locs_count, fold.stacks[i].size() + 1);
    for (size_t k = 0; k < fold.stacks[i].size(); ++k) {
      const RawStackFrame& f = fold.stacks[i][k];
      const PerfDataCollector::LocationCopy& l = c.locations[c.stack_locs[r.locs_start + k]];
      ASSERT_EQ(c.name_count(l), 1u);
      EXPECT_EQ(c.location_names(l)[0], fold.arena[f.names_start]);
      if (f.map) {
        const PerfDataCollector::MappingCopy& m = c.mappings.at(l.mapping);
        EXPECT_EQ(m.path, f.map->path);
        EXPECT_EQ(l.address - m.start + m.offset, f.address - f.map->start + f.map->pgoff) << "stack " << i;
      } else {
        EXPECT_EQ(l.address, f.address);
      }
    }
    EXPECT_EQ(c.location_names(c.locations[c.stack_locs[r.locs_start + r.locs_count - 1]])[0], fold.roots[i].frame);
  }
  for (const auto& [t, memo] : fold.memos) reused += memo.size();
  EXPECT_GT(reused, 0u);
  std::set<std::tuple<int, uint64_t>> distinct;
  for (const auto& st : fold.stacks)
    for (const RawStackFrame& f : st)
      distinct.emplace(f.kernel || f.map ? 1 : 2, f.kernel || f.map ? f.names_start : f.address);
  for (const RawStackRoot& r : fold.roots) distinct.emplace(3, r.frame);
  EXPECT_EQ(c.locations.size(), distinct.size());
  EXPECT_EQ(c.mappings.size(), 2u + 1);  // the two objects and the kernel
}

// A fold that stops short (an InputError on its way out) calls
// on_fold_abandoned before its maps go: with per-process addresses the
// location thread is stopped there, its queued raw stacks (which point at
// the maps) dropped, so nothing reads a map afterwards (ASan checks this in
// the sanitizer build: the maps are freed right after the call).
TEST(PerfDataCollector, AnAbandonedFoldStopsTheLocationThreadBeforeItsMapsGo) {
  for (PprofAddresses a : {PprofAddresses::process, PprofAddresses::object}) {
    auto fold = std::make_unique<SyntheticFold>(40, 300, 9000);
    PerfDataCollector c(true, a);
    fold->feed_raw_stacks(c);
    c.on_fold_abandoned();
    fold.reset();  // the maps are gone
    c.finish();    // nothing left to do, nothing read
  }
}

// A memo hand-over that does not fit what the collector kept for the slot
// (more callers reused than the slot holds, more new ones kept than the
// stack has) is the fold's bug, never input: a logic_error, not a stack
// with made-up locations.
TEST(PerfDataCollector, AMemoOutOfStepIsALogicError) {
  const SyntheticFold fold(2, 2, 4);
  PerfDataCollector c(false, PprofAddresses::object);
  const std::vector<RawStackFrame>& st = fold.stacks[0];
  EXPECT_THROW(c.on_raw_stack(0, fold.roots[0], st.data(), st.size(), RawStackMemo{5, 1, 1}),
               std::logic_error);
  EXPECT_THROW(c.on_raw_stack(0, fold.roots[0], st.data(), st.size(),
                              RawStackMemo{5, 0, uint32_t(st.size() + 1)}),
               std::logic_error);
  c.on_raw_stack(0, fold.roots[0], st.data(), st.size(), RawStackMemo{5, 0, 3});
  EXPECT_EQ(c.raws[0].locs_count, st.size() + 1);
}

// pprof tools take the first mapping for the main binary. The collector
// numbers mappings as frames first use them (here the kernel first); the
// main one is the executable of the heaviest thread whose comm names one,
// never a shared library, and failing that the first executable.
TEST(PerfDataCollector, TheMainMappingIsTheHeaviestThreadsExecutable) {
  std::deque<MapEntry> maps;
  for (const char* path : {"/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", "/usr/lib/libz.so.1",
                           "/usr/bin/python3.11", "/usr/bin/gzip", "//anon"}) {
    MapEntry m;
    m.start = 0x400000 + maps.size() * 0x100000;
    m.end = m.start + 0x10000;
    m.path = path;
    m.id = maps.size() + 1;
    maps.push_back(m);
  }
  const std::vector<FrameId> arena(64, FrameId(1));
  struct Thread {
    std::string comm;
    std::vector<int> maps;  // -1: a kernel frame
  };
  // Frames leaf first: the first stack's leaf is in the kernel.
  const std::vector<Thread> threads = {
      {"swapper/0", {-1}}, {"ld", {0, -1}}, {"python3", {1, 2}}, {"gzip", {1, 3}}, {"node", {4}}};
  auto main_path = [&](const std::vector<double>& weights) {
    PerfDataCollector c(false, PprofAddresses::object);
    for (size_t t = 0; t < threads.size(); ++t) {
      RawStackRoot root;
      root.comm = threads[t].comm;
      root.pid = root.tid = int32_t(100 + t);
      root.frame = FrameId(10 + t);
      std::vector<RawStackFrame> frames;
      for (int m : threads[t].maps) {
        RawStackFrame f;
        f.kernel = m < 0;
        f.map = m < 0 ? nullptr : &maps[size_t(m)];
        f.address = m < 0 ? 0xffffffff81000000ull : f.map->start + 0x10;
        f.names_start = uint32_t(m + 1);
        f.name_count = 1;
        f.names = &arena[f.names_start];
        frames.push_back(f);
      }
      c.on_raw_stack(uint32_t(t), root, frames.data(), frames.size(), RawStackMemo{uint32_t(t), 0, 0});
      c.on_samples(uint32_t(t), 1, weights[t], NodeId(t + 1));
    }
    c.finish();
    EXPECT_TRUE(c.mappings.at(0).kernel);
    const uint32_t m = c.main_mapping();
    return m == PerfDataCollector::kNone ? std::string("none") : c.mappings.at(m).path;
  };
  EXPECT_EQ(main_path({100, 90, 30, 10, 5}), "/usr/bin/python3.11");  // not ld-linux for "ld"
  EXPECT_EQ(main_path({100, 90, 10, 30, 5}), "/usr/bin/gzip");
  EXPECT_EQ(main_path({100, 90, 0, 0, 50}), "/usr/bin/python3.11");  // "node" has no file: the first executable
}

}  // namespace
// The fold bounds its raw-stack table with an observer too: stacks it
// forgets are reported to the observer then, and one seen again is a new
// raw stack (a second pprof sample with the same locations). The profile
// read back from the pprof is the same as with the table unbounded, and as
// the fold's own.
TEST(PerfDataCollector, ABoundedRawStackTableGivesTheSameProfile) {
  setenv("DEBUGINFOD_URLS", "", 1);
  const std::string dir = fg::test::temp_dir();
  fg::test::write_file(dir + "/kallsyms", "");
  for (const char* fixture : {"fold/fp_static.data", "fold/dwarf_static.data"}) {
    SCOPED_TRACE(fixture);
    fg::FoldOptions o;
    o.symbols.symfs = fg::test::testdata("fold/symfs");
    o.symbols.kallsyms_path = dir + "/kallsyms";
    o.symbols.buildid_dir = dir;
    o.max_raw_stacks = 0;
    fg::FoldedProfile folded;
    fg::FoldStats unbounded_stats, bounded_stats;
    const std::string unbounded = fg::pprof_from_perf_data(fg::test::testdata(fixture), o, {}, &unbounded_stats, &folded);
    o.max_raw_stacks = 2;
    const std::string bounded = fg::pprof_from_perf_data(fg::test::testdata(fixture), o, {}, &bounded_stats);
    EXPECT_GT(bounded_stats.unique_raw_stacks, unbounded_stats.unique_raw_stacks);  // stacks seen again
    fg::FoldedProfile a, b;
    fg::PprofReadInfo info_a, info_b;
    fg::read_pprof_data(unbounded, "unbounded", a, {}, &info_a);
    fg::read_pprof_data(bounded, "bounded", b, {}, &info_b);
    EXPECT_GT(info_b.samples, info_a.samples);
    EXPECT_EQ(fg::test::folded_text(b), fg::test::folded_text(a));
    EXPECT_EQ(fg::test::folded_text(a), fg::test::folded_text(folded));
    EXPECT_FALSE(fg::test::folded_text(a).empty());
  }
}

// With a symbolising thread, a raw stack seen again after the table forgot
// it is not named again: the fold's KnownStacks gives it the earlier raw
// stack's index, and the collector copies that stack's entry
// (on_known_raw_stack). The pprof written is byte for byte the one the
// fold on one thread writes, where every such stack is named again.
TEST(PerfDataCollector, KnownStacksWriteTheSameBytes) {
  uint64_t known = 0;
  for (const std::string& path : fg::test::perf_data_fixtures()) {
    fg::FoldOptions o = fg::test::fixture_fold_options();
    o.max_raw_stacks = 2;
    auto pprof = [&](unsigned threads, fg::FoldStats* st) {
      o.threads = threads;
      try {
        return fg::pprof_from_perf_data(path, o, {}, st);
      } catch (const std::exception& e) {
        return std::string("error: ") + e.what();
      }
    };
    fg::FoldStats one, two;
    EXPECT_EQ(pprof(2, &two), pprof(1, &one)) << path;
    EXPECT_EQ(one.known_stacks, 0u);
    known += two.known_stacks;
  }
  EXPECT_GT(known, 20u);
}

TEST(PerfDataCollector, AKnownRawStackMustRepeatOneHandedOver) {
  PerfDataCollector c(false, PprofAddresses::object);
  EXPECT_TRUE(c.takes_known_stacks());
  EXPECT_FALSE(PerfDataCollector(false, PprofAddresses::process).takes_known_stacks());
  EXPECT_THROW(c.on_known_raw_stack(1, 0), std::logic_error);  // raw stack 0 was never handed over
  RawStackRoot root;
  root.comm = "t";
  root.pid = root.tid = 7;
  root.frame = 0;
  c.on_raw_stack(0, root, nullptr, 0, RawStackMemo{});
  c.on_known_raw_stack(3, 0);
  ASSERT_EQ(c.raws.size(), 4u);
  EXPECT_EQ(c.raws[3].root, c.raws[0].root);
  EXPECT_EQ(c.raws[3].locs_start, c.raws[0].locs_start);
  EXPECT_EQ(c.raws[3].locs_count, c.raws[0].locs_count);
  EXPECT_EQ(c.raws[1].root, PerfDataCollector::kNone);  // never told
  EXPECT_THROW(c.on_known_raw_stack(4, 4), std::logic_error);  // not an earlier one
}

}  // namespace fg
