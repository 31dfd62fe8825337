// The streaming folded reader: line endings, counts, malformed lines, gzip,
// three-column diff input, and agreement between the file and text paths.
#include <gtest/gtest.h>
#include <zlib.h>

#include <random>

#include "diagnostics/input_error.h"
#include "folded/folded_reader.h"
#include "folded/profile_loader.h"
#include "folded_text.h"
#include "test_support.h"

namespace fg {
namespace {

using test::folded_text;

std::string error_of(const std::string& text, const std::string& name = "in.folded") {
  FoldedProfile p;
  try {
    read_folded_text(text, name, p);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(FoldedReader, MergesDuplicatesAcceptsCrlfBlankAndFractions) {
  FoldedProfile p;
  auto st = read_folded_text("main;a 1\r\n\r\n   \nmain;a 2\nmain;b 0.5\n\nmain;b\t1.25\r\nmain 7", "x", p);
  EXPECT_EQ(st.stacks, 5u);
  EXPECT_EQ(st.lines, 8u);
  EXPECT_EQ(folded_text(p), "main 7\nmain;a 3\nmain;b 1.75\n");
}

TEST(FoldedReader, NamesWithSpacesKeepThem) {
  FoldedProfile p;
  read_folded_text("java;Interpreter [unknown];void foo(int, char) 12\n", "x", p);
  EXPECT_EQ(folded_text(p), "java;Interpreter [unknown];void foo(int, char) 12\n");
}

TEST(FoldedReader, PrefixReuseMatchesPlainInsertion) {
  // The reader reuses the previous line's path; compare with add_stack on
  // random lines sharing prefixes in awkward ways.
  std::mt19937 rng(3);
  const char* names[] = {"a", "ab", "a;b", "b", "", "ba"};
  std::string text;
  for (int i = 0; i < 3000; ++i) {
    std::string s;
    int depth = 1 + rng() % 6;
    for (int d = 0; d < depth; ++d) s += std::string(d ? ";" : "") + names[rng() % 6];
    if (s.empty()) s = "x";
    text += s + " " + std::to_string(1 + rng() % 5) + "\n";
  }
  FoldedProfile got, ref;
  read_folded_text(text, "x", got);
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string line = text.substr(pos, nl - pos);
    size_t sp = line.rfind(' ');
    ref.add_stack(line.substr(0, sp), std::stod(line.substr(sp + 1)));
    pos = nl + 1;
  }
  EXPECT_EQ(folded_text(got), folded_text(ref));
  EXPECT_EQ(got.node_count(), ref.node_count());
}

TEST(FoldedReader, MalformedLinesNameFileAndLine) {
  EXPECT_EQ(error_of("a;b 1\nno_count_here\n"),
            "in.folded:2: no count at the end of the line (expected 'frame;frame;... COUNT')");
  EXPECT_EQ(error_of("a;b 1\n\na;b x12\n"),
            "in.folded:3: 'x12' is not a count (expected 'frame;frame;... COUNT')");
  EXPECT_NE(error_of("a -3\n").find("in.folded:1: '-3' is not a count"), std::string::npos);
  EXPECT_NE(error_of("a nan\n").find("'nan' is not a count"), std::string::npos);
  EXPECT_NE(error_of("a 1e999\n").find("is not a count"), std::string::npos);
  EXPECT_NE(error_of("a 1.2.3\n").find("is not a count"), std::string::npos);
  EXPECT_EQ(error_of(" 5\n"), "in.folded:1: empty stack before the count");
  EXPECT_EQ(error_of("a 1\n"), "");
}

TEST(FoldedReader, LenientSkipsAndReports) {
  FoldedProfile p;
  std::string warning;
  FoldedReadOptions o;
  o.lenient = true;
  o.warn = [&](const std::string& w) { warning = w; };
  auto st = read_folded_text("a 1\nbad\na 2\nalso bad x\n", "f.folded", p, o);
  EXPECT_EQ(st.skipped, 2u);
  EXPECT_DOUBLE_EQ(p.total(), 3);
  EXPECT_EQ(warning, "f.folded: skipped 2 malformed lines (first at line 2: no count at the end of the line "
                     "(expected 'frame;frame;... COUNT'))");
}

TEST(FoldedReader, ParseCount) {
  double v = -1;
  EXPECT_TRUE(parse_count("0", v));
  EXPECT_EQ(v, 0);
  EXPECT_TRUE(parse_count("123456789012345678901234", v));
  EXPECT_DOUBLE_EQ(v, 1.2345678901234568e23);
  EXPECT_TRUE(parse_count("1.5", v));
  EXPECT_EQ(v, 1.5);
  EXPECT_TRUE(parse_count(".5", v));
  EXPECT_TRUE(parse_count("2.", v));
  EXPECT_EQ(v, 2);
  EXPECT_TRUE(parse_count("1e3", v));
  EXPECT_EQ(v, 1000);
  for (const char* bad : {"", "-1", "+1", "inf", "nan", "1x", "0x10", "e5", "1e"}) EXPECT_FALSE(parse_count(bad, v)) << bad;
}

TEST(FoldedReader, FilesGzipAndMissing) {
  std::string dir = test::temp_dir();
  std::string text;
  for (int i = 0; i < 20000; ++i) text += "main;work_" + std::to_string(i % 97) + ";leaf 1\n";
  test::write_file(dir + "/plain.folded", text);
  gzFile gz = gzopen((dir + "/x.folded.gz").c_str(), "wb");
  ASSERT_TRUE(gz);
  gzwrite(gz, text.data(), static_cast<unsigned>(text.size()));
  gzclose(gz);
  // A gzip file under a name without .gz is still recognised by its magic bytes.
  test::write_file(dir + "/disguised.txt", test::read_file(dir + "/x.folded.gz"));
  FoldedProfile a, b, c;
  read_folded(dir + "/plain.folded", a);
  auto st = read_folded(dir + "/x.folded.gz", b);
  read_folded(dir + "/disguised.txt", c);
  EXPECT_EQ(st.bytes, text.size());
  EXPECT_DOUBLE_EQ(a.total(), 20000);
  EXPECT_EQ(folded_text(a), folded_text(b));
  EXPECT_EQ(folded_text(a), folded_text(c));
  EXPECT_EQ(a.stack_count(), 97u);

  // Truncated gzip is an error naming the file.
  std::string gzbytes = test::read_file(dir + "/x.folded.gz");
  test::write_file(dir + "/cut.gz", gzbytes.substr(0, gzbytes.size() / 2));
  FoldedProfile d;
  try {
    read_folded(dir + "/cut.gz", d);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(dir + "/cut.gz: byte "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("gzip"), std::string::npos) << e.what();
  }
  try {
    read_folded(dir + "/missing.folded", d);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), dir + "/missing.folded: cannot open: No such file or directory");
  }
  // A final line without a newline, and a line longer than the 4 MiB block.
  std::string longname(6 << 20, 'x');
  test::write_file(dir + "/long.folded", "a 1\n" + longname + ";b 2\nc 3");
  FoldedProfile e;
  read_folded(dir + "/long.folded", e);
  EXPECT_DOUBLE_EQ(e.total(), 6);
  // The 6 MiB name is cut to the frame-name limit (tests/robustness checks the warning).
  EXPECT_NE(e.find_frame(longname.substr(0, kMaxFrameNameBytes)), FoldedProfile::kNoFrame);
}

TEST(FoldedReader, ErrorLineNumbersAcrossBlocks) {
  std::string dir = test::temp_dir();
  std::string text;
  for (int i = 0; i < 300000; ++i) text += "main;some_function_name;leaf " + std::to_string(i) + "\n";
  text += "broken line\n";
  test::write_file(dir + "/big.folded", text);
  FoldedProfile p;
  try {
    read_folded(dir + "/big.folded", p);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              dir + "/big.folded:300001: 'line' is not a count (expected 'frame;frame;... COUNT')");
  }
}

