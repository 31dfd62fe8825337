// fgtool's pprof output checked by `go tool pprof` itself (Debian golang-go;
// installed by `scripts/setup.sh --tests`): every profile fgtool writes is
// read with -raw and -top, the stacks, totals, sample counts and labels go
// sees are compared with fgtool's own folded output and category report, and
// what go writes (-proto) reads back in fgtool. Also: perf.data -> pprof ->
// folded equals perf.data -> folded byte for byte, and `fgtool merge`.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "pprof_cli_support.h"
#include "test_support.h"

namespace fg {
namespace {

using test::fgtool_bin;
using test::read_file;
using test::run_shell;
using test::shell_quote;
using test::testdata;

using pprof_test::fg_cmd;
using pprof_test::run_ok;

// Empty when `go tool pprof` runs here, else why not.
const std::string& go_missing() {
  static const std::string reason = [] {
    test::CommandResult r = run_shell("go tool pprof -h 2>&1 | head -1");
    if (r.status != 0 || r.out.find("usage") == std::string::npos)
      return std::string("go tool pprof is not installed (scripts/setup.sh --tests installs golang-go)");
    return std::string();
  }();
  return reason;
}

std::string go_pprof(const std::string& args) {
  // No symbolisation (the profile carries its names; -symbolize=none also
  // keeps C++ names as written) and no network, no binaries looked up.
  return run_ok("HOME=" + shell_quote(test::temp_dir()) + " PPROF_BINARY_PATH=/nonexistent go tool pprof -symbolize=none " + args);
}

// What `go tool pprof -raw` printed, parsed.
struct RawProfile {
  std::vector<std::string> sample_types;
  struct Sample {
    std::vector<int64_t> values;
    std::vector<uint64_t> locations;
    std::map<std::string, std::string> labels;  // first value per key
  };
  std::vector<Sample> samples;
  std::map<uint64_t, std::vector<std::string>> location_names;  // innermost first
  std::map<uint64_t, std::string> location_address;
  std::vector<std::string> mappings;  // the Mappings section's lines

