// StackSymboliser (lib/fold/stack_symboliser.h): raw stack keys into the
// profile tree with the names perf script gives: symbols from a real ELF
// file (the fold fixture's static binary, under testdata/fold/symfs),
// [perf-PID.map] or [JIT] for anonymous executable memory, [unknown] for
// unmapped addresses (which also end a broken frame-pointer walk),
// [kernel.kallsyms] without kernel symbols, and the _[k]/_[j] annotations.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "fold/sample_selection.h"
#include "fold/stack_symboliser.h"
#include "fold/stack_tree_builder.h"
#include "fold/symbolising_thread.h"
#include "folded_text.h"
#include "test_support.h"

namespace fg {
namespace {

constexpr int32_t kPid = 100;
constexpr uint64_t kJitStart = 0x7f0000000000;
const char* const kBinary = "/tmp/fgtool-fixture/fold_calls_static";

struct SymboliserFixture : ::testing::Test {
  void SetUp() override {
    setenv("DEBUGINFOD_URLS", "", 1);
    dir = test::temp_dir();
    test::write_file(dir + "/kallsyms", "");
    options.symbols.symfs = test::testdata("fold/symfs");
    options.symbols.kallsyms_path = dir + "/kallsyms";
    options.symbols.buildid_dir = dir;
    fill(table);
    test::CommandResult nm = test::run_shell("nm " + test::shell_quote(test::testdata("fold/symfs") + kBinary));
    ASSERT_EQ(nm.status, 0) << nm.err;
    size_t at = nm.out.find(" T main\n");
    ASSERT_NE(at, std::string::npos);
    main_address = std::stoull(nm.out.substr(at - 16, 16), nullptr, 16);
    // The first function that starts where the one before it ends.
    test::CommandResult sized =
        test::run_shell("nm -S -n --defined-only " + test::shell_quote(test::testdata("fold/symfs") + kBinary));
    ASSERT_EQ(sized.status, 0) << sized.err;
    std::istringstream lines(sized.out);
    std::string line;
    uint64_t prev_end = 0;
    while (boundary == 0 && std::getline(lines, line)) {
      std::istringstream f(line);
      std::string addr, size, type, name;
      if (!(f >> addr >> size >> type >> name) || (type != "T" && type != "t")) continue;
      const uint64_t start = std::stoull(addr, nullptr, 16);
      if (start == prev_end && start != 0) boundary = start;
      prev_end = start + std::stoull(size, nullptr, 16);
    }
  }
  // A MapEntry remembers its object in one SymbolCache (object_slot): each
  // symboliser gets a table of its own, as each fold does.
  static void fill(ProcessTable& t) {
    // The text segment as the loader maps it (readelf -l: offset 0x1000 at 0x401000).
    t.add_mmap(kPid, 0x401000, 0x9f000, 0x1000, kBinary, true);
    t.add_mmap(kPid, kJitStart, 0x10000, 0, "//anon", true);
    t.on_comm(kPid, kPid, "prog", false);
  }
  // A key as StackKeyBuilder lays it out, addresses leaf first.
  std::vector<uint64_t> key(const ProcessTable& table, const ThreadRoot* root,
                            const std::vector<StackAddress>& addresses, int32_t pid = kPid) {
    const size_t n = addresses.size();
    std::vector<uint64_t> k(StackKeyBuilder::kHeaderWords + n + (n + 31) / 32);
    k[0] = n | (dwarf_keys ? StackKeyBuilder::kDwarfUser : 0);
    k[1] = reinterpret_cast<uintptr_t>(root);
    k[2] = table.process(pid)->generation;
    k[3] = table.kernel().generation;
    for (size_t i = 0; i < n; ++i) {
      k[StackKeyBuilder::kHeaderWords + i] = addresses[i].address;
      k[StackKeyBuilder::kHeaderWords + n + i / 32] |=
          uint64_t((addresses[i].return_address ? 1 : 0) | (addresses[i].kernel ? 2 : 0)) << (2 * (i % 32));
    }
    return k;
  }
  // Folds the stacks (weight 1 each) and returns the folded text; with
  // `threaded`, through a SymbolisingThread. `before_stack(i, table)` may
  // change the process table before stack i's key is made.
  std::string fold(const std::vector<std::vector<StackAddress>>& stacks, bool threaded = false,
                   const std::function<void(size_t, ProcessTable&)>& before_stack = {}) {
    ProcessTable fresh;
    fill(fresh);
    StackSymboliser sym(options, info);
    StackTreeBuilder tree;
    ThreadRoot root;
    root.name = "prog";
    std::vector<std::vector<uint64_t>> keys;
    keys.reserve(stacks.size());  // keys must not move while the thread may read them
    std::unique_ptr<SymbolisingThread> thread;
    if (threaded) thread = std::make_unique<SymbolisingThread>(sym, tree, options.observer);
    NamedStacks records;
    for (size_t i = 0; i < stacks.size(); ++i) {
      if (before_stack) before_stack(i, fresh);
      keys.push_back(key(fresh, &root, stacks[i]));
      if (thread) {
        thread->add(uint32_t(i), keys.back().data(), kPid, fresh.process(kPid));
      } else {
        sym.symbolise(uint32_t(i), keys.back().data(), kPid, fresh.process(kPid), records);
        tree.place(records, options.observer);
        records.clear();
      }
    }
    if (thread) {
      thread->drain();
      stacks_placed_by_symbolising_thread = thread->stacks_placed_by_symbolising_thread();
      stacks_placed = thread->stacks_placed();
      thread->stop();
    }
    for (size_t i = 0; i < stacks.size(); ++i) tree.profile().add_self(tree.node_of(uint32_t(i)), 1);
    tree.profile().take_names(sym.names());
    stats = sym.stats();
    return test::folded_text(tree.profile());
  }

