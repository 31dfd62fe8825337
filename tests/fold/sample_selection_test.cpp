// SampleSelection (lib/fold/sample_selection.h): the filters, the root
// frame names (comm, comm-PID, comm-PID/TID), perf's ":TID" for unnamed
// threads, and the per-tid cache's invalidation.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "fold/sample_selection.h"

namespace fg {
namespace {

TEST(SampleSelection, FiltersByPidTidCommAndTime) {
  ProcessTable table;
  SampleSelectionOptions o;
  o.pids = {10, 11};
  o.tids = {12, 13, 14};
  o.comms = {"a", "b"};
  o.time_start = 1.0;
  o.time_end = 2.0;
  SampleSelection sel(o, table);
  EXPECT_TRUE(sel.selected(10, 12, 1500000000, "a"));
  EXPECT_FALSE(sel.selected(9, 12, 1500000000, "a"));
  EXPECT_FALSE(sel.selected(10, 15, 1500000000, "a"));
  EXPECT_FALSE(sel.selected(10, 12, 1500000000, "c"));
  EXPECT_FALSE(sel.selected(10, 12, 999999999, "a"));
  EXPECT_TRUE(sel.selected(10, 12, 1000000000, "a"));
  EXPECT_TRUE(sel.selected(10, 12, 2000000000, "b"));
  EXPECT_FALSE(sel.selected(10, 12, 2000000001, "b"));
  SampleSelection all(SampleSelectionOptions{}, table);
  EXPECT_TRUE(all.selected(-1, -1, 0, ""));
}

TEST(SampleSelection, RootNamesFollowStackcollapsePerf) {
  ProcessTable table;
  table.on_comm(10, 10, "my prog;x", false);
  table.on_comm(10, 11, "worker", false);
  SampleSelection plain(SampleSelectionOptions{}, table);
  SampleSelectionOptions by_pid;
  by_pid.root_with_pid = true;
  SampleSelection pid(by_pid, table);
  SampleSelectionOptions by_tid;
  by_tid.root_with_tid = true;
  SampleSelection tid(by_tid, table);

  std::string_view comm = plain.comm_of(10, 10);
  EXPECT_EQ(comm, "my prog;x");
  EXPECT_EQ(plain.root(comm, 10, 10)->name, "my_prog:x");
  EXPECT_EQ(pid.root(comm, 10, 10)->name, "my_prog:x-10");
  EXPECT_EQ(tid.root(comm, 10, 10)->name, "my_prog:x-10/10");
  // The same name is the same root; with per-pid names, other pids differ.
  EXPECT_EQ(plain.root(comm, 10, 10), plain.root(comm, 20, 21));
  EXPECT_NE(pid.root(comm, 10, 10), pid.root(comm, 20, 20));
  EXPECT_EQ(pid.root(comm, 10, 10), pid.root(comm, 10, 11));
  EXPECT_NE(tid.root(comm, 10, 10), tid.root(comm, 10, 11));
  EXPECT_EQ(tid.root(comm, 10, 11)->name, "my_prog:x-10/11");
  EXPECT_EQ(plain.root(comm, 10, 10)->frame, FoldedProfile::kNoFrame);  // interned by the symboliser
}

TEST(SampleSelection, PerThreadRootsKeepNamesButSplitThreads) {
  ProcessTable table;
  table.on_comm(10, 10, "prog", false);
  SampleSelectionOptions o;
  o.roots_per_thread = true;
  o.keep_root_comm = true;
  SampleSelection sel(o, table);
  std::string_view comm = sel.comm_of(10, 10);
  ThreadRoot* a = sel.root(comm, 10, 10);
  ThreadRoot* b = sel.root(comm, 10, 11);
  EXPECT_NE(a, b);
  EXPECT_EQ(a->name, "prog");
  EXPECT_EQ(b->name, "prog");
  EXPECT_EQ(b->comm, "prog");
  EXPECT_EQ(b->tid, 11);
}

// A sched_switch sample's prev_comm points into the record buffer, which the
// next record overwrites: the same address with other text is another root.
TEST(SampleSelection, RootsAreKeyedByTheCommTextNotItsAddress) {
  ProcessTable table;
  SampleSelection sel(SampleSelectionOptions{}, table);
  char buffer[16] = "loader";
  ThreadRoot* first = sel.root(std::string_view(buffer, 6), 1, 1);
  std::memcpy(buffer, "python", 6);
  ThreadRoot* second = sel.root(std::string_view(buffer, 6), 1, 1);
  EXPECT_NE(first, second);
  EXPECT_EQ(first->name, "loader");
  EXPECT_EQ(second->name, "python");
  std::string copy = "loader";
  EXPECT_EQ(sel.root(copy, 1, 1), first);
}

TEST(SampleSelection, UnnamedThreadsAreColonTid) {
  ProcessTable table;
  SampleSelection sel(SampleSelectionOptions{}, table);
  EXPECT_EQ(sel.comm_of(5, 7), ":7");
  EXPECT_EQ(sel.comm_of(5, 7).data(), sel.comm_of(5, 7).data());  // one string per tid
  EXPECT_EQ(sel.root(sel.comm_of(5, 7), 5, 7)->name, ":7");
}

// The idle task has no COMM record in a system-wide recording; perf calls it
// "swapper" (perf_session__register_idle_thread), and so must the fold: it
// is often the largest root of such a recording (44% of one made here).
TEST(SampleSelection, TheIdleTaskIsSwapperUnlessItHasACommRecord) {
  ProcessTable table;
  SampleSelectionOptions o;
  o.root_with_tid = true;
  SampleSelection sel(o, table);
  EXPECT_EQ(sel.comm_of(0, 0), "swapper");
  EXPECT_EQ(sel.root(sel.comm_of(0, 0), 0, 0)->name, "swapper-0/0");
  EXPECT_EQ(sel.comm_of(-1, 0), "swapper");
  table.on_comm(0, 0, "idle_named", false);
  SampleSelection named(o, table);
  EXPECT_EQ(named.comm_of(0, 0), "idle_named");
}

TEST(SampleSelection, TheThreadCacheFollowsTableChanges) {
  ProcessTable table;
  table.on_comm(10, 10, "before", false);
  SampleSelection sel(SampleSelectionOptions{}, table);
  SampleSelection::CachedThread& t = sel.thread(10, 10);
  EXPECT_EQ(t.comm, "before");
  EXPECT_EQ(t.pid, 10);
  ThreadRoot* first = sel.root_of(t);
  EXPECT_EQ(first->name, "before");
  EXPECT_EQ(sel.root_of(sel.thread(10, 10)), first);  // cached
  table.on_comm(10, 10, "after", false);
  sel.table_changed(10, 10);
  SampleSelection::CachedThread& u = sel.thread(10, 10);
  EXPECT_EQ(u.comm, "after");
  EXPECT_EQ(sel.root_of(u)->name, "after");
  // A sample without a pid (-1) finds it by tid.
  table.on_fork(10, 10, 12, 10);
  sel.table_changed(10, 12);
  EXPECT_EQ(sel.thread(-1, 12).pid, 10);
  EXPECT_EQ(sel.thread(-1, 12).proc, table.process(10));
}

// A change is only seen by the threads of its pid and tid: the others keep
// their cached entry (root_of's answer stays filled in it).
TEST(SampleSelection, ATableChangeStalesOnlyItsPidAndTid) {
  ProcessTable table;
  table.on_comm(10, 10, "ten", false);
  table.on_comm(10, 11, "ten_b", false);
  table.on_comm(20, 20, "twenty", false);
  SampleSelection sel(SampleSelectionOptions{}, table);
  for (auto [pid, tid] : {std::pair{10, 10}, {10, 11}, {20, 20}}) sel.root_of(sel.thread(pid, tid));
  auto cached = [&](int32_t pid, int32_t tid) { return sel.thread(pid, tid).root != nullptr; };

  // Another process's map change: nothing of pid 10 is stale.
  table.add_mmap(20, 0x1000, 0x1000, 0, "/bin/x", true);
  sel.table_changed(20, 20);
  EXPECT_TRUE(cached(10, 10));
  EXPECT_TRUE(cached(10, 11));
  EXPECT_FALSE(cached(20, 20));
  sel.root_of(sel.thread(20, 20));

  // A thread's new name: that thread, and its process's (the process comm
  // other threads without a COMM of their own fall back to).
  table.on_comm(10, 11, "renamed", false);
  sel.table_changed(10, 11);
  EXPECT_FALSE(cached(10, 11));
  EXPECT_EQ(sel.thread(10, 11).comm, "renamed");
  EXPECT_FALSE(cached(10, 10));
  EXPECT_TRUE(cached(20, 20));

  // A new process reusing pid 20 (a FORK of pid 20 from 10): its cached
  // thread and process are the old ones' no more.
  const ProcessMaps* old_proc = sel.thread(20, 20).proc;
  table.on_exit(20, 20);
  sel.table_changed(20, 20);
  table.on_fork(20, 10, 20, 10);
  sel.table_changed(20, 20);
  SampleSelection::CachedThread& reused = sel.thread(20, 20);
  EXPECT_EQ(reused.proc, table.process(20));
  EXPECT_NE(reused.proc, old_proc);
  EXPECT_EQ(reused.comm, "ten");  // the parent's

  // A sample without a pid finds its process by tid: a FORK that gives the
  // tid to another process changes it, though neither pid is the sample's.
  table.on_fork(10, 10, 12, 10);
  sel.table_changed(10, 12);
  EXPECT_EQ(sel.thread(-1, 12).pid, 10);
  table.on_fork(30, 20, 12, 20);
  sel.table_changed(30, 12);
  EXPECT_EQ(sel.thread(-1, 12).pid, 30);
  EXPECT_EQ(sel.thread(-1, 12).proc, table.process(30));
}

}  // namespace
}  // namespace fg