  // Folded stacks (root first, "a;b;c") with value column `column` summed.
  std::map<std::string, double> folded(size_t column) const {
    std::map<std::string, double> out;
    for (const Sample& s : samples) {
      std::vector<std::string> frames;
      for (size_t i = s.locations.size(); i-- > 0;) {
        const auto& names = location_names.at(s.locations[i]);
        for (size_t k = names.size(); k-- > 0;) frames.push_back(names[k]);
      }
      std::string stack;
      for (const auto& f : frames) stack += (stack.empty() ? "" : ";") + f;
      out[stack] += double(s.values.at(column));
    }
    return out;
  }
  int64_t total(size_t column) const {
    int64_t t = 0;
    for (const Sample& s : samples) t += s.values.at(column);
    return t;
  }
};

void parse_labels(const std::string& line, std::map<std::string, std::string>& labels) {
  static const std::regex label_re(R"(([^\s:\[\]]+):\[([^\]]*)\])");
  for (std::sregex_iterator it(line.begin(), line.end(), label_re), end; it != end; ++it) {
    std::string v = (*it)[2];
    // Several values print space-separated; fgtool writes one per key.
    labels.emplace((*it)[1], v);
  }
}

RawProfile parse_raw(const std::string& text) {
  RawProfile p;
  std::istringstream in(text);
  std::string line;
  enum { head, samples, locations, mappings } section = head;
  static const std::regex sample_re(R"(^((?:\s+-?\d+)+): ?(.*)$)");
  static const std::regex loc_re(R"(^\s*(\d+): (0x[0-9a-f]+) (?:M=\d+ )?(?:\[F\] )?(.*)$)");
  static const std::regex line_re(R"(^(.*) (\S*):(-?\d+) s=(\d+)(?:\((.*)\))?$)");
  uint64_t last_loc = 0;
  bool types_next = false;
  while (std::getline(in, line)) {
    if (line == "Samples:") {
      section = samples;
      types_next = true;
      continue;
    }
    if (line == "Locations") {
      section = locations;
      continue;
    }
    if (line == "Mappings") {
      section = mappings;
      continue;
    }
    std::smatch m;
    if (section == samples) {
      if (types_next) {
        std::istringstream ts(line);
        std::string t;
        while (ts >> t) p.sample_types.push_back(t);
        types_next = false;
      } else if (std::regex_match(line, m, sample_re)) {
        RawProfile::Sample s;
        std::istringstream vs(m[1].str()), ls(m[2].str());
        int64_t v;
        while (vs >> v) s.values.push_back(v);
        uint64_t id;
        while (ls >> id) s.locations.push_back(id);
        p.samples.push_back(s);
      } else if (!p.samples.empty()) {
        parse_labels(line, p.samples.back().labels);
      }
    } else if (section == locations) {
      std::string rest;
      if (std::regex_match(line, m, loc_re)) {
        last_loc = std::stoull(m[1]);
        p.location_address[last_loc] = m[2];
        rest = m[3];
      } else {
        rest = line.substr(line.find_first_not_of(' '));
      }
      std::smatch lm;
      if (!rest.empty() && std::regex_match(rest, lm, line_re)) p.location_names[last_loc].push_back(lm[1]);
      else p.location_names[last_loc];
    } else if (section == mappings && !line.empty()) {
      p.mappings.push_back(line);
    }
  }
  return p;
}

std::map<std::string, double> parse_folded(const std::string& text) {
  std::map<std::string, double> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    size_t sp = line.rfind(' ');
    if (sp == std::string::npos) continue;
    out[line.substr(0, sp)] += std::stod(line.substr(sp + 1));
  }
  return out;
}

double folded_total(const std::string& text) {
  double t = 0;
  for (const auto& kv : parse_folded(text)) t += kv.second;
  return t;
}

struct Fixture {
  std::string file, options;
};
std::vector<Fixture> perf_fixtures() {
  std::string symfs = "--symfs " + shell_quote(testdata("fold/symfs")) + " ";
  return {{testdata("fold/fp_static.data"), symfs},
          {testdata("fold/dwarf_static.data"), symfs},
          {testdata("fold/fp_static.data"), symfs + "--tid --inline"},
          {testdata("perf/fp.data"), ""},
          {testdata("perf/dwarf.data"), "--kernel"},
          {testdata("perf/zstd.data"), ""},
          // 12 processes mapping the same objects, 152 raw stacks: the
          // collector's paths for another process's mapping of an object and
          // several batches of raw stacks.
          {testdata("pprof/multi_process.data"), "--symfs " + shell_quote(testdata("pprof/symfs")) + " "},
          {testdata("pprof/multi_process.data"), "--tid --symfs " + shell_quote(testdata("pprof/symfs")) + " "}};
}

TEST(PprofCli, PerfDataToPprofToFoldedIsByteForByte) {
  std::string dir = test::temp_dir();
  for (const Fixture& f : perf_fixtures()) {
    SCOPED_TRACE(f.file + " " + f.options);
    std::string folded = run_ok(fg_cmd("fold " + f.options + " " + shell_quote(f.file)));
    ASSERT_FALSE(folded.empty());
    std::string pb = dir + "/p.pb.gz";
    run_ok(fg_cmd("export -f pprof " + f.options + " " + shell_quote(f.file) + " -o " + pb));
    EXPECT_EQ(run_ok(fg_cmd("merge " + pb)), folded);
    // And the bytes are deterministic.
    std::string again = dir + "/q.pb.gz";
    run_ok(fg_cmd("export -f pprof " + f.options + " " + shell_quote(f.file) + " -o " + again));
    EXPECT_EQ(read_file(pb), read_file(again));
  }
}

// --granularity functions writes the fold itself (a location per function,
// no addresses or mappings): it reads back as `fgtool fold` writes it, with
// the fold's options applied, and is smaller than the address-level export.
TEST(PprofCli, FunctionGranularityIsTheFold) {
  std::string dir = test::temp_dir();
  for (const Fixture& f : perf_fixtures()) {
    SCOPED_TRACE(f.file + " " + f.options);
    std::string folded = run_ok(fg_cmd("fold " + f.options + " " + shell_quote(f.file)));
    std::string pb = dir + "/f.pb.gz", addresses = dir + "/a.pb.gz";
    run_ok(fg_cmd("export -f pprof --granularity functions " + f.options + " " + shell_quote(f.file) + " -o " + pb));
    EXPECT_EQ(run_ok(fg_cmd("merge " + pb)), folded);
    run_ok(fg_cmd("export -f pprof --uncompressed --granularity functions " + f.options + " " + shell_quote(f.file) +
                  " -o " + pb));
    run_ok(fg_cmd("export -f pprof --uncompressed " + f.options + " " + shell_quote(f.file) + " -o " + addresses));
    EXPECT_LT(read_file(pb).size(), read_file(addresses).size());
  }
  auto bad = run_shell(fg_cmd("export -f pprof --granularity lines " + shell_quote(testdata("perf/fp.data")) +
                              " -o " + dir + "/x.pb.gz"));
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.err.find("--granularity 'lines'"), std::string::npos) << bad.err;
  bad = run_shell(fg_cmd("export -f pprof --addresses thread " + shell_quote(testdata("perf/fp.data")) + " -o " + dir +
                         "/x.pb.gz"));
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.err.find("--addresses 'thread': expected object or process"), std::string::npos) << bad.err;
}

