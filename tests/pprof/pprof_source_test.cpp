// What `fgtool export -f pprof` writes beyond stacks and labels: DWARF file
// names, start lines and line numbers (testdata/pprof/lines.data, a -g build
// of tests/pprof/workloads/pprof_lines.c), time_nanos from perf's CLOCK_DATA
// checked against perf's own reading of it, duration_nanos against the
// sample times perf script prints, and the gzip container (libdeflate
// members: deterministic, damage reported with its byte offset). Expected
// lines come from the workload's source text, not from fgtool.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include <protozero/pbf_reader.hpp>

#include "diagnostics/input_error.h"
#include "folded/folded_profile.h"
#include "pprof/pprof_gzip.h"
#include "pprof/pprof_reader.h"
#include "pprof/profile_fields.h"
#include "pprof_cli_support.h"
#include "test_support.h"

namespace fg {
namespace {

namespace pf = pprof_fields;
using test::fgtool_bin;
using test::read_file;
using test::run_shell;
using test::shell_quote;
using test::testdata;

using pprof_test::fg_cmd;
using pprof_test::run_ok;

// The parts of a Profile message these tests look at, decoded here with
// protozero (independently of fgtool's reader, which folds and drops them).
struct DecodedProfile {
  std::vector<std::string> strings;
  struct Function {
    std::string name, filename;
    int64_t start_line = 0;
  };
  std::map<uint64_t, Function> functions;
  struct Line {
    uint64_t function = 0;
    int64_t line = 0;
  };
  std::map<uint64_t, std::vector<Line>> locations;  // lines innermost first
  std::map<uint64_t, uint64_t> addresses;           // location id -> address
  struct Mapping {
    std::string filename;
    bool has_filenames = false, has_line_numbers = false;
  };
  std::vector<Mapping> mappings;
  int64_t time_nanos = 0, duration_nanos = 0;
};

DecodedProfile decode(const std::string& file_bytes) {
  InflatedBytes inflated;
  std::string_view pb = file_bytes;
  if (is_gzip(pb)) {
    inflated = gunzip(pb, "test", uint64_t(1) << 30);
    pb = inflated.view();
  }
  DecodedProfile d;
  struct RawFunction {
    uint64_t id;
    int64_t name, filename, start_line;
  };
  std::vector<RawFunction> functions;
  struct RawMapping {
    int64_t filename;
    bool files, lines;
  };
  std::vector<RawMapping> mappings;
  protozero::pbf_reader top(pb.data(), pb.size());
  while (top.next()) {
    switch (pf::Profile(top.tag())) {
      case pf::Profile::string_table: d.strings.emplace_back(top.get_string()); break;
      case pf::Profile::time_nanos: d.time_nanos = top.get_int64(); break;
      case pf::Profile::duration_nanos: d.duration_nanos = top.get_int64(); break;
      case pf::Profile::function: {
        protozero::pbf_reader m = top.get_message();
        RawFunction f{0, 0, 0, 0};
        while (m.next()) {
          switch (pf::Function(m.tag())) {
            case pf::Function::id: f.id = m.get_uint64(); break;
            case pf::Function::name: f.name = m.get_int64(); break;
            case pf::Function::filename: f.filename = m.get_int64(); break;
            case pf::Function::start_line: f.start_line = m.get_int64(); break;
            default: m.skip();
          }
        }
        functions.push_back(f);
        break;
      }
      case pf::Profile::location: {
        protozero::pbf_reader m = top.get_message();
        uint64_t id = 0, address = 0;
        std::vector<DecodedProfile::Line> lines;
        while (m.next()) {
          if (m.tag() == uint32_t(pf::Location::address)) {
            address = m.get_uint64();
          } else if (m.tag() == uint32_t(pf::Location::id)) {
            id = m.get_uint64();
          } else if (m.tag() == uint32_t(pf::Location::line)) {
            protozero::pbf_reader l = m.get_message();
            DecodedProfile::Line line;
            while (l.next()) {
              if (l.tag() == uint32_t(pf::Line::function_id)) line.function = l.get_uint64();
              else if (l.tag() == uint32_t(pf::Line::line)) line.line = l.get_int64();
              else l.skip();
            }
            lines.push_back(line);
          } else {
            m.skip();
          }
        }
        d.locations[id] = lines;
        d.addresses[id] = address;
        break;
      }
      case pf::Profile::mapping: {
        protozero::pbf_reader m = top.get_message();
        RawMapping r{0, false, false};
        while (m.next()) {
          switch (pf::Mapping(m.tag())) {
            case pf::Mapping::filename: r.filename = m.get_int64(); break;
            case pf::Mapping::has_filenames: r.files = m.get_bool(); break;
            case pf::Mapping::has_line_numbers: r.lines = m.get_bool(); break;
            default: m.skip();
          }
        }
        mappings.push_back(r);
        break;
      }
      default: top.skip();
    }
  }
  auto str = [&](int64_t i) { return i >= 0 && size_t(i) < d.strings.size() ? d.strings[size_t(i)] : std::string("?"); };
  for (const RawFunction& f : functions) d.functions[f.id] = {str(f.name), str(f.filename), f.start_line};
  for (const RawMapping& m : mappings) d.mappings.push_back({str(m.filename), m.files, m.lines});
  return d;
}

// Line numbers in the workload's source: the first line containing `text`,
// and the last line of the function that starts there (its closing brace).
struct SourceText {
  std::vector<std::string> lines;
  SourceText() {
    std::istringstream in(read_file(test::source_dir() + "/tests/pprof/workloads/pprof_lines.c"));
    for (std::string l; std::getline(in, l);) lines.push_back(l);
  }
  int64_t line_of(const std::string& text) const {
    for (size_t i = 0; i < lines.size(); ++i)
      if (lines[i].find(text) != std::string::npos) return int64_t(i + 1);
    ADD_FAILURE() << "no line with '" << text << "' in pprof_lines.c";
    return -1;
  }
  int64_t end_of_function(int64_t start) const {
    for (size_t i = size_t(start); i < lines.size(); ++i)
      if (lines[i].rfind("}", 0) == 0) return int64_t(i + 1);
    return -1;
  }
};

std::string export_lines(const std::string& extra) {
  const std::string out = test::temp_dir() + "/lines.pb.gz";
  run_ok(fg_cmd("export -f pprof " + extra + " --symfs " + shell_quote(testdata("pprof/symfs")) + " " +
                shell_quote(testdata("pprof/lines.data")) + " -o " + shell_quote(out)));
  return out;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

TEST(PprofSource, FunctionsCarryFileAndStartLineFromDwarf) {
  const SourceText src;
  const DecodedProfile p = decode(read_file(export_lines("--inline")));
  const std::map<std::string, int64_t> declared = {
      {"mix_step", src.line_of("unsigned long mix_step(")},
      {"mix_rows", src.line_of("unsigned long mix_rows(")},
      {"sum_squares", src.line_of("unsigned long sum_squares(")},
      {"main", src.line_of("int main(")}};
  std::set<std::string> seen;
  for (const auto& [id, f] : p.functions) {
    auto it = declared.find(f.name);
    if (it == declared.end()) continue;
    seen.insert(f.name);
    EXPECT_TRUE(ends_with(f.filename, "/pprof_lines.c")) << f.name << " in '" << f.filename << "'";
    EXPECT_EQ(f.start_line, it->second) << f.name;
  }
  EXPECT_EQ(seen.size(), declared.size());
  bool mapped = false;
  for (const auto& m : p.mappings)
    if (ends_with(m.filename, "/pprof_lines")) {
      mapped = true;
      EXPECT_TRUE(m.has_filenames && m.has_line_numbers);
    }
  EXPECT_TRUE(mapped);
}

TEST(PprofSource, LinesOfLeavesCallersAndInlinedCalls) {
  const SourceText src;
  const int64_t call_mix_rows = src.line_of("seed = mix_rows("), call_sum = src.line_of("sink += sum_squares(");
  const int64_t inline_call = src.line_of("x = mix_step(");
  const int64_t step_start = src.line_of("unsigned long mix_step("), step_end = src.end_of_function(step_start);
  const int64_t sum_start = src.line_of("unsigned long sum_squares("), sum_end = src.end_of_function(sum_start);
  for (const char* mode : {"--inline", ""}) {
    SCOPED_TRACE(std::string("export ") + mode);
    const DecodedProfile p = decode(read_file(export_lines(mode)));
    std::set<int64_t> main_lines;
    size_t inlined = 0, mix_rows_at_call = 0, sum_leaf = 0;
    for (const auto& [id, lines] : p.locations) {
      std::vector<std::string> names;
      for (const auto& l : lines) names.push_back(p.functions.at(l.function).name);
      if (names == std::vector<std::string>{"main"}) main_lines.insert(lines[0].line);
      if (names == std::vector<std::string>{"mix_step", "mix_rows"}) {
        ++inlined;
        EXPECT_GT(lines[0].line, step_start);  // inside mix_step's body
        EXPECT_LT(lines[0].line, step_end);
        EXPECT_EQ(lines[1].line, inline_call);  // where it was inlined
      }
      if (names == std::vector<std::string>{"mix_rows"} && lines[0].line == inline_call) ++mix_rows_at_call;
      if (names == std::vector<std::string>{"sum_squares"}) {
        ++sum_leaf;
        EXPECT_GT(lines[0].line, sum_start);
        EXPECT_LT(lines[0].line, sum_end);
      }
    }
    // Callers' return addresses are looked up at address - 1: the call's line.
    EXPECT_EQ(main_lines, (std::set<int64_t>{call_mix_rows, call_sum}));
    EXPECT_GT(sum_leaf, 0u);
    if (std::string(mode) == "--inline") {
      EXPECT_GT(inlined, 0u);
    } else {
      EXPECT_EQ(inlined, 0u);  // the function alone, at the inlined call's line
      EXPECT_GT(mix_rows_at_call, 0u);
    }
  }
}

// Empty when `go tool pprof` runs here, else why not.
std::string go_missing() {
  test::CommandResult r = run_shell("go tool pprof -h 2>&1 | head -1");
  if (r.status != 0 || r.out.find("usage") == std::string::npos)
    return "go tool pprof is not installed (scripts/setup.sh --tests installs golang-go)";
  return {};
}

TEST(PprofSource, GoPprofListsTheSourceLines) {
  if (!go_missing().empty()) GTEST_SKIP() << go_missing();
  const std::string pb = export_lines("--inline");
  // -list reads the source: the recorded path /tmp/fgtool-pprof-lines is
  // mapped to the workload in this checkout.
  const std::string out = run_ok(
      "HOME=" + shell_quote(test::temp_dir()) + " PPROF_BINARY_PATH=/nonexistent go tool pprof -symbolize=none" +
      " -source_path " + shell_quote(test::source_dir() + "/tests/pprof/workloads") +
      " -trim_path /tmp/fgtool-pprof-lines -list '^(main|mix_rows|mix_step)$' " + shell_quote(pb) + " 2>&1");
  const SourceText src;
  // A line with samples: "  FLAT  CUM  LINE: source text".
  auto has_line = [&](int64_t line) {
    std::regex re("\\s" + std::to_string(line) + ":" + std::regex_replace(src.lines[size_t(line - 1)],
                                                                           std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)"));
    return std::regex_search(out, re);
  };
  EXPECT_NE(out.find("ROUTINE ======================== main in pprof_lines.c"), std::string::npos) << out;
  EXPECT_NE(out.find("ROUTINE ======================== mix_rows in pprof_lines.c"), std::string::npos) << out;
  EXPECT_NE(out.find("ROUTINE ======================== mix_step in pprof_lines.c"), std::string::npos) << out;
  EXPECT_TRUE(has_line(src.line_of("seed = mix_rows("))) << out;
  EXPECT_TRUE(has_line(src.line_of("sink += sum_squares("))) << out;
  EXPECT_TRUE(has_line(src.line_of("x = mix_step("))) << out;
  EXPECT_EQ(out.find("could not find file /tmp"), std::string::npos) << out;
}

// perf's own reading of the recording's clock: "# reference time: DATE =
// SECONDS.MICROS (TOD) = SECONDS.NANOS (monotonic)" (perf report -I), and the
// sample times (perf script). Empty when perf cannot read it here.
struct PerfClock {
  double tod_seconds = 0;
  int64_t tod_micros = 0, clock_ref_ns = 0, first_ns = 0, last_ns = 0;
};

int64_t seconds_text_to_ns(const std::string& text) {
  size_t dot = text.find('.');
  std::string frac = text.substr(dot + 1);
  while (frac.size() < 9) frac += '0';
  return std::stoll(text.substr(0, dot)) * 1000000000 + std::stoll(frac.substr(0, 9));
}

std::optional<PerfClock> perf_clock(const std::string& data) {
  test::CommandResult h = run_shell("perf report --header-only -I -i " + shell_quote(data) + " 2>/dev/null");
  std::smatch m;
  std::regex ref(R"(reference time: .* = (\d+)\.(\d{6}) \(TOD\) = (\d+\.\d+) \(monotonic\))");
  if (h.status != 0 || !std::regex_search(h.out, m, ref)) return std::nullopt;
  PerfClock c;
  c.tod_micros = std::stoll(m[1]) * 1000000 + std::stoll(m[2]);
  c.clock_ref_ns = seconds_text_to_ns(m[3]);
  test::CommandResult s = run_shell("perf script -F time --ns -i " + shell_quote(data) + " 2>/dev/null");
  std::regex t(R"((\d+\.\d{9}):)");
  for (std::sregex_iterator it(s.out.begin(), s.out.end(), t), end; it != end; ++it) {
    int64_t ns = seconds_text_to_ns((*it)[1]);
    if (!c.first_ns || ns < c.first_ns) c.first_ns = ns;
    c.last_ns = std::max(c.last_ns, ns);
  }
  if (!c.first_ns) return std::nullopt;
  return c;
}

TEST(PprofSource, TimeFromClockDataAndDuration) {
  const std::string data = testdata("pprof/lines.data");
  std::optional<PerfClock> c = perf_clock(data);
  if (!c) GTEST_SKIP() << "perf cannot read " << data << " here";
  const DecodedProfile p = decode(read_file(export_lines("")));
  // perf prints the reference wall time to the microsecond.
  const int64_t expect = c->tod_micros * 1000 + (c->first_ns - c->clock_ref_ns);
  EXPECT_LE(std::llabs(p.time_nanos - expect), 1000) << p.time_nanos << " vs " << expect;
  EXPECT_EQ(p.duration_nanos, c->last_ns - c->first_ns);
}

TEST(PprofSource, NoTimeWithoutClockData) {
  // Recorded without -k: perf's clock counts from boot; nothing maps it to wall time.
  const std::string out = test::temp_dir() + "/fp.pb";
  run_ok(fg_cmd("export -f pprof --uncompressed --symfs " + shell_quote(testdata("fold/symfs")) + " " +
                shell_quote(testdata("fold/fp_static.data")) + " -o " + shell_quote(out)));
  const DecodedProfile p = decode(read_file(out));
  EXPECT_EQ(p.time_nanos, 0);
  EXPECT_GT(p.duration_nanos, 0);
}

TEST(PprofGzip, DeterministicMembersThatGzipReads) {
  const std::string a = read_file(export_lines("--inline")), b = read_file(export_lines("--inline"));
  EXPECT_EQ(a, b);
  // Over 8 MiB: several members, on two threads, still one stream.
  std::string big;
  for (uint64_t i = 0; big.size() < (size_t(10) << 20); ++i) big += "line " + std::to_string(i * 7919 % 100003) + "\n";
  const std::string gz = gzip_bytes(big, 1);
  EXPECT_EQ(gz, gzip_bytes(big, 1));
  EXPECT_EQ(gunzip(gz, "big", uint64_t(1) << 30).view(), big);
  const std::string path = test::temp_dir() + "/big.gz";
  test::write_file(path, gz);
  // gzip(1) reads the members as one stream; zlib (reading a file's head) too.
  test::write_file(path + ".txt", big);
  EXPECT_EQ(run_ok("gzip -dc " + shell_quote(path) + " | cmp - " + shell_quote(path + ".txt") + " && echo same"), "same\n");
  EXPECT_EQ(gunzip_prefix(gz, (uint64_t(9) << 20)), big.substr(0, size_t(9) << 20));
}

TEST(PprofGzip, DamageIsReportedWithItsOffset) {
  std::string big;
  for (uint64_t i = 0; big.size() < (size_t(12) << 20); ++i) big += std::to_string(i * 2654435761u % 1000003) + ";";
  std::string gz = gzip_bytes(big, 1);
  // Damage inside the second member's deflate data: its header is found by
  // the magic after the first member's end.
  size_t second = gz.find("\x1f\x8b\x08", 10);
  ASSERT_NE(second, std::string::npos);
  gz[second + 40] = char(gz[second + 40] ^ 0x55);
  gz[second + 41] = char(gz[second + 41] ^ 0xff);
  try {
    (void)gunzip(gz, "bad.gz", uint64_t(1) << 30);
    ADD_FAILURE() << "damage not noticed";
  } catch (const InputError& e) {
    std::string msg = e.what();
    std::smatch m;
    ASSERT_TRUE(std::regex_search(msg, m, std::regex(R"(^bad\.gz: byte (\d+): (gzip: .*|gzip stream is truncated))"))) << msg;
    EXPECT_GE(std::stoull(m[1]), second) << msg;  // in the damaged member, not before it
  }
}

TEST(PprofGzip, DamagedOrCutStreamsAreErrorsNotCrashes) {
  // Every cut and a spread of flipped bytes of a small profile's gzip: each
  // either reads (a flip in the header's unused bytes) or is an InputError.
  const std::string gz = read_file(testdata("pprof/fp_static.pb.gz"));
  size_t errors = 0;
  auto attempt = [&](const std::string& bytes) {
    FoldedProfile p;
    try {
      read_pprof_data(bytes, "cut.pb.gz", p);
    } catch (const InputError& e) {
      ++errors;
      EXPECT_EQ(std::string(e.what()).rfind("cut.pb.gz", 0), 0u) << e.what();
    } catch (const UsageError&) {
    }
  };
  for (size_t n = 2; n < gz.size(); n += 7) attempt(gz.substr(0, n));
  for (size_t i = 10; i < gz.size(); i += 13) {
    std::string bad = gz;
    bad[i] = char(bad[i] ^ (1 + i % 251));
    attempt(bad);
  }
  EXPECT_GT(errors, gz.size() / 7 / 2);
}

std::vector<std::string> sorted_lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) out.push_back(l);
  std::sort(out.begin(), out.end());
  return out;
}

TEST(PprofMerge, PerfDataAndPprofInputsKeepAddresses) {
  const std::string dir = test::temp_dir();
  const std::string data = shell_quote(testdata("pprof/lines.data"));
  const std::string pb = shell_quote(testdata("pprof/fp_static.pb.gz"));
  const std::string merged = dir + "/m.pb.gz";
  run_ok(fg_cmd("merge --label host a=" + data + " b=" + pb + " -o " + shell_quote(merged)));
  const DecodedProfile p = decode(read_file(merged));
  std::set<std::string> objects;
  for (const auto& m : p.mappings) objects.insert(m.filename.substr(m.filename.rfind('/') + 1));
  EXPECT_TRUE(objects.count("pprof_lines")) << "the perf.data's own mapping";
  EXPECT_TRUE(objects.count("fold_calls_static")) << "the pprof input's mapping";
  std::set<uint64_t> addresses;
  for (const auto& [id, a] : p.addresses)
    if (a) addresses.insert(a);
  // Addresses survive: every address of each input's own pprof is there.
  const DecodedProfile alone = decode(read_file(export_lines("")));
  const DecodedProfile other = decode(read_file(testdata("pprof/fp_static.pb.gz")));
  size_t expected = 0;
  for (const DecodedProfile* in : {&alone, &other})
    for (const auto& [id, a] : in->addresses)
      if (a) {
        ++expected;
        EXPECT_TRUE(addresses.count(a)) << std::hex << a;
      }
  EXPECT_GT(expected, 10u);
  // Folded, it is the function-level merge of the same inputs; each host's
  // samples are that input alone.
  EXPECT_EQ(sorted_lines(run_ok(fg_cmd("merge " + shell_quote(merged)))),
            sorted_lines(run_ok(fg_cmd("merge " + data + " " + pb))));
  EXPECT_EQ(run_ok(fg_cmd("merge --tag host=b " + shell_quote(merged))), run_ok(fg_cmd("merge " + pb)));
  EXPECT_EQ(sorted_lines(run_ok(fg_cmd("merge --tag host=a " + shell_quote(merged)))),
            sorted_lines(run_ok(fg_cmd("merge " + data))));
  if (go_missing().empty()) {
    const std::string raw = run_ok("HOME=" + shell_quote(dir) + " PPROF_BINARY_PATH=/nonexistent go tool pprof " +
                                   "-symbolize=none -raw " + shell_quote(merged) + " 2>&1");
    EXPECT_NE(raw.find("host:[a]"), std::string::npos) << raw;
    EXPECT_NE(raw.find("host:[b]"), std::string::npos) << raw;
    EXPECT_NE(raw.find("/tmp/fgtool-pprof-lines/pprof_lines 7fed667eada23bd05daba1a460f1db55254a288e"),
              std::string::npos) << raw;  // the perf.data's mapping with its build-id
  }
  // Inputs whose sample types differ cannot be summed column by column:
  // merged at function level instead (no addresses), with a warning.
  const std::string off = dir + "/off.pb";
  run_ok(fg_cmd("export -f pprof --uncompressed --off-cpu " + shell_quote(testdata("perf/sched.data")) + " -o " +
                shell_quote(off)));
  const std::string mixed = dir + "/x.pb.gz";
  test::CommandResult r = run_shell(fg_cmd("merge " + data + " " + shell_quote(off) + " -o " + shell_quote(mixed)));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("merged at function level"), std::string::npos) << r.err;
  for (const auto& [id, a] : decode(read_file(mixed)).addresses) EXPECT_EQ(a, 0u);
  // A damaged pprof input is a one-line error naming it.
  const std::string raw = read_file(testdata("pprof/fp_static.pb"));
  const std::string cut = dir + "/cut.pb";
  test::write_file(cut, raw.substr(0, raw.size() / 2));
  r = run_shell(fg_cmd("merge " + shell_quote(cut) + " " + pb + " -o " + shell_quote(dir + "/y.pb.gz")));
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find(cut + ": byte "), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

}  // namespace
}  // namespace fg
