// TextChunker on texts written here: chunks are whole lines that put the
// input back together, numbered right, cut after blank lines where they can,
// with over-long lines cut and a missing last '\n' added; count_newlines
// against a plain count.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "collapse/text_chunker.h"
#include "test_support.h"

namespace {

struct Cut {
  std::string text;
  uint64_t first_line;
  bool starts_sample;
};

std::vector<Cut> chunks_of(const std::string& text, size_t chunk_bytes, size_t max_line, bool number_lines = true) {
  const std::string path = fg::test::temp_dir() + "/in.txt";
  fg::test::write_file(path, text);
  fg::InputStream in(path);
  fg::TextChunker chunker(in, chunk_bytes, max_line, number_lines);
  std::vector<Cut> out;
  fg::TextChunk c;
  while (chunker.next(c)) out.push_back(Cut{std::string(c.text()), c.first_line, c.starts_sample});
  EXPECT_EQ(chunker.bytes_read(), text.size());
  return out;
}

// A perf-script-like text: samples of a header and a few frames, each
// followed by a blank line ("\r\n" ones too).
std::string sample_text(std::mt19937& rng, int samples) {
  std::string t;
  for (int s = 0; s < samples; ++s) {
    t += "comm " + std::to_string(s) + " [000] 1.0: 1 cpu-clock:\n";
    const int frames = int(rng() % 6);
    for (int f = 0; f < frames; ++f) t += "\t" + std::to_string(1000 + rng() % 9000) + " fn" + std::to_string(f) + " (lib)\n";
    t += rng() % 5 == 0 ? "\r\n" : "\n";
  }
  return t;
}

TEST(TextChunker, ChunksAreWholeLinesThatMakeTheInputAgain) {
  std::mt19937 rng(7);
  const std::string text = sample_text(rng, 300);
  for (size_t chunk_bytes : {1, 7, 40, 64, 333, 4096, 1 << 20}) {
    SCOPED_TRACE(chunk_bytes);
    const std::vector<Cut> cuts = chunks_of(text, chunk_bytes, 1 << 20);
    std::string joined;
    uint64_t line = 1;
    for (size_t i = 0; i < cuts.size(); ++i) {
      const Cut& c = cuts[i];
      ASSERT_FALSE(c.text.empty());
      EXPECT_EQ(c.text.back(), '\n');
      EXPECT_EQ(c.first_line, line);
      // A chunk starts a sample at the start, or right after a blank line.
      const bool after_blank = i == 0 || (joined.size() >= 2 && joined.compare(joined.size() - 2, 2, "\n\n") == 0) ||
                               (joined.size() >= 3 && joined.compare(joined.size() - 3, 3, "\n\r\n") == 0);
      if (c.starts_sample) EXPECT_TRUE(after_blank) << "chunk " << i;
      joined += c.text;
      line += uint64_t(std::count(c.text.begin(), c.text.end(), '\n'));
    }
    EXPECT_EQ(joined, text);
    if (chunk_bytes >= 333 && chunk_bytes < text.size()) {
      // Blank lines come every few lines: most chunks start a sample.
      size_t starting = 0;
      for (const Cut& c : cuts) starting += c.starts_sample;
      EXPECT_GT(starting, cuts.size() / 2);
    }
    if (chunk_bytes == 1 << 20) EXPECT_EQ(cuts.size(), 1u);
  }
}

TEST(TextChunker, WithoutBlankLinesChunksContinueTheSample) {
  std::string text;
  for (int i = 0; i < 200; ++i) text += "line " + std::to_string(i) + "\n";
  const std::vector<Cut> cuts = chunks_of(text, 50, 1 << 20);
  ASSERT_GT(cuts.size(), 10u);
  EXPECT_TRUE(cuts[0].starts_sample);
  std::string joined;
  for (size_t i = 0; i < cuts.size(); ++i) {
    if (i) EXPECT_FALSE(cuts[i].starts_sample);
    joined += cuts[i].text;
  }
  EXPECT_EQ(joined, text);
}

TEST(TextChunker, UnnumberedChunksSayZero) {
  std::mt19937 rng(3);
  for (const Cut& c : chunks_of(sample_text(rng, 50), 100, 1 << 20, false)) EXPECT_EQ(c.first_line, 0u);
}

TEST(TextChunker, LastLineGetsItsNewline) {
  const std::vector<Cut> cuts = chunks_of("a\nb\nlast", 4096, 1 << 20);
  ASSERT_EQ(cuts.size(), 1u);
  EXPECT_EQ(cuts[0].text, "a\nb\nlast\n");
  EXPECT_TRUE(chunks_of("", 4096, 1 << 20).empty());
}

TEST(TextChunker, OverlongLineIsCutAndTheRestSkipped) {
  // max_line 10: the 50-byte line stays too long for its reader, whole
  // where a chunk holds it, else cut to 11 bytes with the rest skipped; it
  // counts as one line, and the lines after it are intact.
  const std::string text = "first\n" + std::string(50, 'x') + "\nafter\n\nnext\n";
  for (size_t chunk_bytes : {1, 8, 16, 4096}) {
    SCOPED_TRACE(chunk_bytes);
    std::string joined;
    uint64_t lines = 0;
    for (const Cut& c : chunks_of(text, chunk_bytes, 10)) {
      EXPECT_EQ(c.first_line, lines + 1);
      joined += c.text;
      lines += uint64_t(std::count(c.text.begin(), c.text.end(), '\n'));
    }
    const size_t kept = chunk_bytes >= 64 ? 50 : 11;
    EXPECT_EQ(joined, "first\n" + std::string(kept, 'x') + "\nafter\n\nnext\n");
    EXPECT_EQ(lines, 5u);
  }
  // An over-long last line without '\n'.
  std::string joined;
  for (const Cut& c : chunks_of("ok\n" + std::string(30, 'y'), 4, 10)) joined += c.text;
  EXPECT_EQ(joined, "ok\n" + std::string(11, 'y') + "\n");
}

TEST(TextChunker, CountNewlinesMatchesAPlainCount) {
  std::mt19937 rng(11);
  std::string buf(5000, 'a');
  for (char& ch : buf) ch = rng() % 7 == 0 ? '\n' : char('a' + rng() % 26);
  for (size_t start : {0, 1, 3, 15}) {
    for (size_t n : {0, 1, 15, 16, 17, 255, 4079, 4080, 4096, 4984}) {
      if (start + n > buf.size()) continue;
      const uint64_t expected = uint64_t(std::count(buf.begin() + long(start), buf.begin() + long(start + n), '\n'));
      EXPECT_EQ(fg::count_newlines(buf.data() + start, n), expected) << start << "+" << n;
    }
  }
  // More than 255 blocks of 16 newlines: the byte counters are summed in time.
  const std::string all(16 * 300 + 5, '\n');
  EXPECT_EQ(fg::count_newlines(all.data(), all.size()), all.size());
}

}  // namespace