TEST(FoldedReader, ThreeColumnDiffInput) {
  FoldedProfile a, b;
  read_diff_folded_text("main;x 3 5\nmain;y 0 2\nmain;z 4 0\nmain;x 1 1\n", "d", a, b);
  EXPECT_EQ(folded_text(a), "main;x 4\nmain;z 4\n");
  EXPECT_EQ(folded_text(b), "main;x 6\nmain;y 2\n");
  EXPECT_TRUE(looks_like_diff_folded_text("\n\nmain;x 3 5\n"));
  EXPECT_FALSE(looks_like_diff_folded_text("main;x 3\n"));
  EXPECT_FALSE(looks_like_diff_folded_text("3 5\n"));
  FoldedProfile c, d;
  try {
    read_diff_folded_text("main;x 3 5\nmain;y 2\n", "d.folded", c, d);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "d.folded:2: no count at the end of the line (expected 'STACK COUNT_A COUNT_B' (three columns))");
  }
}

// Messy input for the reader's two paths: prefixes shared in awkward ways,
// shuffled order, empty names, names and stacks past the limits, and (for
// three columns) zero counts on either side.
std::string messy_folded(unsigned seed, size_t lines, bool three_columns) {
  std::mt19937 rng(seed);
  const std::string names[] = {"a", "ab", "b", "", "ba", "main", "f(int, char)", std::string(kMaxFrameNameBytes + 9, 'n')};
  std::string text;
  for (size_t i = 0; i < lines; ++i) {
    std::string s;
    const size_t depth = i % 997 == 5 ? kMaxStackDepth + 3 : 1 + rng() % 12;
    for (size_t d = 0; d < depth; ++d) s += std::string(d ? ";" : "") + names[rng() % 8];
    if (s.empty()) s = "x";
    text += s + " " + std::to_string(rng() % 4);
    if (three_columns) text += " " + std::to_string(rng() % 3);
    text += "\n";
  }
  return text;
}

