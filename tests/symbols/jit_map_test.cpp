// /tmp/perf-PID.map parsing and lookups through SymbolCache::symbolize_jit.
#include <gtest/gtest.h>

#include <unistd.h>

#include "symbols/jit_map.h"
#include "symbols/symbol_cache.h"
#include "test_support.h"

namespace {

TEST(PerfMap, ParsesNamesWithSpacesAndOverrides) {
  fg::NamedRanges r;
  auto st = fg::parse_perf_map(
      "7f0000001000 40 LazyCompile:~foo bar.js:10\n"
      "7f0000001040 20 Builtin: ArgumentsAdaptor\n"
      "garbage\n"
      "7f0000002000 zz bad\n"
      "\n"
      "7f0000001000 10 LazyCompile:*foo bar.js:10\n"  // recompiled: overrides the first 16 bytes
      "0x7f0000003000 0x8 with_0x_prefix\n"
      "7f0000004000 8",  // torn last line
      r);
  EXPECT_EQ(st.lines, 7u);
  EXPECT_EQ(st.malformed, 3u);
  EXPECT_EQ(r.find(0x7f0000001000), "LazyCompile:*foo bar.js:10");
  EXPECT_EQ(r.find(0x7f000000100f), "LazyCompile:*foo bar.js:10");
  EXPECT_EQ(r.find(0x7f0000001010), "LazyCompile:~foo bar.js:10");
  EXPECT_EQ(r.find(0x7f0000001045), "Builtin: ArgumentsAdaptor");
  EXPECT_EQ(r.find(0x7f0000001060), "");
  EXPECT_EQ(r.find(0x7f0000003007), "with_0x_prefix");
}

TEST(PerfMap, SymbolizeJitReadsTheFileOncePerPid) {
  std::string dir = fg::test::temp_dir();
  fg::test::write_file(dir + "/perf-4242.map", "1000 100 jitted;fn one\n2000 10 two\n");
  fg::SymbolOptions o;
  o.jit_map_dir = dir;
  o.buildid_dir = dir;
  fg::SymbolCache cache(o);
  std::vector<fg::SymbolizedFrame> out;
  cache.symbolize_jit(4242, 0x1010, false, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].name, "jitted:fn one");  // ';' made folded-safe
  EXPECT_TRUE(out[0].resolved);
  // The file is read once: later changes are not seen (perf reads it after the run too).
  fg::test::write_file(dir + "/perf-4242.map", "3000 10 three\n");
  out.clear();
  cache.symbolize_jit(4242, 0x3000, false, out);
  EXPECT_EQ(out[0].name, "[perf-4242.map]");
  EXPECT_FALSE(out[0].resolved);
  out.clear();
  cache.symbolize_jit(4242, 0x2000, true, out);  // return address: 0x1fff is in no range
  EXPECT_FALSE(out[0].resolved);
  out.clear();
  cache.symbolize_jit(7, 0x1010, false, out);  // no file for this pid
  EXPECT_EQ(out[0].name, "[perf-7.map]");
}

}  // namespace