TEST(PprofCli, OffCpuAndWallRoundTrip) {
  std::string dir = test::temp_dir();
  for (const char* view : {"--off-cpu", "--wall"}) {
    SCOPED_TRACE(view);
    std::string in = shell_quote(testdata("perf/sched.data"));
    std::string folded = run_ok(fg_cmd(std::string("fold ") + view + " " + in));
    ASSERT_FALSE(folded.empty());
    std::string pb = dir + "/off.pb.gz";
    run_ok(fg_cmd(std::string("export -f pprof ") + view + " " + in + " -o " + pb));
    EXPECT_EQ(run_ok(fg_cmd("merge " + pb)), folded);
    if (!go_missing().empty()) continue;
    RawProfile raw = parse_raw(go_pprof("-raw " + pb));
    ASSERT_EQ(raw.sample_types.size(), 1u);
    EXPECT_EQ(raw.sample_types[0], std::string(view) == "--wall" ? "wall/nanoseconds" : "off_cpu/nanoseconds");
  }
}

TEST(PprofCli, GoPprofReadsPerfDataExportsAndAgrees) {
  if (!go_missing().empty()) GTEST_SKIP() << go_missing();
  std::string dir = test::temp_dir();
  for (const Fixture& f : perf_fixtures()) {
    SCOPED_TRACE(f.file + " " + f.options);
    std::string in = shell_quote(f.file);
    std::string folded = run_ok(fg_cmd("fold " + f.options + " " + in));
    std::string counts = run_ok(fg_cmd("fold --count " + f.options + " " + in));
    for (const char* addresses : {"object", "process"}) {
      SCOPED_TRACE(addresses);
      std::string pb = dir + "/p.pb.gz";
      run_ok(fg_cmd("export -f pprof --label host=node7 --addresses " + std::string(addresses) + " " + f.options + " " +
                    in + " -o " + pb));
      RawProfile raw = parse_raw(go_pprof("-raw " + pb));
      ASSERT_EQ(raw.sample_types.size(), 2u);
      EXPECT_EQ(raw.sample_types[0], "samples/count");
      // Stacks (so function names) and weights as fgtool folds them.
      std::map<std::string, double> mine = parse_folded(folded);
      EXPECT_EQ(raw.folded(1), mine);
      EXPECT_EQ(double(raw.total(1)), folded_total(folded));
      EXPECT_EQ(double(raw.total(0)), folded_total(counts));
      std::set<std::string> go_functions, my_functions;
      for (const auto& kv : raw.location_names)
        for (const auto& n : kv.second) go_functions.insert(n);
      for (const auto& kv : mine) {
        std::istringstream s(kv.first);
        std::string fr;
        while (std::getline(s, fr, ';')) my_functions.insert(fr);
      }
      EXPECT_EQ(go_functions, my_functions);
      // Labels: every sample has comm/pid/tid/category/phase and the user's.
      for (const auto& s : raw.samples) {
        for (const char* key : {"comm", "pid", "tid", "category", "phase", "host"})
          EXPECT_TRUE(s.labels.count(key)) << "no label " << key;
        EXPECT_EQ(s.labels.at("host"), "node7");
      }
      // Addresses and the executable's mapping with its build-id.
      bool any_address = false;
      for (const auto& kv : raw.location_address) any_address |= kv.second != "0x0";
      EXPECT_TRUE(any_address);
      ASSERT_FALSE(raw.mappings.empty());
      // -top reads it too.
      std::string top = go_pprof("-top " + pb);
      EXPECT_NE(top.find("Showing nodes accounting for"), std::string::npos) << top;
      // The first mapping is the one pprof names the main binary.
      EXPECT_EQ(top.find("File: [kernel.kallsyms]"), std::string::npos) << top;
    }
  }
  // The static fixture's executable has a build-id in perf.data's BUILD_ID feature.
  std::string pb = dir + "/s.pb.gz";
  run_ok(fg_cmd("export -f pprof --symfs " + shell_quote(testdata("fold/symfs")) + " " +
                shell_quote(testdata("fold/fp_static.data")) + " -o " + pb));
  std::string raw_text = go_pprof("-raw " + pb);
  RawProfile raw = parse_raw(raw_text);
  bool build_id = false;
  for (const auto& m : raw.mappings)
    build_id |= m.find("/tmp/fgtool-fixture/fold_calls_static") != std::string::npos &&
                std::regex_search(m, std::regex("[0-9a-f]{40}"));
  EXPECT_TRUE(build_id) << raw_text;
}

