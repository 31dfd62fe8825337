// Kernel symbols: kallsyms parsing with perf's alias and end rules, KSYMBOL ranges,
// kptr_restrict detection, and a comparison with this machine's /proc/kallsyms.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "diagnostics/input_error.h"
#include "symbols/build_id.h"
#include "symbols/kernel_symbols.h"
#include "symbols/named_ranges.h"
#include "symbols/symbol_cache.h"
#include "test_support.h"

namespace {

const char* kSample =
    "ffffffff81000000 T srso_alias_untrain_ret\n"
    "ffffffff81000000 T _stext\n"
    "ffffffff81000000 T _text\n"
    "ffffffff81000010 T __entry_text_start\n"
    "ffffffff81000040 t local_fn\n"
    "ffffffff81000040 W weak_alias_fn\n"
    "ffffffff81000080 A absolute_sym\n"
    "ffffffff81000100 r some_rodata\n"
    "ffffffff81000200 D some_data\n"
    "ffffffffc0000000 t mod_fn\t[ext4]\n"
    "ffffffffc0000100 T mod_fn2\t[ext4]\n";

TEST(KallsymsTable, AliasesEndsAndModulesLikePerf) {
  auto t = fg::KallsymsTable::parse(kSample, "kallsyms");
  ASSERT_FALSE(t.all_zero());
  // Aliases all unsized: perf's fixup_end gives only the last one listed a size,
  // so it wins choose_best_symbol.
  ASSERT_NE(t.find(0xffffffff81000000), nullptr);
  EXPECT_EQ(t.find(0xffffffff81000005)->name, "_text");
  EXPECT_EQ(t.find(0xffffffff81000010)->name, "__entry_text_start");
  EXPECT_EQ(t.find(0xffffffff8100003f)->name, "__entry_text_start");
  EXPECT_EQ(t.find(0xffffffff81000040)->name, "weak_alias_fn");
  // 'A' and 'r' symbols are dropped (only T/W/D/B kept, as perf), so local_fn's
  // alias spans up to some_data.
  EXPECT_EQ(t.find(0xffffffff810001ff)->name, "weak_alias_fn");
  // Kernel -> module boundary: the last kernel symbol ends a page later, not at the module.
  EXPECT_EQ(t.find(0xffffffff81000200)->name, "some_data");
  EXPECT_EQ(t.find(0xffffffff81001fff)->name, "some_data");
  EXPECT_EQ(t.find(0xffffffff81002000), nullptr);
  const fg::KernelSymbol* m = t.find(0xffffffffc0000010);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->name, "mod_fn");
  EXPECT_EQ(m->module, "ext4");
  EXPECT_EQ(t.find(0xffffffffc0000100)->name, "mod_fn2");
  EXPECT_EQ(t.find(0xffffffff80000000), nullptr);
}

// The table keeps its names after the text is gone and after it moves (a
// tiny text would sit in std::string's inline buffer and move with it).
TEST(KallsymsTable, NamesOutliveTheTextAndMoves) {
  std::string text = "1000 T a\n2000 T b\t[m]\n3000 T c\t[m]\n";
  auto t = fg::KallsymsTable::parse(std::move(text), "k");
  text.assign(64, 'x');
  fg::KallsymsTable moved = std::move(t);
  ASSERT_EQ(moved.size(), 3u);
  EXPECT_EQ(moved.find(0x1000)->name, "a");
  EXPECT_EQ(moved.find(0x2000)->name, "b");
  EXPECT_EQ(moved.find(0x2000)->module, "m");
  EXPECT_EQ(moved.find(0x3000)->module.data(), moved.find(0x2000)->module.data());  // one copy per module
}

TEST(KallsymsTable, DetectsKptrRestrict) {
  auto t = fg::KallsymsTable::parse("0000000000000000 T _text\n0000000000000000 t foo\n", "k");
  EXPECT_TRUE(t.all_zero());
  EXPECT_EQ(t.size(), 0u);
}

TEST(KallsymsTable, MalformedLineNamesFileAndLine) {
  try {
    fg::KallsymsTable::parse("ffffffff81000000 T ok\nnot a kallsyms line\n", "my.kallsyms");
    FAIL() << "expected InputError";
  } catch (const fg::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("my.kallsyms:2"), std::string::npos) << e.what();
  }
}

