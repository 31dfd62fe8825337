// Chrome trace JSON folding: goldens made by testdata/traces/fold_ref.py,
// self-time arithmetic on generated traces whose answer is known by
// construction, and damaged input (clear error with a byte offset, no crash).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <random>

#include "diagnostics/input_error.h"
#include "trace_test_util.h"
#include "traces/chrome_trace.h"

namespace fg::test {
namespace {

std::string error_of(const std::string& path, const ChromeTraceOptions& o = {}) {
  try {
    fold_chrome_trace(path, o);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(ChromeTrace, GoldenFoldsOfHandWrittenAndRealTraces) {
  for (std::string name : {"nested", "begin_end_open_array", "mlp_train_trace"}) {
    SCOPED_TRACE(name);
    ChromeTraceStats st;
    FoldedProfile p = fold_chrome_trace(testdata("traces/" + name + ".json"), {}, &st);
    EXPECT_EQ(folded_text(p), read_file(testdata("traces/" + name + ".folded")));
    EXPECT_EQ(p.units, "us");
    EXPECT_EQ(st.unmatched_ends + st.unclosed_begins + st.overlaps + st.unknown_phases + st.bad_events, 0u);
  }
}

TEST(ChromeTrace, NestedFixtureCounts) {
  ChromeTraceStats st;
  FoldedProfile p = fold_chrome_trace(testdata("traces/nested.json"), {}, &st);
  EXPECT_DOUBLE_EQ(p.total(), 131.25);
  EXPECT_EQ(st.events, 13u);
  EXPECT_EQ(st.spans, 8u);  // 6 X in trainer, 1 B/E pair, 1 X on GPU
  EXPECT_EQ(st.metadata, 2u);
  EXPECT_EQ(st.other_phases, 2u);  // i, C
  EXPECT_EQ(st.threads, 3u);
  EXPECT_FALSE(st.missing_close);
  EXPECT_TRUE(st.warnings().empty());
}

TEST(ChromeTrace, OpenArrayIsAcceptedAndNoted) {
  ChromeTraceStats st;
  fold_chrome_trace(testdata("traces/begin_end_open_array.json"), {}, &st);
  EXPECT_TRUE(st.missing_close);
  ASSERT_EQ(st.warnings().size(), 1u);
}

// JSON strings hold any character: an op, thread or process named with ';'
// or a line break would split a frame or a stack of the folded output.
TEST(ChromeTrace, NamesThatWouldSplitAFoldedLineAreMadeSafe) {
  std::string path = temp_input("odd_names.json", R"({"traceEvents":[
    {"ph":"M","name":"process_name","pid":1,"args":{"name":"proc;a\nb"}},
    {"ph":"M","name":"thread_name","pid":1,"tid":2,"args":{"name":"th\r;x"}},
    {"ph":"X","name":"outer;op\nline","pid":1,"tid":2,"ts":0,"dur":100},
    {"ph":"X","name":"inner\rx","pid":1,"tid":2,"ts":10,"dur":50}]})");
  ChromeTraceOptions o;
  o.roots = ChromeTraceOptions::Roots::ProcessAndThread;
  FoldedProfile p = fold_chrome_trace(path, o);
  std::map<std::string, double> m = stack_map(p);
  ASSERT_EQ(m.size(), 2u) << folded_text(p);
  EXPECT_EQ(m.begin()->first, "proc:a b;th :x;outer:op line");
  EXPECT_EQ(std::next(m.begin())->first, "proc:a b;th :x;outer:op line;inner x");
}

// The real libtorch trace: per thread, the folded total must equal the wall
// time covered by the union of its spans (computed here from a DOM parse).
TEST(ChromeTrace, RealTraceTotalIsCoveredWallTime) {
  std::string path = testdata("traces/mlp_train_trace.json");
  nlohmann::json doc = nlohmann::json::parse(read_file(path));
  std::vector<std::pair<double, double>> iv;
  for (const auto& e : doc) {
    ASSERT_EQ(e["ph"], "X");
    double ts = e["ts"].get<double>(), dur = e["dur"].get<double>();
    iv.emplace_back(ts, ts + dur);
  }
  std::sort(iv.begin(), iv.end());
  double covered = 0, cur_s = iv[0].first, cur_e = iv[0].second;
  for (auto [s, e] : iv) {
    if (s > cur_e) {
      covered += cur_e - cur_s;
      cur_s = s;
      cur_e = e;
    } else {
      cur_e = std::max(cur_e, e);
    }
  }
  covered += cur_e - cur_s;
  FoldedProfile p = fold_chrome_trace(path);
  EXPECT_NEAR(p.total(), covered, 1e-6 * covered);
  auto m = stack_map(p);
  EXPECT_TRUE(m.count("CPU Functions;tid 1;train_step;forward;aten::addmm;aten::copy_"));
}

// A random tree of spans laid out in time with known self times; written as
// X events or B/E pairs in shuffled file order. The fold must give back each
// path's self time exactly.
TEST(ChromeTrace, SelfTimeArithmeticOnGeneratedTrees) {
  std::mt19937 rng(12345);
  for (int round = 0; round < 20; ++round) {
    nlohmann::json events = nlohmann::json::array();
    std::map<std::string, double> expect;
    int64_t clock = 1000;  // ns
    std::vector<std::string> names{"a", "b", "c", "d"};
    // Builds a span at the current clock: self time split into gaps around children.
    std::function<void(const std::string&, int)> build = [&](const std::string& path, int depth) {
      std::string name = names[rng() % names.size()];
      std::string me = path + ";" + name;
      int64_t start = clock;
      int children = depth < 5 ? int(rng() % 4) : 0;
      int64_t self = 0;
      for (int i = 0; i <= children; ++i) {
        // ns; the first gap is never 0 (no zero-length spans), later ones
        // sometimes are (a child ending exactly where the next one starts).
        int64_t gap = i == 0 ? 1 + int64_t(rng() % 5000) : (rng() % 4 == 0 ? 0 : int64_t(rng() % 5000));
        clock += gap;
        self += gap;
        if (i < children) build(me, depth + 1);
      }
      expect[me] += double(self) / 1000.0;
      bool as_x = rng() % 2;
      char ts[32], dur[32], end[32];
      std::snprintf(ts, sizeof ts, "%.3f", start / 1000.0);
      std::snprintf(dur, sizeof dur, "%.3f", (clock - start) / 1000.0);
      std::snprintf(end, sizeof end, "%.3f", clock / 1000.0);
      if (as_x) {
        events.push_back({{"name", name}, {"ph", "X"}, {"ts", nlohmann::json::parse(ts)},
                          {"dur", nlohmann::json::parse(dur)}, {"pid", 1}, {"tid", 2}});
      } else {
        events.push_back({{"name", name}, {"ph", "B"}, {"ts", nlohmann::json::parse(ts)}, {"pid", 1}, {"tid", 2}});
        events.push_back({{"ph", "E"}, {"ts", nlohmann::json::parse(end)}, {"pid", 1}, {"tid", 2}});
      }
    };
    for (int top = 0; top < 3; ++top) {
      build("pid 1;tid 2", 0);
      clock += int64_t(rng() % 3) * 1000;  // top-level spans with and without gaps
    }
    // Shuffle X events freely; B/E keep their relative order (a B/E stream is ordered).
    std::vector<nlohmann::json> xs, bes;
    for (auto& e : events) (e["ph"] == "X" ? xs : bes).push_back(e);
    std::shuffle(xs.begin(), xs.end(), rng);
    nlohmann::json shuffled = nlohmann::json::array();
    size_t xi = 0, bi = 0;
    while (xi < xs.size() || bi < bes.size())
      shuffled.push_back((bi == bes.size() || (xi < xs.size() && rng() % 2)) ? xs[xi++] : bes[bi++]);
    std::string path = temp_input("gen" + std::to_string(round) + ".json",
                                  nlohmann::json{{"traceEvents", shuffled}}.dump());
    ChromeTraceStats st;
    FoldedProfile p = fold_chrome_trace(path, {}, &st);
    EXPECT_EQ(st.overlaps, 0u);
    auto got = stack_map(p);
    ASSERT_EQ(got.size(), expect.size()) << "round " << round;
    for (const auto& [k, v] : expect) EXPECT_NEAR(got[k], v, 1e-9) << k;
  }
}

TEST(ChromeTrace, RootOptionsAndNanoseconds) {
  ChromeTraceOptions o;
  o.roots = ChromeTraceOptions::Roots::Thread;
  auto m = stack_map(fold_chrome_trace(testdata("traces/nested.json"), o));
  EXPECT_EQ(m["main;step;forward;matmul"], 20.5);
  EXPECT_EQ(m["stream 7;work"], 1.25);
  o.roots = ChromeTraceOptions::Roots::None;
  o.nanoseconds = true;
  FoldedProfile p = fold_chrome_trace(testdata("traces/nested.json"), o);
  m = stack_map(p);
  EXPECT_EQ(p.units, "ns");
  EXPECT_EQ(m["step;forward;matmul"], 20500);
  EXPECT_EQ(m["load;io"], 30000);
  EXPECT_EQ(p.total(), 131250);
}

TEST(ChromeTrace, OverlappingSpansAreSplitAtTheParentsEnd) {
  // b starts inside a but ends after it: [5,10] nests in a, [10,20] is top-level.
  std::string path = temp_input("overlap.json", R"([
    {"name":"a","ph":"X","ts":0,"dur":10,"pid":1,"tid":1},
    {"name":"b","ph":"X","ts":5,"dur":15,"pid":1,"tid":1},
    {"name":"c","ph":"X","ts":12,"dur":2,"pid":1,"tid":1}])");
  ChromeTraceStats st;
  FoldedProfile p = fold_chrome_trace(path, {}, &st);
  auto m = stack_map(p);
  EXPECT_EQ(m["pid 1;tid 1;a"], 5);
  EXPECT_EQ(m["pid 1;tid 1;a;b"], 5);
  EXPECT_EQ(m["pid 1;tid 1;b"], 8);
  EXPECT_EQ(m["pid 1;tid 1;b;c"], 2);
  EXPECT_EQ(p.total(), 20);  // the wall time covered
  EXPECT_EQ(st.overlaps, 1u);
  ASSERT_EQ(st.warnings().size(), 1u);
  EXPECT_NE(st.warnings()[0].find("'b'"), std::string::npos) << st.warnings()[0];
}

TEST(ChromeTrace, UnbalancedBeginEndIsCountedNotFatal) {
  std::string text = R"({"traceEvents":[
    {"ph":"E","ts":1,"pid":1,"tid":1},
    {"name":"ok","ph":"B","ts":2,"pid":1,"tid":1},
    {"ph":"E","ts":5,"pid":1,"tid":1},
    {"name":"never","ph":"B","ts":6,"pid":1,"tid":1},
    {"name":"x","ph":"X","ts":7,"dur":1,"pid":1,"tid":1}]})";
  std::string path = temp_input("unbalanced.json", text);
  ChromeTraceStats st;
  FoldedProfile p = fold_chrome_trace(path, {}, &st);
  EXPECT_EQ(st.unmatched_ends, 1u);
  EXPECT_EQ(st.unclosed_begins, 1u);
  auto m = stack_map(p);
  EXPECT_EQ(m["pid 1;tid 1;ok"], 3);
  EXPECT_EQ(m["pid 1;tid 1;x"], 1);
  EXPECT_EQ(m.size(), 2u);
  auto w = st.warnings();
  ASSERT_EQ(w.size(), 2u);
  std::string first_e = "byte " + std::to_string(text.find("{\"ph\":\"E\",\"ts\":1"));
  EXPECT_NE(w[0].find(first_e), std::string::npos) << w[0];
  EXPECT_NE(w[1].find("'never'"), std::string::npos) << w[1];
}