TEST(PprofCli, TagFocusOnCategoryMatchesTheReport) {
  if (!go_missing().empty()) GTEST_SKIP() << go_missing();
  std::string dir = test::temp_dir();
  for (const char* fixture : {"categories/libtorch_fp.folded", "categories/libtorch_dwarf.folded"}) {
    SCOPED_TRACE(fixture);
    std::string in = shell_quote(testdata(fixture));
    std::string pb = dir + "/lt.pb.gz";
    run_ok(fg_cmd("export -f pprof " + in + " -o " + pb));
    std::string csv = run_ok(fg_cmd("report --format csv " + in));
    std::smatch m;
    ASSERT_TRUE(std::regex_search(csv, m, std::regex("share,resource,gemm,self,([0-9.e+]+),")));
    double gemm = std::stod(m[1]);
    EXPECT_GT(gemm, 0);
    RawProfile focused = parse_raw(go_pprof("-raw -tagfocus=category=gemm " + pb));
    EXPECT_EQ(double(focused.total(0)), gemm);
    RawProfile all = parse_raw(go_pprof("-raw " + pb));
    EXPECT_EQ(all.folded(0), parse_folded(read_file(testdata(fixture))));
    // fgtool's own --tag does the same selection.
    std::string mine = run_ok(fg_cmd("merge --tag category=gemm " + pb));
    EXPECT_EQ(folded_total(mine), gemm);
  }
}

TEST(PprofCli, ReadsWhatGoPprofWrites) {
  if (!go_missing().empty()) GTEST_SKIP() << go_missing();
  std::string dir = test::temp_dir();
  std::string fixture = shell_quote(testdata("fold/fp_static.data"));
  std::string symfs = "--symfs " + shell_quote(testdata("fold/symfs")) + " ";
  std::string folded = run_ok(fg_cmd("fold " + symfs + fixture));
  std::string pb = dir + "/p.pb.gz";
  run_ok(fg_cmd("export -f pprof " + symfs + fixture + " -o " + pb));
  // go merges the two copies (values doubled) and writes its own profile.proto.
  std::string merged = dir + "/m.pb.gz";
  go_pprof("-proto -output " + merged + " " + pb + " " + pb);
  std::map<std::string, double> expect = parse_folded(folded);
  for (auto& kv : expect) kv.second *= 2;
  EXPECT_EQ(parse_folded(run_ok(fg_cmd("merge " + merged))), expect);
  // Every command reads it: svg, report, diff.
  std::string svg = run_ok(fg_cmd("svg " + merged));
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  EXPECT_NE(run_ok(fg_cmd("report " + merged)).find("RESOURCE"), std::string::npos);
  EXPECT_NE(run_ok(fg_cmd("diff " + pb + " " + merged + " -o " + dir + "/d.svg")), "x");
  EXPECT_NE(read_file(dir + "/d.svg").find("<svg"), std::string::npos);
  // The sample count column by name.
  std::string counts = run_ok(fg_cmd("fold --count " + symfs + fixture));
  EXPECT_EQ(folded_total(run_ok(fg_cmd("merge --sample-index samples " + merged))), 2 * folded_total(counts));
}

