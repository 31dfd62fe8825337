// ElfPreloader (lib/symbols/elf_preloader.h): objects opened on a thread of
// its own and taken once, the same as opened in place; failures handed over
// with their reason; what it was not asked for left to the caller. And the
// SymbolCache using it names the same symbols. The descriptor table grows.
#include <gtest/gtest.h>

#include <fstream>
#include <future>
#include <optional>
#include <string>
#include <vector>

#include "symbols/elf_preloader.h"
#include "symbols/file_descriptor_table.h"
#include "symbols/symbol_cache.h"
#include "test_support.h"

namespace fg {
namespace {

std::vector<std::string> names_of(const ElfObject& e) {
  std::vector<std::string> out;
  for (const ElfSymbol& s : e.symbols()) out.push_back(std::to_string(s.start) + " " + s.name);
  return out;
}

// The thread starts on its first job as it lists them: the first job is
// always handed over (later ones may not be started when asked for).
TEST(ElfPreloader, HandsOverWhatItOpenedOnceAndTheSameAsOpenedInPlace) {
  const std::string dir = test::temp_dir();
  test::write_file(dir + "/text", "not an ELF file\n");
  for (const char* file : {SYMFX_C_PIE, SYMFX_CXX}) {
    const ElfPreloader::Job job{file, "", {}};
    ElfPreloader preloader([&] { return std::vector<ElfPreloader::Job>{job, ElfPreloader::Job{dir + "/text", "", {}}}; });
    // Not a job: another file, or the same with another build-id or search.
    EXPECT_FALSE(preloader.take(ElfPreloader::Job{SYMFX_C_NOPIE, "", {}}).has_value());
    EXPECT_FALSE(preloader.take(ElfPreloader::Job{file, "x", {}}).has_value());
    std::optional<ElfPreloader::Loaded> l = preloader.take(job);
    ASSERT_TRUE(l.has_value()) << file;
    ASSERT_TRUE(l->elf) << l->problem;
    std::string problem;
    std::unique_ptr<ElfObject> here = ElfObject::open(file, "", DebugSearch{}, &problem);
    ASSERT_TRUE(here) << problem;
    EXPECT_EQ(names_of(*l->elf), names_of(*here));
    EXPECT_GT(l->elf->real_symbol_count(), 0u);
    EXPECT_FALSE(preloader.take(job).has_value());  // once
    EXPECT_EQ(preloader.taken(), 1u);
  }
  // A file it could not open comes with the reason ElfObject::open gives.
  const ElfPreloader::Job text{dir + "/text", "", {}};
  ElfPreloader preloader([&] { return std::vector<ElfPreloader::Job>{text}; });
  std::optional<ElfPreloader::Loaded> bad = preloader.take(text);
  ASSERT_TRUE(bad.has_value());
  EXPECT_FALSE(bad->elf);
  EXPECT_NE(bad->problem.find("not an ELF file"), std::string::npos) << bad->problem;
}

// Going away while it works (a fold that failed early) stops and joins it.
TEST(ElfPreloader, StopsWhenItGoes) {
  std::vector<ElfPreloader::Job> many(200, ElfPreloader::Job{SYMFX_CXX, "", {}});
  for (size_t i = 0; i < many.size(); ++i) many[i].search.cached_debug_file = "/nonexistent/" + std::to_string(i);
  { ElfPreloader preloader([&] { return many; }); }
  SUCCEED();
}

// The symbol cache opens the recorded objects ahead and names the same
// symbols with them as without.
TEST(ElfPreloader, TheSymbolCacheNamesTheSameWithIt) {
  SymbolOptions options;
  options.buildid_dir = test::temp_dir();
  auto symbolised = [&](bool preload) {
    SymbolCache cache(options);
    if (preload) cache.start_preloading({{SYMFX_C_PIE, ""}, {SYMFX_CXX, ""}, {"[vdso]", ""}, {"/no/such/file", ""}});
    std::vector<std::string> out;
    for (const char* file : {SYMFX_C_PIE, SYMFX_CXX}) {
      ObjectHandle h = cache.object({file, ""});
      for (uint64_t off = 0x1000; off < 0x3000; off += 0x10) {
        std::vector<SymbolizedFrame> frames;
        cache.symbolize(h, off, false, frames);
        for (const SymbolizedFrame& f : frames) out.push_back(std::string(f.name));
      }
    }
    return std::make_pair(out, cache.preloaded_objects());
  };
  const auto with = symbolised(true), without = symbolised(false);
  EXPECT_EQ(with.first, without.first);
  // The first job is being opened or opened by the time it is asked for
  // (the thread starts on it as it lists the jobs); the second may not be.
  EXPECT_GE(with.second, 1u);
  EXPECT_EQ(without.second, 0u);
}

// /proc/self/status's FDSize: the descriptor table's size.
int fd_table_size() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("FDSize:", 0) == 0) return std::stoi(line.substr(7));
  return -1;
}

TEST(FileDescriptorTable, GrowsToTheSizeAsked) {
  const int before = fd_table_size();
  ASSERT_GT(before, 0);
  reserve_file_descriptor_table(before * 4);
  EXPECT_GE(fd_table_size(), before * 4);
  reserve_file_descriptor_table(1 << 30);  // past RLIMIT_NOFILE: quietly to the limit or not at all
  EXPECT_GE(fd_table_size(), before * 4);
}

}  // namespace
}  // namespace fg