  // The binary as a browser ships, stripped (no symbol at all: a static
  // binary has no .dynsym), found through a symfs of its own.
  void use_stripped_binary() {
    const std::string symfs = dir + "/stripped";
    const std::string copy = symfs + kBinary;
    ASSERT_EQ(test::run_shell("mkdir -p " + test::shell_quote(copy.substr(0, copy.rfind('/'))) +
                              " && strip --strip-all -o " + test::shell_quote(copy) + " " +
                              test::shell_quote(test::testdata("fold/symfs") + kBinary))
                  .status,
              0);
    options.symbols.symfs = symfs;
  }

  std::string dir;
  FoldOptions options;
  PerfFileInfo info;
  ProcessTable table;
  uint64_t main_address = 0;
  uint64_t boundary = 0;    // a function's first byte, right after another's last
  bool dwarf_keys = false;  // keys as a DWARF sample's (user frames unwound)
  SymboliserStats stats;
  uint64_t stacks_placed = 0, stacks_placed_by_symbolising_thread = 0;  // of the last threaded fold
};

TEST_F(SymboliserFixture, NamesFunctionsFromTheElfFile) {
  EXPECT_EQ(fold({{{main_address + 4, false, false}}}), "prog;main 1\n");
  // A return address is named by address - 1: main's first byte + 1 is still main.
  EXPECT_EQ(fold({{{main_address + 1, false, true}}}), "prog;main 1\n");
}

// A frame-pointer caller is named as perf script names it, by its return
// address; a DWARF-unwound one (and with call_sites, every one) by its call
// instruction, return address - 1. They differ where the return address is
// the first byte of a function that directly follows another.
TEST_F(SymboliserFixture, CallersAreNamedByReturnAddressAsPerfDoesUnlessDwarfOrCallSites) {
  ASSERT_NE(boundary, 0u) << "no two adjacent functions in the fixture";
  auto leaf_name = [&](uint64_t address) {
    std::string text = fold({{{address, false, false}}});
    return text.substr(5, text.rfind(' ') - 5);  // "prog;NAME 1\n"
  };
  const std::string at = leaf_name(boundary), before = leaf_name(boundary - 1);
  ASSERT_NE(at, before);
  const std::vector<std::vector<StackAddress>> stack = {{{main_address + 4, false, false}, {boundary, false, true}}};
  EXPECT_EQ(fold(stack), "prog;" + at + ";main 1\n");
  dwarf_keys = true;
  EXPECT_EQ(fold(stack), "prog;" + before + ";main 1\n");
  dwarf_keys = false;
  options.call_sites = true;
  EXPECT_EQ(fold(stack), "prog;" + before + ";main 1\n");
}

TEST_F(SymboliserFixture, AnonymousExecutableMemoryIsPerfPidMapOrJit) {
  std::vector<std::vector<StackAddress>> stacks = {{{kJitStart + 0x10, false, false}, {main_address + 4, false, true}}};
  EXPECT_EQ(fold(stacks), "prog;main;[perf-100.map] 1\n");
  options.merge_jit = true;
  EXPECT_EQ(fold(stacks), "prog;main;[JIT] 1\n");
  options.annotate_jit = true;
  EXPECT_EQ(fold(stacks), "prog;main;[JIT]_[j] 1\n");
}

TEST_F(SymboliserFixture, JitFramesOfPidsLinuxNeverGivesKeepTheirOwnNames) {
  // A JIT frame's cache key has 28 bits for its process: pids from 2^27 up
  // (and negative ones, from a hostile file) are numbered apart, so that
  // 0x08000005 and 0x18000005, equal in those bits, keep their own names.
  const int32_t pids[] = {kPid, 0x07ffffff, 0x08000005, 0x18000005, 0x7fffffff, -5, 0x08000005};
  ProcessTable t;
  for (int32_t pid : pids) {
    t.add_mmap(pid, kJitStart, 0x10000, 0, "//anon", true);
    t.on_comm(pid, pid, "prog", false);
  }
  StackSymboliser sym(options, info);
  StackTreeBuilder tree;
  ThreadRoot root;
  root.name = "prog";
  NamedStacks records;
  std::map<std::string, int> expected;
  for (size_t i = 0; i < std::size(pids); ++i) {
    std::vector<uint64_t> k = key(t, &root, {{kJitStart + 0x10, false, false}}, pids[i]);
    sym.symbolise(uint32_t(i), k.data(), pids[i], t.process(pids[i]), records);
    tree.place(records, nullptr);
    records.clear();
    tree.profile().add_self(tree.node_of(uint32_t(i)), 1);
    ++expected["prog;[perf-" + std::to_string(pids[i]) + ".map]"];
  }
  tree.profile().take_names(sym.names());
  std::string want;
  for (const auto& [stack, n] : expected) want += stack + " " + std::to_string(n) + "\n";
  EXPECT_EQ(test::folded_text(tree.profile()), want);
  EXPECT_EQ(sym.stats().named_addresses, std::size(pids) - 1);  // the repeated pid hit the cache
}

TEST_F(SymboliserFixture, AnUnmappedCallerEndsTheWalkWithOneUnknown) {
  // Leaf main, then an unmapped caller, then garbage that happens to be main.
  EXPECT_EQ(fold({{{main_address + 4, false, false}, {0x1000, false, true}, {main_address + 8, false, true}}}),
            "prog;[unknown];main 1\n");
  // The leaf-most user address may be unmapped (JIT code without a map): its callers count.
  EXPECT_EQ(fold({{{0x1000, false, false}, {main_address + 8, false, true}}}), "prog;main;[unknown] 1\n");
  // A DWARF stack cut short ends in the marker, which is [unknown] too.
  EXPECT_EQ(fold({{{main_address + 4, false, false}, {kCutShortMarker, false, false}}}), "prog;[unknown];main 1\n");
}

TEST_F(SymboliserFixture, WithAddrsEachUnmappedAddressIsNamedByItself) {
  // All unmapped addresses are one "[unknown]" frame; --addrs names each by
  // its own address, so they must not share one cached name (they did: the
  // first address seen named them all).
  options.addrs = true;
  EXPECT_EQ(fold({{{0x1000, false, false}, {main_address + 8, false, true}},
                  {{0x2000, false, false}, {main_address + 8, false, true}},
                  {{main_address + 4, false, false}, {0x3000, false, true}, {main_address + 8, false, true}}}),
            "prog;[unknown <3000>];main 1\nprog;main;[unknown <1000>] 1\nprog;main;[unknown <2000>] 1\n");
  EXPECT_EQ(stats.unknown_frames, 3u);
}

// Where an object has no symbol (a stripped binary's code) or a process's
// JIT code has no perf-PID.map, every address gets the same name: one
// frame-cache entry, looked up once, names them all. --addrs (each named by
// its offset) and a perf map that names some JIT code keep them apart.
TEST_F(SymboliserFixture, AddressesWithoutSymbolsAreNamedByOneLookup) {
  ASSERT_NO_FATAL_FAILURE(use_stripped_binary());
  options.symbols.jit_map_dir = dir;  // no perf-100.map there yet
  std::vector<std::vector<StackAddress>> stacks;
  for (uint64_t i = 0; i < 40; ++i)
    stacks.push_back({{main_address + 64 * i, false, false}, {kJitStart + 0x10 * i + 1, false, true}});
  EXPECT_EQ(fold(stacks), "prog;[perf-100.map];[fold_calls_static] 40\n");
  EXPECT_EQ(stats.named_addresses, 2u);  // one per object, one per JIT process
  EXPECT_EQ(stats.alike_frames, 80u);
  EXPECT_EQ(stats.unknown_frames, 2u);

  options.addrs = true;
  const std::string apart = fold(stacks);
  EXPECT_EQ(std::count(apart.begin(), apart.end(), '\n'), 40) << apart;
  EXPECT_NE(apart.find("prog;[perf-100.map];[fold_calls_static+0x"), std::string::npos) << apart;
  EXPECT_EQ(stats.named_addresses, 80u);
  EXPECT_EQ(stats.alike_frames, 0u);
  options.addrs = false;

  // A map naming the first 0x100 bytes of the JIT code: those addresses
  // get its name, the rest stay [perf-100.map].
  test::write_file(dir + "/perf-100.map", "7f0000000000 100 jitted_fn\n");
  const std::string named = fold(stacks);
  EXPECT_NE(named.find("prog;jitted_fn;[fold_calls_static] 16\n"), std::string::npos) << named;
  EXPECT_NE(named.find("prog;[perf-100.map];[fold_calls_static] 24\n"), std::string::npos) << named;
  EXPECT_EQ(stats.named_addresses, 41u);
}

// Past the callers a stack shares by address with its memo, callers named
// alike (no symbol there) take the memo's names and nodes too; a caller
// named otherwise ends that, and the names are those of every frame named.
TEST_F(SymboliserFixture, CallersNamedAlikeComeFromTheMemo) {
  ASSERT_NO_FATAL_FAILURE(use_stripped_binary());
  options.symbols.jit_map_dir = dir;
  test::write_file(dir + "/perf-100.map", "7f0000000000 100 jitted_fn\n");
  auto text = [&](uint64_t i) { return StackAddress{main_address + 0x100 * i, false, i > 0}; };
  const StackAddress root = text(9);
  const StackAddress named_jit{kJitStart + 0x20, false, true}, unnamed_jit{kJitStart + 0x200, false, true};
  // b differs from a in every address but the root, all in the stripped text.
  const std::vector<StackAddress> a = {text(1), text(2), text(3), root}, b = {text(4), text(5), text(6), root};
  EXPECT_EQ(fold({a, b}), "prog;[fold_calls_static];[fold_calls_static];[fold_calls_static];[fold_calls_static] 2\n");
  EXPECT_EQ(stats.memo_frames, 4u);  // all of b's
  EXPECT_EQ(stats.frames, 8u);
  // A caller named by the JIT map, or unnamed JIT code, between alike ones.
  const std::vector<StackAddress> c = {text(7), named_jit, text(8), root}, d = {text(1), unnamed_jit, text(2), root};
  const std::string s = "[fold_calls_static]";
  const std::string want = "prog;" + s + ";" + s + ";" + s + ";" + s + " 1\n" + "prog;" + s + ";" + s +
                           ";[perf-100.map];" + s + " 1\n" + "prog;" + s + ";" + s + ";jitted_fn;" + s + " 1\n";
  EXPECT_EQ(fold({a, c, d}), want);
  EXPECT_EQ(fold({a, c, d}, true), want);
  EXPECT_EQ(fold({c, d, a, b}), "prog;" + s + ";" + s + ";" + s + ";" + s + " 2\n" + "prog;" + s + ";" + s +
                                    ";[perf-100.map];" + s + " 1\n" + "prog;" + s + ";" + s + ";jitted_fn;" + s + " 1\n");
}

// A JIT caller named at its call site (return address - 1: DWARF stacks,
// --call-sites) and the same address as a leaf are two names where a perf
// map's function ends there: the first one named must not stand for both.
TEST_F(SymboliserFixture, AJitAddressAsLeafAndAsCallSiteKeepsBothNames) {
  options.symbols.jit_map_dir = dir;
  test::write_file(dir + "/perf-100.map", "7f0000000000 10 jit_first\n7f0000000010 10 jit_second\n");
  options.call_sites = true;
  const StackAddress boundary_leaf{kJitStart + 0x10, false, false};
  const StackAddress boundary_caller{kJitStart + 0x10, false, true};
  const StackAddress leaf{main_address + 4, false, false};
  for (bool leaf_first : {true, false}) {
    SCOPED_TRACE(leaf_first);
    std::vector<std::vector<StackAddress>> stacks = {{boundary_leaf}, {leaf, boundary_caller}};
    if (!leaf_first) std::swap(stacks[0], stacks[1]);
    EXPECT_EQ(fold(stacks), "prog;jit_first;main 1\nprog;jit_second 1\n");
  }
}

TEST_F(SymboliserFixture, KernelFramesWithoutSymbolsAndAnnotations) {
  std::vector<std::vector<StackAddress>> stacks = {{{0xffffffff81000010, true, false}, {main_address + 4, false, false}}};
  EXPECT_EQ(fold(stacks), "prog;main;[kernel.kallsyms] 1\n");
  options.annotate_kernel = true;
  EXPECT_EQ(fold(stacks), "prog;main;[kernel.kallsyms]_[k] 1\n");
  options.addrs = true;
  EXPECT_EQ(fold(stacks), "prog;main;[unknown <ffffffff81000010>]_[k] 1\n");
  EXPECT_EQ(stats.kernel_frames, 1u);
  EXPECT_EQ(stats.unknown_frames, 1u);
}

TEST_F(SymboliserFixture, EqualStacksShareANodeAndFramesAreCached) {
  std::vector<StackAddress> a = {{main_address + 4, false, false}, {kJitStart, false, true}};
  std::vector<StackAddress> b = {{main_address + 5, false, false}, {kJitStart, false, true}};  // also main
  EXPECT_EQ(fold({a, a, b}), "prog;[perf-100.map];main 3\n");
  EXPECT_EQ(stats.frames, 6u);
  // Every distinct address was named once; the repeat of `a` hit the cache.
  EXPECT_EQ(stats.unknown_frames, 1u);
}

TEST_F(SymboliserFixture, ASymbolisingThreadBuildsTheSameProfile) {
  // Enough stacks for several batches (SymbolisingThread::kBatch).
  std::vector<std::vector<StackAddress>> stacks;
  for (uint64_t i = 0; i < 1000; ++i)
    stacks.push_back({{kJitStart + (i % 37), false, false},
                      {main_address + 1 + (i % 5), false, true},
                      {0xffffffff81000000 + (i % 3), true, true}});
  std::string inline_text = fold(stacks);
  EXPECT_EQ(fold(stacks, true), inline_text);
  EXPECT_NE(inline_text.find("prog;[kernel.kallsyms];main;[perf-100.map] "), std::string::npos) << inline_text;
}

// The tree walk goes to whichever thread has time: a symbolising thread
// with nothing waiting places what it named; otherwise the folding thread
// does. Either way, and mixed, the batches go in in order (each memo slot's
// nodes follow the order the symboliser filled them in).
TEST_F(SymboliserFixture, EitherThreadPlacesAndTheProfileIsTheSame) {
  // Depths vary, so a memo slot's node taken out of order would end a path
  // at the wrong depth and show in the text.
  std::vector<std::vector<StackAddress>> stacks;
  for (uint64_t i = 0; i < 3000; ++i) {
    std::vector<StackAddress> s = {{kJitStart + (i % 101), false, false}};
    for (uint64_t d = 0; d < 1 + (i * 7919) % 6; ++d) s.push_back({main_address + 1 + (i + d) % 5, false, true});
    s.push_back({main_address + 9 + (i % 3), false, true});
    stacks.push_back(s);
  }
  const std::string inline_text = fold(stacks);
  // A folding thread that pauses after every batch leaves the symbolising
  // thread idle, so it places.
  auto pause = [](size_t i, ProcessTable&) {
    if (i % SymbolisingThread::kBatch == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  };
  EXPECT_EQ(fold(stacks, true, pause), inline_text);
  EXPECT_EQ(stacks_placed, stacks.size());
  EXPECT_GT(stacks_placed_by_symbolising_thread, 0u);
  // Pauses only now and then: some batches each way.
  auto now_and_then = [](size_t i, ProcessTable&) {
    if (i % (5 * SymbolisingThread::kBatch) == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  };
  EXPECT_EQ(fold(stacks, true, now_and_then), inline_text);
  EXPECT_EQ(fold(stacks, true), inline_text);
}

// An observer that refuses a stack (as the pprof collector does past its
// limits) ends the fold with its error, inline or with the stacks placed
// by either thread; nothing is placed or told after it.
TEST_F(SymboliserFixture, AnObserversErrorEndsTheFoldAndNothingIsToldAfterIt) {
  struct Refusing : FoldObserver {
    uint32_t told = 0, last = 0;
    void on_raw_stack(uint32_t index, const RawStackRoot&, const RawStackFrame*, size_t, const RawStackMemo&) override {
      EXPECT_EQ(index, told) << "out of order";
      last = index;
      if (++told == 700) throw std::length_error("refused stack 699");
    }
    void on_samples(uint32_t, uint64_t, double, NodeId) override {}
    void on_off_cpu(uint32_t, uint64_t, uint64_t, FrameId, NodeId) override {}
  };
  std::vector<std::vector<StackAddress>> stacks;
  for (uint64_t i = 0; i < 3000; ++i)
    stacks.push_back({{kJitStart + i, false, false}, {main_address + 1 + (i % 7), false, true}});
  for (bool threaded : {false, true}) {
    Refusing refusing;
    options.observer = &refusing;
    try {
      fold(stacks, threaded);
      ADD_FAILURE() << "no error, threaded " << threaded;
    } catch (const std::length_error& e) {
      EXPECT_STREQ(e.what(), "refused stack 699");
    }
    EXPECT_EQ(refusing.told, 700u) << "threaded " << threaded;
    EXPECT_EQ(refusing.last, 699u);
    options.observer = nullptr;
  }
}

// Callers shared with an earlier stack of the root come from its memo: the
// result must be what naming every frame gives.
TEST_F(SymboliserFixture, SharedCallersFromTheMemoFoldAsEveryFrameNamed) {
  const StackAddress leaf{main_address + 4, false, false};
  const StackAddress caller{main_address + 8, false, true};
  const StackAddress outer{main_address + 12, false, true};
  const StackAddress unmapped{0x1000, false, true};
  // b shares a's two outer callers; its unmapped caller right below them
  // cuts the walk there, dropping the shared part too.
  std::vector<StackAddress> a = {leaf, caller, outer};
  std::vector<StackAddress> b = {leaf, unmapped, caller, outer};
  EXPECT_EQ(fold({a, b}), "prog;[unknown];main 1\nprog;main;main;main 1\n");
  EXPECT_EQ(stats.frames, 5u);
  EXPECT_EQ(fold({b}), "prog;[unknown];main 1\n");
  // Kernel frames on top of shared user callers, and a stack that is all
  // memo; the frame counts are those of every frame named.
  const StackAddress kernel{0xffffffff81000010, true, false};
  std::vector<StackAddress> c = {kernel, leaf, caller, outer};
  std::vector<StackAddress> d = {caller, outer};
  EXPECT_EQ(fold({a, c, d, c}), "prog;main;main 1\nprog;main;main;main 1\nprog;main;main;main;[kernel.kallsyms] 2\n");
  EXPECT_EQ(stats.frames, 13u);
  EXPECT_EQ(stats.kernel_frames, 2u);
}

// The memo belongs to one map generation: after the maps change, the same
// addresses are named by the new maps.
TEST_F(SymboliserFixture, TheMemoIsForgottenWhenTheMapsChange) {
  const std::vector<StackAddress> stack = {{main_address + 4, false, false}, {kJitStart + 0x10, false, true}};
  uint64_t generations[2] = {0, 0};
  const std::string text = fold({stack, stack}, false, [&](size_t i, ProcessTable& t) {
    // The JIT region becomes the binary's text (file offset 0x1000).
    if (i == 1) t.add_mmap(kPid, kJitStart, 0x9f000, 0x1000, kBinary, true);
    generations[i] = t.process(kPid)->generation;
  });
  ASSERT_NE(generations[0], generations[1]);
  EXPECT_NE(text.find("prog;[perf-100.map];main 1\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("[perf-100.map]", text.find('\n')), std::string::npos) << text;
}

// The folding thread changes the process table while the symbolising thread
// still has stacks of that process queued: each queued stack is named by
// the maps it was made with (a snapshot), as folding inline would.
TEST_F(SymboliserFixture, QueuedStacksKeepTheMapsTheyWereMadeWith) {
  std::vector<std::vector<StackAddress>> stacks;
  for (uint64_t i = 0; i < 2000; ++i)
    stacks.push_back({{kJitStart + 0x10 + (i % 7), false, false}, {main_address + 4, false, true}});
  auto flip = [&](size_t i, ProcessTable& t) {
    if (i % 50 == 0)  // the JIT region flips between anonymous memory and the binary's text
      t.add_mmap(kPid, kJitStart, 0x10000, 0x1000, (i / 50) % 2 ? kBinary : "//anon", true);
  };
  const std::string inline_text = fold(stacks, false, flip);
  EXPECT_NE(inline_text.find("prog;main;[perf-100.map] 1000\n"), std::string::npos) << inline_text;
  EXPECT_EQ(fold(stacks, true, flip), inline_text);
}

TEST_F(SymboliserFixture, ElfPathForMapsFindsTheSymfsCopy) {
  StackSymboliser sym(options, info);
  const MapEntry* text = table.process(kPid)->find(main_address);
  ASSERT_NE(text, nullptr);
  EXPECT_EQ(sym.elf_path_for(*text), test::testdata("fold/symfs") + kBinary);
  EXPECT_EQ(sym.elf_path_for(*table.process(kPid)->find(kJitStart)), "");
}

}  // namespace
}  // namespace fg