// Trace spans have fractional microseconds: written as nanoseconds, not rounded.
TEST(PprofCli, TraceExportKeepsFractionalMicroseconds) {
  std::string dir = test::temp_dir();
  std::string in = shell_quote(testdata("traces/mlp_train_trace.json"));
  std::map<std::string, double> us = parse_folded(run_ok(fg_cmd("fold " + in)));
  std::string pb = dir + "/t.pb.gz";
  run_ok(fg_cmd("export -f pprof " + in + " -o " + pb));
  std::map<std::string, double> ns = parse_folded(run_ok(fg_cmd("merge " + pb)));
  ASSERT_EQ(ns.size(), us.size());
  for (const auto& kv : us) EXPECT_NEAR(ns[kv.first], kv.second * 1000, 0.5) << kv.first;
  if (go_missing().empty()) {
    RawProfile raw = parse_raw(go_pprof("-raw " + pb));
    ASSERT_EQ(raw.sample_types, std::vector<std::string>{"time/nanoseconds"});
    EXPECT_EQ(raw.folded(0), ns);
  }
}

// The checked-in profiles (testdata/pprof/README.md), one written by go tool
// pprof: read without Go installed.
TEST(PprofCli, CheckedInProfilesReadBack) {
  std::string symfs = "--symfs " + shell_quote(testdata("fold/symfs")) + " ";
  std::string folded = run_ok(fg_cmd("fold " + symfs + shell_quote(testdata("fold/fp_static.data"))));
  EXPECT_EQ(run_ok(fg_cmd("merge " + shell_quote(testdata("pprof/fp_static.pb")))), folded);
  EXPECT_EQ(run_ok(fg_cmd("merge " + shell_quote(testdata("pprof/fp_static.pb.gz")))), folded);
  std::map<std::string, double> expect = parse_folded(folded);
  for (auto& kv : expect) kv.second *= 2;
  EXPECT_EQ(parse_folded(run_ok(fg_cmd("merge " + shell_quote(testdata("pprof/go_merged.pb.gz"))))), expect);
  EXPECT_EQ(parse_folded(run_ok(fg_cmd("merge " + shell_quote(testdata("pprof/go_merged.pb"))))), expect);
}

// A CPU profile written by Go's own runtime/pprof (goroutines with pprof.Do
// labels, inlined frames; testdata/pprof/README.md): every stack and value
// as `go tool pprof -traces` gives them (go_traces_to_folded.py), a label
// filter as its -tagfocus, and filters that cannot apply said, not silent.
TEST(PprofCli, GoRuntimeProfileReadsAsGoToolPprofDoes) {
  const std::string pb = shell_quote(testdata("pprof/go_cpu.pb.gz"));
  EXPECT_EQ(parse_folded(run_ok(fg_cmd("merge " + pb))), parse_folded(read_file(testdata("pprof/go_cpu.folded"))));
  EXPECT_EQ(parse_folded(run_ok(fg_cmd("merge --tag job=hash " + pb))),
            parse_folded(read_file(testdata("pprof/go_cpu.job_hash.folded"))));
  // A label value with a separator in it matches as written.
  EXPECT_GT(folded_total(run_ok(fg_cmd("merge --tag 'host=a;b c' " + pb))), 0);

  test::CommandResult none = run_shell(fg_cmd("report --tag job=typo " + pb));
  EXPECT_EQ(none.status, 0) << none.err;
  EXPECT_NE(none.err.find("go_cpu.pb.gz: --tag job=typo matched none of the 235 samples"), std::string::npos)
      << none.err;
  const std::string folded = shell_quote(testdata("pprof/go_cpu.folded"));
  for (const std::string& cmd : {"report --tag job=hash " + folded, "diff --tag job=hash " + folded + " " + folded,
                                 "svg --tag job=hash " + folded + " -o /dev/null",
                                 "export -f pprof --tag job=hash " + shell_quote(testdata("fold/fp_static.data")) +
                                     " -o /dev/null"}) {
    SCOPED_TRACE(cmd);
    test::CommandResult r = run_shell(fg_cmd(cmd));
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find("--tag applies to pprof input only; this "), std::string::npos) << r.err;
  }
  test::CommandResult quiet = run_shell(fg_cmd("report --tag job=hash " + pb));
  EXPECT_EQ(quiet.err, "");
}