TEST(ChromeTrace, UnknownAndMissingPhasesAreCounted) {
  std::string path = temp_input("phases.json", R"([
    {"name":"z","ph":"Z","ts":1,"pid":1,"tid":1},
    {"name":"nophase","ts":1,"pid":1,"tid":1},
    {"name":"multi","ph":"XX","ts":1,"dur":1,"pid":1,"tid":1},
    {"name":"flow","ph":"s","ts":1,"pid":1,"tid":1,"id":3},
    {"name":"x","ph":"X","ts":1,"dur":2,"pid":1,"tid":1}])");
  ChromeTraceStats st;
  FoldedProfile p = fold_chrome_trace(path, {}, &st);
  EXPECT_EQ(st.unknown_phases, 3u);
  EXPECT_EQ(st.other_phases, 1u);
  EXPECT_EQ(p.total(), 2);
  EXPECT_NE(st.first_unknown_phase.find("'z'"), std::string::npos) << st.first_unknown_phase;
}

TEST(ChromeTrace, WrongTypesFailWithTheEventsByteOffsetOrAreSkippedWhenLenient) {
  const std::string good = R"({"name":"g","ph":"X","ts":1,"dur":1,"pid":1,"tid":1})";
  struct Case {
    std::string bad, message;
  } cases[] = {
      {R"({"name":"bad","ph":"X","ts":"12","dur":1,"pid":1,"tid":1})", "\"ts\" is a string, expected a number"},
      {R"({"name":"bad","ph":"X","ts":1,"pid":1,"tid":1})", "no \"dur\""},
      {R"({"name":"bad","ph":"X","ts":1,"dur":-4,"pid":1,"tid":1})", "negative \"dur\""},
      {R"({"name":"bad","ph":"X","ts":1,"dur":[1],"pid":1,"tid":1})", "\"dur\" is an object or array"},
      {R"({"name":"bad","ph":"B","ts":null,"pid":1,"tid":1})", "\"ts\" is null"},
      {R"({"name":"bad","ph":"X","ts":1,"dur":1,"pid":1.5,"tid":1})", "\"pid\" is not an integer"},
      {R"({"name":"bad","ph":"X","ts":1,"dur":1,"pid":1,"tid":true})", "\"tid\" is a boolean"},
      {R"({"name":{"x":1},"ph":"X","ts":1,"dur":1,"pid":1,"tid":1})", "\"name\" is an object or array"},
      {R"({"name":"bad","ph":7,"ts":1,"dur":1,"pid":1,"tid":1})", "\"ph\" is a number"},
      {R"({"name":"bad","ph":"X","ts":1e300,"dur":1,"pid":1,"tid":1})", "out of range"},
      {R"({"name":"bad","ph":"X","ts":1,"dur":99999999999999999999999,"pid":1,"tid":1})", "out of range"},
      {R"({"name":"bad","ph":"X","ts":1,"dur":18446744073709551615,"pid":1,"tid":1})", "out of range"},
      {R"({"name":"bad","ph":"X","ts":-9223372036854775808,"dur":1,"pid":1,"tid":1})", "out of range"},
      {R"("just a string")", "traceEvents element is a string"},
      {R"(42)", "traceEvents element is a number"},
  };
  int i = 0;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.bad);
    std::string prefix = "{\"traceEvents\": [" + good + ",\n ";
    std::string path = temp_input("types" + std::to_string(i++) + ".json", prefix + c.bad + "]}");
    std::string err = error_of(path);
    EXPECT_NE(err.find(c.message), std::string::npos) << err;
    if (c.bad[0] == '{') EXPECT_NE(err.find(": byte " + std::to_string(prefix.size()) + ": "), std::string::npos) << err;
    ChromeTraceOptions lenient;
    lenient.lenient = true;
    ChromeTraceStats st;
    FoldedProfile p = fold_chrome_trace(path, lenient, &st);
    EXPECT_EQ(st.bad_events, 1u);
    EXPECT_EQ(p.total(), 1);  // the good event
  }
}

