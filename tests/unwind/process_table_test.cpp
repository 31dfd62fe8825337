// ProcessTable: the map lifecycle rules of perfdata-notes §2.3/§8 bug 12
// (overlap splitting, fork copy vs thread share, pid reuse, kernel maps,
// comm per thread), except exec: the old maps stay until the new image's
// overlap them, as perf keeps them (the notes say reset).
#include "unwind/process_table.h"

#include <gtest/gtest.h>

#include <memory>
#include <sys/mman.h>

#include <random>
#include <stdexcept>

#include "perf/perf_records.h"

namespace {

using fg::MapEntry;
using fg::ProcessTable;

std::string describe(const fg::ProcessMaps& p) {
  std::string s;
  char buf[128];
  for (const MapEntry* m : p.maps) {
    snprintf(buf, sizeof buf, "[%llx,%llx)@%llx:%.*s ", (unsigned long long)m->start,
             (unsigned long long)m->end, (unsigned long long)m->pgoff, (int)m->path.size(),
             m->path.data());
    s += buf;
  }
  return s;
}

TEST(ProcessTable, NewMappingCutsOldOnesAndKeepsFileOffsets) {
  ProcessTable t;
  t.add_mmap(10, 0x1000, 0x4000, 0x0, "/lib/a.so", true, PROT_READ | PROT_EXEC);
  uint64_t g1 = t.process(10)->generation;
  t.add_mmap(10, 0x2000, 0x1000, 0x7000, "/lib/b.so", true, PROT_READ | PROT_EXEC);
  EXPECT_NE(t.process(10)->generation, g1);
  EXPECT_EQ(describe(*t.process(10)),
            "[1000,2000)@0:/lib/a.so [2000,3000)@7000:/lib/b.so [3000,5000)@2000:/lib/a.so ");
  // One mapping over several: the first keeps its head, the last its tail.
  t.add_mmap(10, 0x1800, 0x2000, 0x0, "//anon", false, PROT_READ | PROT_WRITE);
  EXPECT_EQ(describe(*t.process(10)),
            "[1000,1800)@0:/lib/a.so [1800,3800)@0://anon [3800,5000)@2800:/lib/a.so ");
  // Exact replacement and adjacent maps (no split).
  t.add_mmap(10, 0x1800, 0x2000, 0x100, "/lib/c.so", true);
  t.add_mmap(10, 0x5000, 0x1000, 0x0, "/lib/d.so", true);
  EXPECT_EQ(describe(*t.process(10)),
            "[1000,1800)@0:/lib/a.so [1800,3800)@100:/lib/c.so [3800,5000)@2800:/lib/a.so "
            "[5000,6000)@0:/lib/d.so ");
  EXPECT_EQ(t.find(10, 0x17ff)->path, "/lib/a.so");
  EXPECT_EQ(t.find(10, 0x1800)->path, "/lib/c.so");
  EXPECT_EQ(t.find(10, 0x5fff)->path, "/lib/d.so");
  EXPECT_EQ(t.find(10, 0x6000), nullptr);
  EXPECT_EQ(t.find(10, 0xfff), nullptr);
  EXPECT_EQ(t.find(11, 0x1800), nullptr);
  EXPECT_EQ(t.find(10, 0x3900)->file_offset(0x3900), 0x2900u);
  // A map covering everything replaces all.
  t.add_mmap(10, 0x0, 0x10000, 0x0, "/bin/big", true);
  EXPECT_EQ(describe(*t.process(10)), "[0,10000)@0:/bin/big ");
  EXPECT_GE(t.stats().splits, 4u);
}

TEST(ProcessTable, SplitFragmentsAreNewEntriesAndKeepTheObjectSlot) {
  ProcessTable t;
  const MapEntry* a = t.add_mmap(1, 0x1000, 0x3000, 0, "/lib/a.so", true);
  a->object_slot.set(42);
  t.add_mmap(1, 0x2000, 0x1000, 0, "/lib/b.so", true);
  const MapEntry* head = t.find(1, 0x1000);
  const MapEntry* tail = t.find(1, 0x3000);
  EXPECT_NE(head, a);
  EXPECT_NE(tail, a);
  EXPECT_FALSE(t.process(1)->has(a));
  EXPECT_TRUE(t.process(1)->has(head));
  EXPECT_EQ(head->object_slot.get(), 42u);
  EXPECT_EQ(tail->object_slot.get(), 42u);
  EXPECT_EQ(t.find(1, 0x2000)->object_slot.get(), MapEntry::kNoObject);
  EXPECT_NE(head->id, tail->id);
}

// A snapshot (what the symbolising thread reads) keeps the maps it was taken
// with while the table changes; the table copies a list once it was
// snapshotted, even after the snapshot is gone.
TEST(ProcessTable, ASnapshotKeepsTheMapsItWasTakenWith) {
  ProcessTable t;
  const MapEntry* a = t.add_mmap(1, 0x1000, 0x3000, 0, "/lib/a.so", true);
  auto snapshot = std::make_unique<fg::MapsSnapshot>(t.process(1)->maps);
  // holds(): the list is still the one snapshotted (the symbolising thread's
  // batches share one snapshot per list on this), until the table changes it.
  EXPECT_TRUE(snapshot->holds(t.process(1)->maps));
  EXPECT_FALSE(fg::MapsSnapshot().holds(t.process(1)->maps));
  const MapEntry* const* before = t.process(1)->maps.begin();
  const MapEntry* b = t.add_mmap(1, 0x2000, 0x1000, 0, "/lib/b.so", true);
  EXPECT_NE(t.process(1)->maps.begin(), before);  // copied, not changed in place
  EXPECT_FALSE(snapshot->holds(t.process(1)->maps));
  fg::MapsView old_view = snapshot->view();
  EXPECT_EQ(old_view.find(0x2000), a);
  EXPECT_EQ(old_view.find(0x3fff), a);
  EXPECT_EQ(old_view.find(0x4000), nullptr);
  EXPECT_EQ(t.find(1, 0x2000), b);
  fg::MapsView now = t.process(1)->view();
  EXPECT_EQ(now.find(0x2000), b);
  EXPECT_EQ(fg::MapsView().find(0x2000), nullptr);
  snapshot.reset();
  EXPECT_EQ(t.find(1, 0x2000), b);
}

TEST(ProcessTable, ForkCopiesMapsButThreadsShareThem) {
  ProcessTable t;
  t.on_comm(100, 100, "parent", false);
  t.add_mmap(100, 0x1000, 0x1000, 0, "/bin/prog", true);
  // A thread: same process, inherits the name until its own COMM.
  t.on_fork(100, 100, 101, 100);
  EXPECT_EQ(t.pid_of(101), 100);
  EXPECT_EQ(t.comm_of(101), "parent");
  t.on_comm(100, 101, "worker", false);
  EXPECT_EQ(t.comm_of(101), "worker");
  EXPECT_EQ(t.comm_of(100), "parent");
  EXPECT_EQ(t.process(100)->comm, "parent");
  // MMAPs from the thread land in the shared process.
  t.add_mmap(100, 0x8000, 0x1000, 0, "/lib/dl.so", true);
  EXPECT_NE(t.find(100, 0x8000), nullptr);

  // A new process: a copy.
  t.on_fork(200, 100, 200, 100);
  EXPECT_EQ(t.comm_of(200), "parent");
  EXPECT_EQ(t.find(200, 0x1000), t.find(100, 0x1000));  // same entry, shared
  t.add_mmap(200, 0x1000, 0x1000, 0, "/lib/other.so", true);
  EXPECT_EQ(t.find(200, 0x1000)->path, "/lib/other.so");
  EXPECT_EQ(t.find(100, 0x1000)->path, "/bin/prog");  // the parent is untouched
  t.add_mmap(100, 0x20000, 0x1000, 0, "/lib/late.so", true);
  EXPECT_EQ(t.find(200, 0x20000), nullptr);
  EXPECT_NE(t.process(200)->incarnation, t.process(100)->incarnation);
  // Unknown parent: an empty process.
  t.on_fork(300, 299, 300, 299);
  ASSERT_NE(t.process(300), nullptr);
  EXPECT_TRUE(t.process(300)->maps.empty());
}

// FORK shares the parent's map list (copy on write): a child costs no map
// memory until it or its parent changes; each side then sees only its own
// changes, and copies count against the map budget.
TEST(ProcessTable, ForkSharesMapsUntilOneSideChanges) {
  ProcessTable t;
  for (uint64_t i = 0; i < 1000; ++i) t.add_mmap(1, 0x100000 + 0x2000 * i, 0x1000, 0, "/lib/x.so", true);
  const uint64_t parent_bytes = t.map_list_bytes();
  for (int32_t pid = 1000; pid < 3000; ++pid) t.on_fork(pid, 1, pid, 1);
  EXPECT_EQ(t.map_list_bytes(), parent_bytes);  // 2000 children, no copies
  EXPECT_EQ(t.process(1500)->maps.size(), 1000u);
  EXPECT_EQ(t.process(1500)->maps.begin(), t.process(1)->maps.begin());  // the same array
  // The child's change copies; the parent and the other children keep theirs.
  t.add_mmap(1500, 0x7f0000000000, 0x1000, 0, "/lib/y.so", true);
  EXPECT_GT(t.map_list_bytes(), parent_bytes + 1000 * sizeof(void*) - 1);
  EXPECT_EQ(t.process(1500)->maps.size(), 1001u);
  EXPECT_EQ(t.process(1)->maps.size(), 1000u);
  EXPECT_EQ(t.process(1501)->maps.size(), 1000u);
  EXPECT_EQ(t.find(1, 0x7f0000000000), nullptr);
  // The parent's change after the fork is not seen by the children.
  t.add_mmap(1, 0x7e0000000000, 0x1000, 0, "/lib/z.so", true);
  EXPECT_NE(t.find(1, 0x7e0000000000), nullptr);
  EXPECT_EQ(t.find(1501, 0x7e0000000000), nullptr);
  EXPECT_EQ(t.find(1501, 0x100000)->path, "/lib/x.so");
  // exec in a child keeps its share (the old image's maps stay until the
  // new image's overlap them); its first mapping copies, the parent's list
  // untouched.
  t.on_comm(1502, 1502, "exec", true);
  EXPECT_EQ(t.process(1502)->maps.begin(), t.process(1503)->maps.begin());
  t.add_mmap(1502, 0x100000, 0x1000, 0, "/bin/new", true);
  EXPECT_EQ(t.find(1502, 0x100000)->path, "/bin/new");
  EXPECT_EQ(t.find(1503, 0x100000)->path, "/lib/x.so");
  EXPECT_EQ(t.process(1503)->maps.size(), 1000u);
  // Over the budget, the change that would copy throws and changes nothing.
  t.set_map_list_budget(t.map_list_bytes() + 100 * sizeof(void*));
  EXPECT_THROW(t.add_mmap(1600, 0x7f0000000000, 0x1000, 0, "/lib/y.so", true), std::length_error);
  EXPECT_EQ(t.process(1600)->maps.size(), 1000u);
  EXPECT_EQ(t.find(1600, 0x7f0000000000), nullptr);
}

// A process's map list is a sorted array: past kMaxMapsPerProcess a mapping
// that would add entries is dropped (counted); one that replaces as many as
// it adds still lands, in place.
TEST(ProcessTable, MapsPerProcessAreCapped) {
  ProcessTable t;
  const size_t cap = ProcessTable::kMaxMapsPerProcess;
  for (uint64_t i = 0; i < cap + 10; ++i) t.add_mmap(1, 0x100000 + 0x2000 * (cap + 10 - i), 0x1000, 0, "/lib/x.so", true);
  EXPECT_EQ(t.process(1)->maps.size(), cap);
  EXPECT_EQ(t.stats().dropped_maps, 10u);
  // Exactly over an existing map: replaces it.
  t.add_mmap(1, 0x100000 + 0x2000 * 20, 0x1000, 0, "/lib/new.so", true);
  EXPECT_EQ(t.find(1, 0x100000 + 0x2000 * 20)->path, "/lib/new.so");
  EXPECT_EQ(t.process(1)->maps.size(), cap);
  EXPECT_EQ(t.stats().dropped_maps, 10u);
  // Inside one (a head and a tail survive): would add two, dropped.
  t.add_mmap(1, 0x100000 + 0x2000 * 30 + 0x400, 0x400, 0, "/lib/mid.so", true);
  EXPECT_EQ(t.stats().dropped_maps, 11u);
  EXPECT_EQ(t.find(1, 0x100000 + 0x2000 * 30 + 0x400)->path, "/lib/x.so");
}

// exec starts a new incarnation, but the old image's maps stay until the
// new image's MMAPs overlap them, as in perf: a sample inside execve, taken
// after the new image's first MMAPs, has its user frame in the old libc's
// execve, and perf script names it from the old map.
TEST(ProcessTable, ExecKeepsTheOldMapsUntilTheNewImageOverlapsThem) {
  ProcessTable t;
  t.on_comm(100, 100, "sh", false);
  t.add_mmap(100, 0x1000, 0x1000, 0, "/bin/sh", true);
  t.add_mmap(100, 0x7f0000000000, 0x10000, 0, "/lib/libc.so.6", true);
  const fg::ProcessMaps* p = t.process(100);
  uint64_t inc = p->incarnation, gen = p->generation;
  t.on_comm(100, 100, "prog", true);
  p = t.process(100);
  EXPECT_NE(p->incarnation, inc);
  EXPECT_NE(p->generation, gen);
  EXPECT_EQ(t.comm_of(100), "prog");
  t.add_mmap(100, 0x1000, 0x1000, 0, "/bin/prog", true);
  EXPECT_EQ(t.find(100, 0x1000)->path, "/bin/prog");
  ASSERT_NE(t.find(100, 0x7f0000000100), nullptr);
  EXPECT_EQ(t.find(100, 0x7f0000000100)->path, "/lib/libc.so.6");
  // The new libc over part of the old: the old one's tail stays.
  t.add_mmap(100, 0x7f0000000000, 0x8000, 0, "/lib/new/libc.so.6", true);
  EXPECT_EQ(t.find(100, 0x7f0000000100)->path, "/lib/new/libc.so.6");
  EXPECT_EQ(t.find(100, 0x7f0000008000)->path, "/lib/libc.so.6");
  EXPECT_EQ(t.stats().execs, 1u);
  // exec of a pid never seen: a fresh process.
  t.on_comm(200, 200, "new", true);
  EXPECT_TRUE(t.process(200)->maps.empty());
}

// Old maps are kept across exec only while a whole new image (up to half
// the cap, Linux's vm.max_map_count) still fits beside them; past that the
// exec drops them, so a chain of execs never leaves the live image's maps
// dropped at the cap.
TEST(ProcessTable, ExecDropsOldMapsThatWouldCrowdOutTheNewImage) {
  ProcessTable t;
  const size_t half = ProcessTable::kMaxMapsPerProcess / 2;
  for (uint64_t i = 0; i < half; ++i) t.add_mmap(300, 0x100000 + 0x2000 * i, 0x1000, 0, "/lib/old.so", true);
  t.on_comm(300, 300, "a", true);
  EXPECT_EQ(t.process(300)->maps.size(), half);  // kept: exactly half
  t.add_mmap(300, 0x10000000000, 0x1000, 0, "/bin/a", true);
  t.on_comm(300, 300, "b", true);
  EXPECT_TRUE(t.process(300)->maps.empty());  // half + 1: dropped
  for (uint64_t i = 0; i < half; ++i) t.add_mmap(300, 0x200000 + 0x2000 * i, 0x1000, 0, "/bin/b", true);
  EXPECT_EQ(t.process(300)->maps.size(), half);
  EXPECT_EQ(t.stats().dropped_maps, 0u);
}

TEST(ProcessTable, PidReuseStartsAFreshProcess) {
  ProcessTable t;
  t.on_comm(1, 1, "init", false);
  t.add_mmap(1, 0x1000, 0x1000, 0, "/sbin/init", true);
  t.on_fork(50, 1, 50, 1);
  t.on_comm(50, 50, "first", true);
  t.add_mmap(50, 0x9000, 0x1000, 0, "/bin/first", true);
  uint64_t inc = t.process(50)->incarnation;
  t.on_exit(50, 50);
  EXPECT_TRUE(t.process(50)->exited);
  EXPECT_NE(t.find(50, 0x9000), nullptr);  // late samples still resolve
  t.on_fork(50, 1, 50, 1);
  EXPECT_FALSE(t.process(50)->exited);
  EXPECT_NE(t.process(50)->incarnation, inc);
  EXPECT_EQ(t.find(50, 0x9000), nullptr);
  EXPECT_EQ(t.find(50, 0x1000)->path, "/sbin/init");
  EXPECT_EQ(t.comm_of(50), "init");
  EXPECT_EQ(t.stats().pid_reuses, 1u);
}

TEST(ProcessTable, KernelMapsAreSeparate) {
  ProcessTable t;
  t.add_mmap(-1, 0xffffffff81000000ull, 0x120bb08, 0xffffffff81000000ull,
             "[kernel.kallsyms]_text", true);
  t.add_mmap(-1, 0xffffffffc0000000ull, 0x5000, 0, "/lib/modules/x/kernel/foo.ko", true);
  ASSERT_NE(t.kernel_map(), nullptr);
  EXPECT_EQ(t.kernel_map()->path, "[kernel.kallsyms]_text");
  EXPECT_TRUE(t.kernel_map()->is_kernel());
  EXPECT_EQ(t.find_kernel(0xffffffff81000100ull), t.kernel_map());
  EXPECT_EQ(t.find_kernel(0xffffffffc0000010ull)->path, "/lib/modules/x/kernel/foo.ko");
  EXPECT_EQ(t.find_kernel(0xffffffffc0005000ull), nullptr);
  EXPECT_EQ(t.process_count(), 0u);  // no user process was created
  EXPECT_EQ(t.find(-1, 0xffffffff81000100ull), t.kernel_map());
}

TEST(ProcessTable, CommFallsBackToTheProcess) {
  ProcessTable t;
  EXPECT_EQ(t.comm_of(5), "");
  t.on_comm(5, 5, "main", false);
  EXPECT_EQ(t.comm_of(5, 6), "main");  // thread 6 never seen: the process's name
  EXPECT_EQ(t.comm_of(6), "");
  t.on_comm(5, 6, "helper", false);
  EXPECT_EQ(t.comm_of(5, 6), "helper");
}

TEST(ProcessTable, RecordStructsAreApplied) {
  ProcessTable t;
  fg::CommRecord c;
  c.pid = c.tid = 7;
  c.comm = "prog";
  t.apply(c);
  fg::MmapRecord m;
  m.pid = m.tid = 7;
  m.start = 0x400000;
  m.len = 0x1000;
  m.pgoff = 0x1000;
  m.filename = "/bin/prog";
  m.is_mmap2 = true;
  m.prot = PROT_READ | PROT_EXEC;
  uint8_t bid[20] = {0xab, 0xcd};
  m.build_id = bid;
  m.build_id_size = 20;
  const MapEntry* e = t.apply(m);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->build_id_size, 20);
  EXPECT_EQ(e->build_id[1], 0xcd);
  EXPECT_EQ(e->pgoff, 0x1000u);
  fg::TaskRecord f;
  f.pid = 8;
  f.ppid = 7;
  f.tid = 8;
  f.ptid = 7;
  t.apply_fork(f);
  EXPECT_EQ(t.find(8, 0x400010), e);
  t.apply_exit(f);
  EXPECT_TRUE(t.process(8)->exited);
  fg::MmapRecord v1;  // MMAP (type 1): executable, no prot in the record
  v1.pid = 7;
  v1.start = 0x500000;
  v1.len = 0x1000;
  v1.filename = "/lib/x.so";
  const MapEntry* x = t.apply(v1);
  EXPECT_TRUE(x->prot & PROT_EXEC);
  EXPECT_TRUE(x->executable);
}