// The same profile node for node (ids, parents, weights, names) however it
// was built.
void expect_same_tree(const FoldedProfile& a, const FoldedProfile& b) {
  ASSERT_EQ(a.node_count(), b.node_count());
  ASSERT_EQ(a.frame_count(), b.frame_count());
  for (FrameId f = 0; f < a.frame_count(); ++f) ASSERT_EQ(a.frame_name(f), b.frame_name(f));
  for (NodeId n = 0; n < a.node_count(); ++n) {
    ASSERT_EQ(a.node(n).frame, b.node(n).frame) << n;
    ASSERT_EQ(a.node(n).parent, b.node(n).parent) << n;
    ASSERT_EQ(a.node(n).self, b.node(n).self) << n;
  }
  EXPECT_EQ(a.total(), b.total());
}

// Past tree_thread_after stacks the tree is built on a thread of its own:
// the profile is the same as built on one thread, node for node, whether
// the thread starts at once, mid-file or never; so are the counts of cut
// stacks and names.
TEST(FoldedReader, TheTreeThreadBuildsTheSameProfile) {
  for (bool three : {false, true}) {
    SCOPED_TRACE(three ? "three columns" : "two columns");
    const std::string text = messy_folded(7, 24000, three);
    FoldedProfile one_a, one_b;
    FoldedReadOptions one;
    one.warn = [](const std::string&) {};
    one.tree_thread_after = 0;
    const FoldedReadStats ref = three ? read_diff_folded_text(text, "m", one_a, one_b, one)
                                      : read_folded_text(text, "m", one_a, one);
    EXPECT_GT(ref.truncated_stacks, 0u);
    EXPECT_GT(ref.truncated_names, 0u);
    for (uint64_t after : {uint64_t(1), uint64_t(12345)}) {
      SCOPED_TRACE(after);
      FoldedProfile a, b;
      FoldedReadOptions o = one;
      o.tree_thread_after = after;
      const FoldedReadStats st = three ? read_diff_folded_text(text, "m", a, b, o) : read_folded_text(text, "m", a, o);
      expect_same_tree(a, one_a);
      if (three) expect_same_tree(b, one_b);
      EXPECT_EQ(st.stacks, ref.stacks);
      EXPECT_EQ(st.truncated_stacks, ref.truncated_stacks);
      EXPECT_EQ(st.truncated_names, ref.truncated_names);
    }
  }
}

// FoldedReadOptions::root_frame: the stacks below one more root frame, as
// if read alone and merged below it, whether the tree thread runs or not;
// a profile that already has stacks keeps them.
TEST(FoldedReader, ARootFrameIsTheSameAsMergingBelowIt) {
  const std::string text = messy_folded(11, 20000, false);
  FoldedReadOptions quiet;
  quiet.warn = [](const std::string&) {};
  FoldedProfile alone;
  read_folded_text(text, "m", alone, quiet);
  FoldedProfile expect;
  read_folded_text("host=a;x 3\ny 2\n", "first", expect, quiet);
  expect.merge(alone, "host=b");
  for (uint64_t after : {uint64_t(0), uint64_t(1)}) {
    FoldedProfile got;
    read_folded_text("host=a;x 3\ny 2\n", "first", got, quiet);
    FoldedReadOptions o = quiet;
    o.tree_thread_after = after;
    o.root_frame = "host=b";
    read_folded_text(text, "m", got, o);
    EXPECT_EQ(folded_text(got), folded_text(expect));
    EXPECT_EQ(got.total(), expect.total());
  }
}

