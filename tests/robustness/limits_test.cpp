// Limits on hostile input: stacks over kMaxStackDepth frames and names over
// kMaxFrameNameBytes are cut with a counted warning; perf.data fields that
// claim huge sizes are rejected with the byte offset, without allocating
// what they claim (checked through the peak RSS of fgtool).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "collapse/perf_script_collapser.h"
#include "folded/folded_reader.h"
#include "test_support.h"

using namespace fg::test;

namespace {

size_t max_depth(const fg::FoldedProfile& p) {
  size_t d = 0;
  p.for_each_stack([&](const std::vector<fg::FrameId>& f, double) { d = std::max(d, f.size()); });
  return d;
}

size_t longest_name(const fg::FoldedProfile& p) {
  size_t n = 0;
  for (size_t i = 0; i < p.frame_count(); ++i) n = std::max(n, p.frame_name(fg::FrameId(i)).size());
  return n;
}

std::string deep_stack(size_t depth) {
  std::string s = "root";
  for (size_t i = 1; i < depth; ++i) s += ";f" + std::to_string(i);
  return s;
}

// Peak resident set of a shell command, in KiB (GNU time's %M), or -1.
long peak_rss_kb(const std::string& cmd, CommandResult* result = nullptr) {
  std::string dir = temp_dir();
  auto r = run_shell("/usr/bin/time -f %M -o " + shell_quote(dir + "/rss") + " sh -c " + shell_quote(cmd));
  if (result) *result = r;
  std::string rss = read_file(dir + "/rss");
  // The last line is the number (earlier lines may say the command failed).
  auto nl = rss.find_last_of('\n', rss.size() >= 2 ? rss.size() - 2 : 0);
  try {
    return std::stol(nl == std::string::npos ? rss : rss.substr(nl + 1));
  } catch (...) {
    return -1;
  }
}

}  // namespace

TEST(Limits, FoldedStackDeeperThanLimitIsCutWithWarning) {
  std::string text = deep_stack(10000) + " 5\n" + deep_stack(10) + " 1\n" + deep_stack(10000) + " 2\n";
  fg::FoldedProfile p;
  std::vector<std::string> warnings;
  fg::FoldedReadOptions o;
  o.warn = [&](const std::string& w) { warnings.push_back(w); };
  auto st = fg::read_folded_text(text, "deep.folded", p, o);
  EXPECT_EQ(st.truncated_stacks, 2u);
  EXPECT_EQ(max_depth(p), fg::kMaxStackDepth);
  EXPECT_DOUBLE_EQ(p.total(), 8);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("2 stacks deeper than 4096"), std::string::npos) << warnings[0];
  // The root-most frames are the ones kept.
  EXPECT_NE(p.find_frame("f4095"), fg::FoldedProfile::kNoFrame);
  EXPECT_EQ(p.find_frame("f4096"), fg::FoldedProfile::kNoFrame);
}

TEST(Limits, FoldedLongNameIsTruncatedAtCharacterBoundary) {
  // 3-byte UTF-8 characters, so that the 4096-byte cut falls inside one.
  std::string euro = "\xe2\x82\xac";
  std::string name;
  while (name.size() < 100000) name += euro;
  fg::FoldedProfile p;
  std::vector<std::string> warnings;
  fg::FoldedReadOptions o;
  o.warn = [&](const std::string& w) { warnings.push_back(w); };
  auto st = fg::read_folded_text("main;" + name + ";leaf 3\n", "long.folded", p, o);
  EXPECT_EQ(st.truncated_names, 1u);
  EXPECT_LE(longest_name(p), fg::kMaxFrameNameBytes);
  EXPECT_GT(longest_name(p), fg::kMaxFrameNameBytes - 3);
  EXPECT_EQ(longest_name(p) % 3, 0u);  // whole characters only
  EXPECT_NE(p.find_frame("leaf"), fg::FoldedProfile::kNoFrame);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("longer than 4096 bytes"), std::string::npos);
}

TEST(Limits, FlameChartPathIsCutToo) {
  std::string dir = temp_dir();
  write_file(dir + "/deep.folded", deep_stack(6000) + ";" + std::string(9000, 'x') + " 1\n");
  std::vector<std::string> stacks;
  fg::FoldedReadOptions o;
  std::vector<std::string> warnings;
  o.warn = [&](const std::string& w) { warnings.push_back(w); };
  auto st = fg::for_each_folded_line(dir + "/deep.folded", [&](std::string_view s, double) { stacks.emplace_back(s); }, o);
  ASSERT_EQ(stacks.size(), 1u);
  EXPECT_EQ(std::count(stacks[0].begin(), stacks[0].end(), ';') + 1, long(fg::kMaxStackDepth));
  EXPECT_EQ(st.truncated_stacks, 1u);
  EXPECT_EQ(warnings.size(), 1u);
}