TEST(NamedRanges, LaterRangesOverrideOverlaps) {
  fg::NamedRanges r;
  r.add(0x1000, 0x100, "a");
  r.add(0x1080, 0x10, "b");   // splits a
  r.add(0x10f0, 0x20, "c");   // cuts a's tail, extends past it
  EXPECT_EQ(r.find(0x1000), "a");
  EXPECT_EQ(r.find(0x107f), "a");
  EXPECT_EQ(r.find(0x1080), "b");
  EXPECT_EQ(r.find(0x1090), "a");
  EXPECT_EQ(r.find(0x10f0), "c");
  EXPECT_EQ(r.find(0x110f), "c");
  EXPECT_EQ(r.find(0x1110), "");
  EXPECT_EQ(r.find(0xfff), "");
  r.add(0x0, 0x2000, "all");
  EXPECT_EQ(r.find(0x1080), "all");
  EXPECT_EQ(r.size(), 1u);
}

TEST(KernelSymbols, CacheUsesKsymbolsFirstAndReportsSource) {
  std::string dir = fg::test::temp_dir();
  fg::test::write_file(dir + "/kallsyms", kSample);
  fg::SymbolOptions o;
  o.kallsyms_path = dir + "/kallsyms";
  o.buildid_dir = dir;
  fg::SymbolCache cache(o);
  std::vector<fg::SymbolizedFrame> out;
  cache.symbolize_kernel(0xffffffff81000011, false, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].name, "__entry_text_start");
  EXPECT_TRUE(out[0].resolved);
  // Return address at the start of a symbol resolves to the previous one (-1 rule).
  out.clear();
  cache.symbolize_kernel(0xffffffff81000010, true, out);
  EXPECT_EQ(out[0].name, "_text");
  cache.add_kernel_symbol(0xffffffff81000010, 0x10, "bpf_prog_abc_handler");
  out.clear();
  cache.symbolize_kernel(0xffffffff81000011, false, out);
  EXPECT_EQ(out[0].name, "bpf_prog_abc_handler");
  out.clear();
  cache.symbolize_kernel(0x1234, false, out);
  EXPECT_EQ(out[0].name, "[kernel.kallsyms]");
  EXPECT_FALSE(out[0].resolved);
  auto st = cache.kernel_status();
  EXPECT_EQ(st.source, dir + "/kallsyms");
  // T, W and D symbols, one per address (of the three at ffffffff81000000 one is kept).
  EXPECT_EQ(st.symbols, fg::KallsymsTable::parse(kSample, "k").size());
  EXPECT_GT(st.symbols, 0u);
  EXPECT_EQ(st.lookups, 4u);
  EXPECT_EQ(st.unresolved, 1u);
  EXPECT_EQ(st.ksymbol_ranges, 1u);
}

TEST(KernelSymbols, BuildIdCacheKallsymsAndKptrRestrictStatus) {
  std::string dir = fg::test::temp_dir();
  std::string bid_hex = "0123456789abcdef0123456789abcdef01234567";
  fg::test::run_shell("mkdir -p '" + dir + "/[kernel.kallsyms]/" + bid_hex + "'");
  fg::test::write_file(dir + "/[kernel.kallsyms]/" + bid_hex + "/kallsyms", kSample);
  fg::test::write_file(dir + "/zero", "0000000000000000 T _text\n");
  fg::SymbolOptions o;
  o.buildid_dir = dir;
  o.kallsyms_path = dir + "/zero";  // restricted: falls through to the cache copy
  o.kernel_build_id = fg::build_id_from_hex(bid_hex);
  fg::SymbolCache cache(o);
  std::vector<fg::SymbolizedFrame> out;
  cache.symbolize_kernel(0xffffffffc0000001, false, out);
  EXPECT_EQ(out.at(0).name, "mod_fn");
  auto st = cache.kernel_status();
  EXPECT_TRUE(st.kptr_restricted);
  EXPECT_NE(st.problem.find("kptr_restrict"), std::string::npos);
  EXPECT_NE(st.source.find(bid_hex), std::string::npos);
}