// A malformed line after the tree thread started: the error names its line,
// and the thread is stopped before the reader returns (no hang, no use of
// the reader's state afterwards: the sanitizer builds check).
TEST(FoldedReader, AnErrorWhileTheTreeThreadRunsNamesItsLine) {
  std::string text = messy_folded(9, 20000, false);
  text += "main;broken not-a-count\n";
  text += messy_folded(10, 1000, false);
  for (uint64_t after : {uint64_t(0), uint64_t(1), uint64_t(15000)}) {
    FoldedProfile p;
    FoldedReadOptions o;
    o.warn = [](const std::string&) {};
    o.tree_thread_after = after;
    try {
      read_folded_text(text, "big.folded", p, o);
      ADD_FAILURE() << "no error";
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("big.folded:20001: ", 0), 0u) << e.what();
    }
  }
}

TEST(ProfileLoader, FallsBackToFoldedAndUsesRegisteredLoaders) {
  std::string dir = test::temp_dir();
  test::write_file(dir + "/a.folded", "a;b 2\n");
  test::write_file(dir + "/magic.bin", "MAGIC123 whatever");
  register_profile_loader({"magic", [](std::string_view head) { return head.substr(0, 8) == "MAGIC123"; },
                           [](const std::string&, FoldedProfile& into, const ProfileLoadOptions&) {
                             into.add_stack("from;loader", 9);
                             into.units = "ns";
                           }});
  FoldedProfile p = load_profile(dir + "/a.folded");
  EXPECT_DOUBLE_EQ(p.total(), 2);
  FoldedProfile q = load_profile(dir + "/magic.bin");
  EXPECT_EQ(folded_text(q), "from;loader 9\n");
  EXPECT_EQ(q.units, "ns");
}

// The units line `fgtool fold -o` writes: read back as the profile's units,
// not a stack; a line that only looks like it (not first, or with a count)
// stays a stack.
TEST(FoldedUnits, HeaderLineRoundTrips) {
  EXPECT_EQ(units_header_line("ns"), "# fgtool units=ns\n");
  EXPECT_EQ(units_header_line("u s 9"), "# fgtool units=us\n");  // never ends in a count
  std::string dir = test::temp_dir();
  test::write_file(dir + "/h.folded", units_header_line("us") + "a;b 2\na;c 3\n");
  FoldedProfile p = load_profile(dir + "/h.folded");
  EXPECT_EQ(p.units, "us");
  EXPECT_EQ(folded_text(p), "a;b 2\na;c 3\n");
  test::write_file(dir + "/plain.folded", "a;b 2\n");
  EXPECT_EQ(load_profile(dir + "/plain.folded").units, "samples");
  test::write_file(dir + "/late.folded", "a;b 2\n# fgtool units=us 4\n");
  FoldedProfile q = load_profile(dir + "/late.folded");
  EXPECT_EQ(q.units, "samples");
  EXPECT_DOUBLE_EQ(q.total(), 6);
  ProfileLoadOptions forced;
  forced.units = "ms";
  EXPECT_EQ(load_profiles({dir + "/plain.folded"}, forced).units, "ms");
}

// Inputs of different units are never added silently: time units are
// converted to the first input's with a note, anything else is an error.
TEST(FoldedUnits, MixedUnitsConvertOrFail) {
  std::string dir = test::temp_dir();
  test::write_file(dir + "/ns.folded", units_header_line("ns") + "a;b 5000\n");
  test::write_file(dir + "/us.folded", units_header_line("us") + "a;b 2\n");
  test::write_file(dir + "/plain.folded", "a;b 7\n");
  std::vector<std::string> notes;
  ProfileLoadOptions o;
  o.warn = [&](const std::string& w) { notes.push_back(w); };
  FoldedProfile p = load_profiles({dir + "/us.folded", dir + "/ns.folded"}, o);
  EXPECT_EQ(p.units, "us");
  EXPECT_DOUBLE_EQ(p.total(), 7);  // 2 us + 5000 ns
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("converted to us"), std::string::npos) << notes[0];
  try {
    load_profiles({dir + "/ns.folded", dir + "/plain.folded"}, o);
    ADD_FAILURE() << "ns + samples added";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("plain.folded is in samples"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--unit"), std::string::npos) << e.what();
  }
  o.units = "ns";  // --unit: the user says what they all are
  EXPECT_DOUBLE_EQ(load_profiles({dir + "/ns.folded", dir + "/plain.folded"}, o).total(), 5007);
}

}  // namespace
}  // namespace fg
