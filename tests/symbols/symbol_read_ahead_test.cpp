// SymbolReadAhead (lib/symbols/symbol_read_ahead.h): page-cache hints for the
// symbol sections of ELF files, on a thread of its own. What it may not do is
// fail loudly: missing, non-ELF, truncated and damaged files are skipped.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "symbols/symbol_cache.h"
#include "symbols/symbol_read_ahead.h"
#include "test_support.h"

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(SymbolReadAhead, AsksForTheSymbolSectionsOfAnElfFile) {
  // The fixture has .symtab, .strtab, .shstrtab, .dynsym and .dynstr.
  EXPECT_GE(fg::read_ahead_symbol_sections(SYMFX_C_PIE), 4u);
}

TEST(SymbolReadAhead, SkipsWhatIsNotAReadableElfFile) {
  const std::string dir = fg::test::temp_dir();
  const std::string elf = slurp(SYMFX_C_PIE);
  ASSERT_GT(elf.size(), 4096u);
  fg::test::write_file(dir + "/text", "not an ELF file\n");
  fg::test::write_file(dir + "/truncated", elf.substr(0, 100));
  // The header intact, the section header table pointing past the end.
  std::string damaged = elf.substr(0, 4096);
  fg::test::write_file(dir + "/damaged", damaged);
  fg::test::write_file(dir + "/empty", "");
  EXPECT_EQ(fg::read_ahead_symbol_sections(dir + "/missing"), 0u);
  EXPECT_EQ(fg::read_ahead_symbol_sections(dir + "/text"), 0u);
  EXPECT_EQ(fg::read_ahead_symbol_sections(dir + "/truncated"), 0u);
  EXPECT_EQ(fg::read_ahead_symbol_sections(dir + "/damaged"), 0u);
  EXPECT_EQ(fg::read_ahead_symbol_sections(dir + "/empty"), 0u);
  EXPECT_EQ(fg::read_ahead_symbol_sections(dir), 0u);  // a directory
  fg::SymbolReadAhead ahead([&] {
    return std::vector<std::string>{dir + "/missing", dir + "/text", SYMFX_C_PIE, dir + "/damaged", SYMFX_CXX};
  });
  EXPECT_EQ(ahead.wait(), 2u);
  EXPECT_EQ(ahead.wait(), 2u);  // again: the answer is kept
}

// The symbol cache reads ahead the file each object would be opened from:
// here the recorded paths (no build-id cache), one of them not a file.
TEST(SymbolReadAhead, SymbolCacheStartsItForRecordedObjects) {
  fg::SymbolOptions options;
  options.buildid_dir = fg::test::temp_dir();
  fg::SymbolCache cache(options);
  cache.start_reading_ahead({{SYMFX_C_PIE, ""}, {"[vdso]", ""}, {"//anon", ""}, {"/no/such/file", ""}});
  cache.start_reading_ahead({});  // once per cache: a second call does nothing
  EXPECT_EQ(cache.wait_for_read_ahead(), 1u);
  fg::ObjectHandle h = cache.object({SYMFX_C_PIE, ""});
  EXPECT_EQ(cache.resolved_elf_path(h), SYMFX_C_PIE);
}

}  // namespace