// When the recording's kernel is the running one, perf record's build-id
// cache copy is read instead of /proc/kallsyms (same symbols, a plain file:
// no 50 ms of the kernel printing it); here the copy holds a symbol that the
// running kernel certainly lacks, so using it is visible. Also when loaded
// on another thread first.
TEST(KernelSymbols, BuildIdCacheCopyBeatsProcKallsymsForTheRunningKernel) {
  for (bool preload : {false, true}) {
    std::string dir = fg::test::temp_dir();
    std::string bid_hex = "89abcdef0123456789abcdef0123456789abcdef";
    fg::test::run_shell("mkdir -p '" + dir + "/[kernel.kallsyms]/" + bid_hex + "'");
    fg::test::write_file(dir + "/[kernel.kallsyms]/" + bid_hex + "/kallsyms",
                         "ffffffff81000000 T fgtool_cache_only_symbol\nffffffff81001000 T next_one\n");
    fg::SymbolOptions o;
    o.buildid_dir = dir;
    o.use_proc_kallsyms = true;
    o.kernel_build_id = fg::build_id_from_hex(bid_hex);
    fg::SymbolCache cache(o);
    if (preload) cache.start_loading_kernel_symbols();
    std::vector<fg::SymbolizedFrame> out;
    cache.symbolize_kernel(0xffffffff81000010, false, out);
    EXPECT_EQ(out.at(0).name, "fgtool_cache_only_symbol") << "preload " << preload;
    auto st = cache.kernel_status();
    EXPECT_NE(st.source.find(bid_hex), std::string::npos) << st.source;
    EXPECT_EQ(st.symbols, 2u);
  }
}

TEST(KernelSymbols, NoSourceGivesKernelKallsymsPlaceholder) {
  fg::SymbolOptions o;
  o.buildid_dir = fg::test::temp_dir();
  fg::SymbolCache cache(o);
  std::vector<fg::SymbolizedFrame> out;
  cache.symbolize_kernel(0xffffffff81000000, false, out);
  EXPECT_EQ(out.at(0).name, "[kernel.kallsyms]");
  EXPECT_FALSE(cache.kernel_status().problem.empty());
}

TEST(KernelSymbols, ExplicitMissingFileIsAnInputError) {
  fg::SymbolOptions o;
  o.kallsyms_path = "/nonexistent/kallsyms";
  fg::SymbolCache cache(o);
  EXPECT_THROW(cache.load_kernel_symbols(), fg::InputError);
}

// Against this machine's /proc/kallsyms: a few text symbols resolve to themselves
// (or to the alias perf would pick at that address).
TEST(KernelSymbols, ProcKallsymsSample) {
  std::ifstream in("/proc/kallsyms");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  if (text.empty()) GTEST_SKIP() << "/proc/kallsyms not readable";
  auto table = fg::KallsymsTable::parse(text, "/proc/kallsyms");
  if (table.all_zero()) GTEST_SKIP() << "kptr_restrict hides kernel addresses here";
  fg::SymbolOptions o;
  o.use_proc_kallsyms = true;
  o.buildid_dir = fg::test::temp_dir();
  fg::SymbolCache cache(o);
  std::map<std::string, int> per_address;
  {
    std::istringstream all(text);
    std::string l;
    while (std::getline(all, l)) per_address[l.substr(0, l.find(' '))]++;
  }
  std::istringstream lines(text);
  std::string line;
  int checked = 0, n = 0;
  while (std::getline(lines, line)) {
    if (++n % 997 != 0) continue;
    std::istringstream ls(line);
    std::string addr_hex, type, name;
    ls >> addr_hex >> type >> name;
    if (type != "T" && type != "t") continue;
    uint64_t addr = std::stoull(addr_hex, nullptr, 16);
    const fg::KernelSymbol* want = table.find(addr);
    ASSERT_NE(want, nullptr) << line;
    std::vector<fg::SymbolizedFrame> out;
    cache.symbolize_kernel(addr, false, out);
    EXPECT_EQ(out.at(0).name, want->name);
    // Unless another symbol shares the address, it is this one.
    if (per_address[addr_hex] == 1) EXPECT_EQ(out.at(0).name, name) << line;
    ++checked;
  }
  EXPECT_GT(checked, 20);
  EXPECT_EQ(cache.kernel_status().source, "/proc/kallsyms");
}

}  // namespace