TEST(PprofCli, MalformedPprofIsAClearError) {
  std::string dir = test::temp_dir();
  std::string pb = dir + "/p.pb";
  run_ok(fg_cmd("export -f pprof --uncompressed " + shell_quote(testdata("categories/libtorch_fp.folded")) + " -o " + pb));
  std::string bytes = read_file(pb);
  // Keep the first 4 KiB (detected as pprof) and cut in the middle of a sample.
  ASSERT_GT(bytes.size(), 10000u);
  std::string cut = dir + "/cut.pb";
  test::write_file(cut, bytes.substr(0, 9001));
  test::CommandResult r = run_shell(fg_cmd("report " + cut));
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find(cut + ": byte "), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
  r = run_shell(fg_cmd("merge --sample-index nosuch " + pb));
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("sample types 0=samples"), std::string::npos) << r.err;
  r = run_shell(fg_cmd("merge --format svg " + pb));
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("expected folded or pprof"), std::string::npos) << r.err;
  r = run_shell(fg_cmd("merge"));
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("no inputs"), std::string::npos) << r.err;
}

TEST(PprofCli, MergeLabelsEachInput) {
  std::string dir = test::temp_dir();
  test::write_file(dir + "/node1.folded", "train;gemm 5\ntrain;io 1\n");
  test::write_file(dir + "/node2.folded", "train;gemm 3\n");
  run_ok("gzip -k " + dir + "/node2.folded");
  // Folded output: one root frame per input.
  std::string folded = run_ok(fg_cmd("merge --label host " + dir + "/node1.folded " + dir + "/node2.folded.gz"));
  EXPECT_EQ(folded, "host=node1;train;gemm 5\nhost=node1;train;io 1\nhost=node2;train;gemm 3\n");
  // No label: summed.
  EXPECT_EQ(run_ok(fg_cmd("merge " + dir + "/node1.folded " + dir + "/node2.folded.gz")), "train;gemm 8\ntrain;io 1\n");
  // VALUE=PATH names the value.
  EXPECT_EQ(run_ok(fg_cmd("merge --root a=" + dir + "/node1.folded b=" + dir + "/node2.folded")),
            "a;train;gemm 5\na;train;io 1\nb;train;gemm 3\n");
  // Inputs read straight below their root frame: one value twice sums, and
  // a perf.data input (loaded alone, then merged below it) sits beside them.
  const std::string fp_static = run_ok(fg_cmd("fold " + shell_quote(testdata("fold/fp_static.data"))));
  std::string expect;
  std::istringstream lines(fp_static);
  for (std::string line; std::getline(lines, line);) expect += "host=p;" + line + "\n";
  expect += "host=x;train;gemm 10\nhost=x;train;io 2\n";
  EXPECT_EQ(run_ok(fg_cmd("merge --label host x=" + dir + "/node1.folded p=" +
                          shell_quote(testdata("fold/fp_static.data")) + " x=" + dir + "/node1.folded")),
            expect);
  // A folded file starts with the units line, as `fold -o` writes it
  // (stdout above has none): plain folded inputs count samples, perf.data ns.
  run_ok(fg_cmd("merge " + dir + "/node1.folded " + dir + "/node2.folded -o " + dir + "/sum.folded"));
  EXPECT_EQ(test::read_file(dir + "/sum.folded"), "# fgtool units=samples\ntrain;gemm 8\ntrain;io 1\n");
  run_ok(fg_cmd("merge " + shell_quote(testdata("fold/fp_static.data")) + " -o " + dir + "/ns.folded"));
  EXPECT_EQ(test::read_file(dir + "/ns.folded").rfind("# fgtool units=ns\n", 0), 0u);
  // pprof output carries the label; reading it back sums the hosts.
  std::string pb = dir + "/job.pb.gz";
  run_ok(fg_cmd("merge --label host " + dir + "/node1.folded " + dir + "/node2.folded -o " + pb));
  EXPECT_EQ(run_ok(fg_cmd("merge " + pb)), "train;gemm 8\ntrain;io 1\n");
  EXPECT_EQ(run_ok(fg_cmd("merge --tag host=node2 " + pb)), "train;gemm 3\n");
  if (go_missing().empty()) {
    RawProfile raw = parse_raw(go_pprof("-raw " + pb));
    std::map<std::string, int64_t> per_host;
    for (const auto& s : raw.samples) per_host[s.labels.at("host")] += s.values.at(0);
    EXPECT_EQ(per_host, (std::map<std::string, int64_t>{{"node1", 6}, {"node2", 3}}));
  }
}

}  // namespace
}  // namespace fg