TEST(ProcessTable, FindAgreesWithALinearScan) {
  ProcessTable t;
  std::mt19937_64 rng(1);
  for (int i = 0; i < 3000; ++i) {
    uint64_t start = (rng() % 100000) * 0x100;
    uint64_t len = (1 + rng() % 64) * 0x100;
    t.add_mmap(9, start, len, rng() % 16 * 0x1000, i % 2 ? "/a" : "/b", true);
  }
  const auto& maps = t.process(9)->maps;
  for (size_t i = 1; i < maps.size(); ++i) ASSERT_LE(maps[i - 1]->end, maps[i]->start);
  for (int i = 0; i < 20000; ++i) {
    uint64_t a = rng() % (100100 * 0x100);
    const MapEntry* want = nullptr;
    for (const MapEntry* m : maps)
      if (m->contains(a)) want = m;
    ASSERT_EQ(t.find(9, a), want) << std::hex << a;
  }
}

}  // namespace

namespace {

// The one "real file" rule (is_file_backed_path), case by case, with the
// places where the three older predicates disagreed (symbol cache: tried to
// open "/dev/dri/card0" and "/anon_hugepage" as ELF; fold/unwinder: called
// "/anon_hugepage" a file, hence named its JIT code as an object's).
TEST(FileBackedPath, PerfsAnonymousAndNoDsoNamesAreNotFiles) {
  using fg::is_file_backed_path;
  EXPECT_TRUE(is_file_backed_path("/usr/lib/x86_64-linux-gnu/libc.so.6"));
  EXPECT_TRUE(is_file_backed_path("/tmp/perf-123.map"));
  EXPECT_TRUE(is_file_backed_path("/devices/not-dev"));  // "/dev" only as a directory
  EXPECT_TRUE(is_file_backed_path("/SYS/file"));          // "/SYSV" is the prefix, not "/SYS"
  for (const char* p : {"", "//anon", "/anon_hugepage", "/anon_hugepage (deleted)", "/dev/zero",
                        "/dev/zero (deleted)", "/dev/dri/card0", "/dev/nvidia0", "/SYSV00000000 (deleted)",
                        "/SYSV5f00a1b2", "/memfd:jit-cache (deleted)", "/memfd:x", "[heap]", "[stack]",
                        "[stack:1234]", "[vdso]", "[vsyscall]", "[vvar]", "[anon:dalvik-jit]",
                        "[kernel.kallsyms]_text", "/usr/lib/libfoo.so (deleted)", "relative/lib.so"})
    EXPECT_FALSE(is_file_backed_path(p)) << p;
}

TEST(FileBackedPath, MapEntryAlsoCountsHugetlbMemoryAsAnonymous) {
  ProcessTable t;
  t.add_mmap(7, 0x1000, 0x1000, 0, "/lib/a.so", true, PROT_READ | PROT_EXEC);
  t.add_mmap(7, 0x200000, 0x200000, 0, "/hugepages/jit", true, PROT_READ | PROT_EXEC, MapEntry::kMapHugetlb);
  t.add_mmap(7, 0x800000, 0x1000, 0, "//anon", true, PROT_READ | PROT_EXEC);
  const fg::ProcessMaps* p = t.process(7);
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(p->find(0x1800)->is_file_backed());
  EXPECT_FALSE(p->find(0x200800)->is_file_backed());  // hugetlbfs: anonymous to perf whatever the name
  EXPECT_FALSE(p->find(0x800800)->is_file_backed());
}

}  // namespace
