// The JSON reader under the trace scanner (lib/traces/json_stream.h): values
// cut by the end of the first 64 KiB read block must be read again whole
// after the refill, whatever byte the cut falls on (inside a UTF-8 sequence,
// an escape, a surrogate pair, a number), and errors there name the exact
// byte offset (as before json_stream was split from the scanner).
#include <gtest/gtest.h>

#include <string>

#include "diagnostics/input_error.h"
#include "trace_test_util.h"
#include "traces/chrome_trace.h"
#include "traces/json_stream.h"

namespace fg::test {
namespace {

constexpr size_t kBoundary = json_stream::kFirstBlock;

// A trace whose first event's name starts with `name_text` (as written in
// the JSON, escapes included) at byte `at` of the file.
std::string trace_with_name_at(size_t at, const std::string& name_text, const std::string& ts = "0") {
  std::string head = "{\"traceEvents\": [{\"args\": {\"pad\": \"";
  std::string mid = "\"}, \"name\": \"";
  size_t pad = at - head.size() - mid.size();
  return head + std::string(pad, 'p') + mid + name_text + "\", \"ph\": \"X\", \"ts\": " + ts +
         ", \"dur\": 2, \"pid\": 1, \"tid\": 1}]}\n";
}

std::string only_stack(const FoldedProfile& p) {
  auto m = stack_map(p);
  return m.size() == 1 ? m.begin()->first : "(" + std::to_string(m.size()) + " stacks)";
}

TEST(JsonStream, ValuesCutByTheFirstReadBlockAreReadWhole) {
  ChromeTraceOptions o;
  o.roots = ChromeTraceOptions::Roots::None;
  struct Case {
    std::string written, name;
  };
  const Case cases[] = {
      {"a\xE2\x82\xAC" "b", "a\xE2\x82\xAC" "b"},                // 3-byte UTF-8
      {"a\xF0\x9F\x98\x80" "b", "a\xF0\x9F\x98\x80" "b"},        // 4-byte UTF-8
      {"a\\u20acb", "a\xE2\x82\xAC" "b"},                        // \u escape
      {"a\\ud83d\\ude00b", "a\xF0\x9F\x98\x80" "b"},             // surrogate pair
      {"a\\\"q\\\\b", "a\"q\\b"},                                // simple escapes
  };
  for (const Case& c : cases) {
    // The name's start at every byte from 8 before the boundary to just after it.
    for (size_t at = kBoundary - 8; at <= kBoundary + 1; ++at) {
      SCOPED_TRACE(c.written + " at " + std::to_string(at));
      std::string path = temp_input("cut.json", trace_with_name_at(at, c.written));
      EXPECT_EQ(only_stack(fold_chrome_trace(path, o)), c.name);
    }
  }
  // A timestamp cut between its digits: 1234567.891 us -> 1234567891 ns.
  for (size_t at = kBoundary - 40; at <= kBoundary; ++at) {
    SCOPED_TRACE(at);
    std::string path = temp_input("cut.json", trace_with_name_at(at, "n", "1234567.891"));
    ChromeTraceOptions ns = o;
    ns.nanoseconds = true;
    auto m = stack_map(fold_chrome_trace(path, ns));
    ASSERT_EQ(m.size(), 1u);
    EXPECT_EQ(m.begin()->second, 2000);  // dur 2 us
  }
}

TEST(JsonStream, InvalidUtf8AtTheBoundaryNamesItsOffset) {
  for (size_t at = kBoundary - 3; at <= kBoundary + 1; ++at) {
    SCOPED_TRACE(at);
    // "\xE2\x82" then 'x': a 3-byte sequence cut short by an ASCII byte.
    std::string path = temp_input("bad.json", trace_with_name_at(at, "\xE2\x82x"));
    try {
      fold_chrome_trace(path);
      ADD_FAILURE() << "no error";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("byte " + std::to_string(at)), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("invalid UTF-8 byte 0xe2"), std::string::npos) << e.what();
    }
  }
  // Cut short by the end of the file just after the boundary: the sequence
  // can never be completed, so its first byte is the error.
  std::string text = trace_with_name_at(kBoundary - 1, "\xE2\x82");
  std::string path = temp_input("cut_end.json", text.substr(0, kBoundary + 1));
  try {
    fold_chrome_trace(path);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("byte " + std::to_string(kBoundary - 1) + ": malformed JSON: invalid UTF-8 byte 0xe2"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace fg::test