TEST(ChromeTrace, MalformedJsonFailsWithByteOffset) {
  std::string full = read_file(testdata("traces/nested.json"));
  // Truncated anywhere inside the object format: always an error (never a crash).
  for (size_t cut : {size_t(1), size_t(20), full.size() / 3, full.size() / 2, full.size() - 3}) {
    std::string path = temp_input("cut" + std::to_string(cut) + ".json", full.substr(0, cut));
    std::string err = error_of(path);
    EXPECT_NE(err.find("malformed JSON"), std::string::npos) << cut << ": " << err;
    EXPECT_NE(err.find("byte " + std::to_string(cut)), std::string::npos) << err;
    EXPECT_NE(err.find("truncated"), std::string::npos) << err;
  }
  // Inside an event of the array format: an error too.
  std::string arr = R"([{"name":"a","ph":"X","ts":1,"dur":1,"pid":1,"tid":1},{"name":"b","ph")";
  EXPECT_NE(error_of(temp_input("cutarr.json", arr)).find("byte " + std::to_string(arr.size())), std::string::npos);
  struct Case {
    std::string text, message;
  } cases[] = {
      {R"([{"name":"a","ph":"X","ts":1e400,"dur":1}])", "number overflow"},
      {R"([{"name":"a" "ph":"X"}])", "malformed JSON"},
      {"[{\"name\":\"a\xff\",\"ph\":\"X\"}]", "malformed JSON"},
      {R"({"traceEvents": [] } trailing)", "malformed JSON"},
      {R"({"other": []})", "no \"traceEvents\" array"},
      {R"({"traceEvents": {"ph": "X"}})", "no \"traceEvents\" array"},
      {R"("a string")", "not a Chrome trace"},
      {"", "malformed JSON"},
      {std::string("\x7f" "ELF\x02\x01\x01\0\0\0", 10), "malformed JSON"},
  };
  int i = 0;
  for (const auto& c : cases) {
    std::string err = error_of(temp_input("bad" + std::to_string(i++) + ".json", c.text));
    EXPECT_NE(err.find(c.message), std::string::npos) << c.text << " -> " << err;
    EXPECT_NE(err.find(": byte "), std::string::npos) << err;
  }
}