TEST(Limits, PerfScriptSampleDeeperThanLimitKeepsLeafMostFrames) {
  std::string text = "prog 123 1.000000: 1000 cpu-clock:\n";
  for (int i = 0; i < 5000; ++i) text += "\t" + std::to_string(0x1000 + i) + " fn" + std::to_string(i) + " (/bin/prog)\n";
  text += "\t9999 " + std::string(10000, 'n') + " (/bin/prog)\n\n";
  std::string dir = temp_dir();
  write_file(dir + "/deep.txt", text);
  fg::CollapseStats st;
  fg::FoldedProfile p = fg::collapse_perf_script(dir + "/deep.txt", fg::CollapseOptions{}, &st);
  EXPECT_EQ(st.truncated_stacks, 1u);
  EXPECT_EQ(max_depth(p), fg::kMaxStackDepth + 1);  // + the comm root frame
  EXPECT_NE(p.find_frame("fn0"), fg::FoldedProfile::kNoFrame);  // the leaf
  EXPECT_EQ(p.find_frame("fn4096"), fg::FoldedProfile::kNoFrame);
  // The long name came after the cut; a sample with it alone is truncated.
  write_file(dir + "/long.txt", "prog 1 1.0: 1 cpu-clock:\n\t1 " + std::string(10000, 'n') + " (/bin/prog)\n\n");
  fg::CollapseStats st2;
  fg::FoldedProfile p2 = fg::collapse_perf_script(dir + "/long.txt", fg::CollapseOptions{}, &st2);
  EXPECT_EQ(st2.truncated_names, 1u);
  EXPECT_EQ(longest_name(p2), fg::kMaxFrameNameBytes);
  // The CLI says so on stderr, also with --quiet.
  auto r = run_shell(shell_quote(fgtool_bin()) + " collapse --quiet " + shell_quote(dir + "/deep.txt") + " -o " +
                     shell_quote(dir + "/out.folded"));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("deeper than 4096"), std::string::npos) << r.err;
}

TEST(Limits, SvgOfHostileDepthAndNameStaysSmall) {
  // Without the limits this input made a 40 MB SVG of 200,000 levels.
  std::string dir = temp_dir();
  write_file(dir + "/deep.folded", deep_stack(200000) + " 5\nmain;" + std::string(1 << 20, 'A') + " 1\n");
  auto r = run_shell(shell_quote(fgtool_bin()) + " svg " + shell_quote(dir + "/deep.folded") + " -o " +
                     shell_quote(dir + "/deep.svg"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("deeper than 4096"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("longer than 4096 bytes"), std::string::npos) << r.err;
  EXPECT_LT(read_file(dir + "/deep.svg").size(), size_t(4) << 20);
}

namespace {

template <typename T>
T load(const std::string& b, size_t off) {
  T v;
  std::memcpy(&v, b.data() + off, sizeof v);
  return v;
}
template <typename T>
void store(std::string& b, size_t off, T v) {
  std::memcpy(b.data() + off, &v, sizeof v);
}

// Offset of the first SAMPLE record of a file-mode perf.data, and of its
// callchain's nr word (computed from the first attr's sample_type).
bool find_callchain_nr(const std::string& b, size_t* nr_offset) {
  // perf_file_header: magic, size, attr_size, attrs {offset, size}, data {offset, size}, ...
  uint64_t attrs_off = load<uint64_t>(b, 24);
  uint64_t data_off = load<uint64_t>(b, 40), data_size = load<uint64_t>(b, 48);
  uint64_t sample_type = load<uint64_t>(b, attrs_off + 24);  // perf_event_attr.sample_type
  if (!(sample_type & (1u << 5))) return false;  // no CALLCHAIN
  if (sample_type & (1u << 4)) return false;     // READ: variable size, not handled here
  size_t words = 0;
  for (uint64_t bit : {1u << 16, 1u << 0, 1u << 1, 1u << 2, 1u << 3, 1u << 6, 1u << 9, 1u << 7, 1u << 8})
    if (sample_type & bit) ++words;
  for (uint64_t pos = data_off; pos + 8 <= data_off + data_size && pos + 8 <= b.size();) {
    uint32_t type = load<uint32_t>(b, pos);
    uint16_t size = load<uint16_t>(b, pos + 6);
    if (size < 8) return false;
    if (type == 9) {
      *nr_offset = pos + 8 + 8 * words;
      return true;
    }
    pos += size;
  }
  return false;
}

}  // namespace

TEST(Limits, HugeClaimedSizesAreRejectedWithoutAllocating) {
  std::string fp = read_file(testdata("perf/fp.data"));
  std::string dir = temp_dir();
  std::string fg = shell_quote(fgtool_bin());

  // A callchain claiming 2^32 entries.
  size_t nr_off = 0;
  ASSERT_TRUE(find_callchain_nr(fp, &nr_off)) << "perf/fp.data: no SAMPLE with a callchain found";
  std::string cc = fp;
  store<uint64_t>(cc, nr_off, uint64_t(1) << 32);
  write_file(dir + "/callchain.data", cc);

  // A feature section claiming 4 GB.
  std::string feat = fp;
  uint64_t data_end = load<uint64_t>(fp, 40) + load<uint64_t>(fp, 48);
  store<uint64_t>(feat, data_end + 8, uint64_t(4) << 30);
  write_file(dir + "/feature.data", feat);

  // A data section claiming 2^62 bytes.
  std::string data = fp;
  store<uint64_t>(data, 48, uint64_t(1) << 62);
  write_file(dir + "/datasize.data", data);

  // The data section cut in the middle of a record.
  write_file(dir + "/cut.data", fp.substr(0, load<uint64_t>(fp, 40) + 100));

  for (const char* name : {"callchain", "feature", "datasize", "cut"}) {
    SCOPED_TRACE(name);
    CommandResult r;
    long kb = peak_rss_kb(fg + " fold " + shell_quote(dir + "/" + name + ".data") + " -o " + shell_quote(dir + "/o"), &r);
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_NE(r.err.find("byte "), std::string::npos) << r.err;  // names the offset
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
    EXPECT_GT(kb, 0);
    EXPECT_LT(kb, 512 * 1024) << "peak RSS " << kb << " KiB";  // sanitizer builds included
  }
}