TEST(ChromeTrace, DeepJsonNestingAndDeepSpanNesting) {
  // 200k nested arrays inside args: the SAX parser keeps its own stack.
  std::string deep = R"([{"name":"a","ph":"X","ts":0,"dur":5,"pid":1,"tid":1,"args":{"x":)" +
                     std::string(200000, '[') + std::string(200000, ']') + "}}]";
  FoldedProfile p = fold_chrome_trace(temp_input("deepjson.json", deep));
  EXPECT_EQ(p.total(), 5);
  // 50k spans each inside the previous: a 50k-frame stack.
  const int n = 50000;
  std::string t = "[";
  for (int i = 0; i < n; ++i)
    t += (i ? ",\n" : "") + std::string(R"({"name":"f)") + std::to_string(i % 7) + R"(","ph":"X","ts":)" +
         std::to_string(i) + R"(,"dur":)" + std::to_string(2 * (n - i)) + R"(,"pid":1,"tid":1})";
  t += "]";
  ChromeTraceStats st;
  FoldedProfile q = fold_chrome_trace(temp_input("deepspans.json", t), {}, &st);
  // Cut at 4096 frames (as the folded reader does); the time below stays with the deepest kept span.
  EXPECT_EQ(q.total(), 2 * n);
  EXPECT_EQ(st.spans, 4096u - 2);
  EXPECT_EQ(st.too_deep, uint64_t(n) - (4096 - 2));
  size_t max_depth = 0;
  q.for_each_stack([&](const std::vector<FrameId>& f, double) { max_depth = std::max(max_depth, f.size()); });
  EXPECT_EQ(max_depth, 4096u);
  ASSERT_EQ(st.warnings().size(), 1u);
  EXPECT_NE(st.warnings()[0].find("deeper than 4096"), std::string::npos);
}

TEST(ChromeTrace, GzipInputAndEmptyTrace) {
  std::string dir = temp_dir();
  ASSERT_EQ(run_shell("gzip -c " + shell_quote(testdata("traces/nested.json")) + " > " + dir + "/t.json.gz").status, 0);
  EXPECT_EQ(folded_text(fold_chrome_trace(dir + "/t.json.gz")), read_file(testdata("traces/nested.folded")));
  EXPECT_EQ(fold_chrome_trace(temp_input("empty.json", R"({"traceEvents": []})")).total(), 0);
}

// Random byte damage of the fixtures: either a fold or an InputError, never
// a crash (run under FGTOOL_SANITIZE=ON for the memory side).
TEST(ChromeTrace, RandomMutationsGiveErrorsNotCrashes) {
  std::mt19937 rng(777);
  const std::string sources[] = {read_file(testdata("traces/nested.json")),
                                 read_file(testdata("traces/begin_end_open_array.json"))};
  const char alphabet[] = "{}[]\",:0123456789.-eE XBEMph\\\xff";
  int folded = 0, errors = 0;
  for (int i = 0; i < 600; ++i) {
    std::string t = sources[i % 2];
    int edits = 1 + int(rng() % 4);
    for (int k = 0; k < edits; ++k) {
      size_t at = rng() % t.size();
      switch (rng() % 3) {
        case 0: t[at] = alphabet[rng() % (sizeof alphabet - 1)]; break;
        case 1: t.erase(at, 1 + rng() % 8); break;
        default: t.insert(at, 1, alphabet[rng() % (sizeof alphabet - 1)]);
      }
      if (t.empty()) t = "[";
    }
    std::string path = temp_input("mut.json", t);
    ChromeTraceOptions o;
    o.lenient = i % 3 == 0;
    try {
      FoldedProfile p = fold_chrome_trace(path, o);
      EXPECT_GE(p.total(), 0);
      ++folded;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(": byte "), std::string::npos) << e.what();
      ++errors;
    }
  }
  EXPECT_GT(folded, 0);
  EXPECT_GT(errors, 0);
}

TEST(ChromeTrace, Detection) {
  EXPECT_TRUE(looks_like_chrome_trace(R"({"traceEvents": [)"));
  EXPECT_TRUE(looks_like_chrome_trace("\xEF\xBB\xBF\n  [\n{\"name\": \"x\", \"ph\": \"X\""));
  EXPECT_TRUE(looks_like_chrome_trace(read_file(testdata("traces/mlp_train_trace.json")).substr(0, 4096)));
  EXPECT_FALSE(looks_like_chrome_trace("main;foo;bar 12\n"));
  EXPECT_FALSE(looks_like_chrome_trace(R"({"frames": [1, 2]})"));
  EXPECT_FALSE(looks_like_chrome_trace("x {\"ph\": \"X\"}"));
  EXPECT_FALSE(looks_like_chrome_trace(""));
}

}  // namespace
}  // namespace fg::test
