// lib/pprof without external tools: what PprofBuilder writes, the reader
// reads back (values, frames, labels, inline lines), and malformed protobuf
// is an InputError naming the byte offset.
#include <gtest/gtest.h>
#include <zlib.h>

#include <vector>
#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <tuple>

#include <protozero/pbf_message.hpp>

#include "diagnostics/input_error.h"
#include "pprof/pprof_builder.h"
#include "pprof/pprof_export.h"
#include "pprof/pprof_reader.h"
#include "pprof/profile_fields.h"
#include "folded_text.h"
#include "test_support.h"

namespace fg {
namespace {

using test::folded_text;

// All members of a gzip stream, inflated (zlib, as Go's reader does).
std::string gunzip_for_test(const std::string& gz) {
  std::string out;
  size_t pos = 0;
  while (pos < gz.size()) {
    z_stream z{};
    EXPECT_EQ(inflateInit2(&z, 15 + 16), Z_OK);
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data() + pos));
    z.avail_in = uInt(gz.size() - pos);
    char buf[1 << 16];
    int rc;
    do {
      z.next_out = reinterpret_cast<Bytef*>(buf);
      z.avail_out = sizeof buf;
      rc = inflate(&z, Z_NO_FLUSH);
      out.append(buf, sizeof buf - z.avail_out);
    } while (rc == Z_OK);
    pos = gz.size() - z.avail_in;
    inflateEnd(&z);
    if (rc != Z_STREAM_END) {
      ADD_FAILURE() << "inflate: " << rc;
      break;
    }
  }
  return out;
}

// A small CPU profile: main -> work -> (inlined) helper, and main -> idle.
std::string small_profile(bool gzip) {
  PprofBuilder b;
  b.add_sample_type("samples", "count");
  b.add_sample_type("cpu", "nanoseconds");
  PprofBuilder::Mapping m;
  m.filename = "/usr/lib/libwork.so";
  m.memory_start = 0x1000;
  m.memory_limit = 0x9000;
  uint64_t map = b.add_mapping(m);
  PprofBuilder::Line main_line{b.function("main"), 0};
  PprofBuilder::Line inl[2] = {{b.function("helper"), 3}, {b.function("work"), 7}};  // innermost first
  PprofBuilder::Line idle_line{b.function("idle"), 0};
  uint64_t l_main = b.add_location(map, 0x1100, &main_line, 1);
  uint64_t l_work = b.add_location(map, 0x1200, inl, 2);
  uint64_t l_idle = b.add_location(0, 0, &idle_line, 1);
  uint64_t unsym = b.add_location(map, 0x1300, nullptr, 0);
  PprofBuilder::Label lab[2] = {{b.string_id("comm"), b.string_id("app"), 0, 0}, {b.string_id("pid"), 0, 42, 0}};
  uint64_t s1[] = {l_work, l_main};
  int64_t v1[] = {3, 3000};
  b.add_sample(s1, 2, v1, 2, lab, 2);
  uint64_t s2[] = {l_idle, l_main};
  int64_t v2[] = {1, 1000};
  b.add_sample(s2, 2, v2, 2, lab, 1);
  uint64_t s3[] = {unsym, l_main};
  int64_t v3[] = {2, 500};
  b.add_sample(s3, 2, v3, 2, nullptr, 0);
  return gzip ? b.encode_gzip() : b.encode();
}

TEST(PprofReader, ReadsWhatTheBuilderWrites) {
  for (bool gz : {true, false}) {
    FoldedProfile p;
    PprofReadInfo info;
    read_pprof_data(small_profile(gz), "t.pb", p, {}, &info);
    EXPECT_EQ(folded_text(p), "main;[libwork.so] 500\nmain;idle 1000\nmain;work;helper 3000\n");
    EXPECT_EQ(p.units, "ns");
    ASSERT_EQ(info.sample_types.size(), 2u);
    EXPECT_EQ(info.value_index, 1u);
    EXPECT_EQ(info.samples, 3u);
    EXPECT_EQ(p.frame_object(p.find_frame("work")), "/usr/lib/libwork.so");
  }
}

// A pprof's strings are any bytes: a function named with ';' or a line
// break, or an object file named so, would split a frame or a stack of the
// folded output. They read as ':' and spaces.
TEST(PprofReader, NamesThatWouldSplitAFoldedLineAreMadeSafe) {
  PprofBuilder b;
  b.add_sample_type("samples", "count");
  PprofBuilder::Mapping m;
  m.filename = "/tmp/odd;dir/lib\nx.so";
  m.memory_start = 0x1000;
  m.memory_limit = 0x9000;
  const uint64_t map = b.add_mapping(m);
  PprofBuilder::Line outer{b.function("main;evil\nname"), 0}, leaf{b.function("leaf\rx"), 0};
  const uint64_t stack[] = {b.add_location(map, 0x1300, nullptr, 0), b.add_location(0, 0, &leaf, 1),
                            b.add_location(0, 0, &outer, 1)};
  int64_t v[] = {5};
  b.add_sample(stack, 3, v, 1, nullptr, 0);
  FoldedProfile p;
  read_pprof_data(b.encode(), "t.pb", p, {});
  EXPECT_EQ(folded_text(p), "main:evil name;leaf x;[lib x.so] 5\n");
}

// Over 40 MiB of samples: compressed in 8 MiB runs on other threads while
// building (past the third, in the buffers of runs already compressed), the
// rest as members straight from the parts. The result must read back as
// the same profile as the plain encoding of the same calls, and the gzip
// stream must inflate to exactly those bytes.
TEST(PprofBuilder, StreamedGzipIsThePlainEncoding) {
  auto build = [](PprofBuilder& b) {
    b.add_sample_type("cpu", "nanoseconds");
    PprofBuilder::Mapping m;
    m.filename = "/usr/lib/libwork.so";
    m.memory_start = 0x1000;
    m.memory_limit = 0x900000;
    uint64_t map = b.add_mapping(m);
    std::vector<uint64_t> locs;
    for (int i = 0; i < 5000; ++i) {
      PprofBuilder::Line line{b.function("fn_" + std::to_string(i % 700)), i % 13};
      locs.push_back(b.add_location(map, 0x1000 + 16 * uint64_t(i), &line, 1));
    }
    PprofBuilder::Label lab[2] = {{b.string_id("comm"), b.string_id("app"), 0, 0}, {b.string_id("pid"), 0, 42, 0}};
    for (int i = 0; i < 2400000; ++i) {
      uint64_t stack[6];
      for (int k = 0; k < 6; ++k) stack[k] = locs[size_t((i * 7 + k * 131) % 5000)];
      int64_t v = 1000 + i % 97;
      b.add_sample(stack, 6, &v, 1, lab, 1 + i % 2);
    }
  };
  PprofBuilder plain, streamed;
  build(plain);
  streamed.compress_while_building(1);
  build(streamed);
  const std::string raw = plain.encode();
  ASSERT_GT(raw.size(), size_t(40) << 20);  // five shipped runs: buffers are filled again
  const std::string gz = streamed.encode_gzip(1);
  EXPECT_LT(gz.size(), raw.size() / 2);
  EXPECT_EQ(gunzip_for_test(gz), raw);
  EXPECT_NE(gz, gzip_bytes(raw, 1));  // several members, not one stream: the path under test
  FoldedProfile a, b;
  read_pprof_data(raw, "plain.pb", a);
  read_pprof_data(gz, "streamed.pb.gz", b);
  EXPECT_EQ(folded_text(a), folded_text(b));
  EXPECT_GT(a.total(), 0.0);
}

// Packed location ids and values of every varint length (1 to 10 bytes,
// negative values included), through both add_sample overloads, decode with
// protozero's reader as they were given, and a sample with none of either
// has no such field.
TEST(PprofBuilder, PackedSampleFieldsDecodeAsGiven) {
  PprofBuilder b;
  b.add_sample_type("cpu", "nanoseconds");
  b.add_sample_type("samples", "count");
  std::vector<uint64_t> ids;
  for (int bits = 0; bits < 64; bits += 7) ids.push_back((uint64_t(1) << bits) + uint64_t(bits));
  ids.push_back(~uint64_t(0));
  const int64_t values[2] = {-5, int64_t(1) << 62};
  const PprofBuilder::Label lab{b.string_id("comm"), b.string_id("app"), 0, 0};
  b.add_sample(ids.data(), ids.size(), values, 2, &lab, 1);
  b.add_sample(ids.data() + 3, 2, values + 1, 1, b.encode_labels(&lab, 1));
  b.add_sample(nullptr, 0, nullptr, 0, &lab, 1);
  const std::string raw = b.encode();
  std::vector<std::pair<std::vector<uint64_t>, std::vector<int64_t>>> samples;
  size_t labels = 0;
  protozero::pbf_message<pprof_fields::Profile> top(raw);
  while (top.next(pprof_fields::Profile::sample)) {
    protozero::pbf_message<pprof_fields::Sample> sm(top.get_message());
    samples.emplace_back();
    while (sm.next()) {
      if (sm.tag() == pprof_fields::Sample::location_id) {
        auto r = sm.get_packed_uint64();
        samples.back().first.assign(r.begin(), r.end());
      } else if (sm.tag() == pprof_fields::Sample::value) {
        auto r = sm.get_packed_int64();
        samples.back().second.assign(r.begin(), r.end());
      } else {
        ++labels;
        sm.skip();
      }
    }
  }
  ASSERT_EQ(samples.size(), 3u);
  EXPECT_EQ(samples[0].first, ids);
  EXPECT_EQ(samples[0].second, std::vector<int64_t>(values, values + 2));
  EXPECT_EQ(samples[1].first, std::vector<uint64_t>(ids.begin() + 3, ids.begin() + 5));
  EXPECT_EQ(samples[1].second, std::vector<int64_t>{values[1]});
  EXPECT_TRUE(samples[2].first.empty());
  EXPECT_TRUE(samples[2].second.empty());
  EXPECT_EQ(labels, 3u);
}

TEST(PprofReader, SampleIndexAndTags) {
  std::string pb = small_profile(true);
  FoldedProfile a;
  PprofReadOptions o;
  o.sample_index = "samples";
  read_pprof_data(pb, "t.pb", a, o);
  EXPECT_EQ(a.total(), 6);
  EXPECT_EQ(a.units, "samples");
  FoldedProfile b;
  o.sample_index = "1";
  o.tags = {{"comm", "app"}, {"pid", "42"}};
  read_pprof_data(pb, "t.pb", b, o);
  EXPECT_EQ(folded_text(b), "main;work;helper 3000\n");
  o.sample_index = "bytes";
  FoldedProfile c;
  try {
    read_pprof_data(pb, "t.pb", c, o);
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("0=samples, 1=cpu"), std::string::npos) << e.what();
  }
}

TEST(PprofReader, FoldedRoundTripThroughPprof) {
  FoldedProfile p;
  p.add_stack("a;b;c", 5);
  p.add_stack("a;b", 2);
  p.add_stack("x y;z", 1);
  p.units = "us";
  PprofExportOptions eo;
  eo.labels = {{"host", "n1"}};
  std::string pb = pprof_from_folded(p, eo);
  FoldedProfile q;
  read_pprof_data(pb, "t.pb.gz", q, {});
  EXPECT_EQ(folded_text(q), folded_text(p));
  EXPECT_EQ(q.units, "us");
  FoldedProfile r;
  PprofReadOptions o;
  o.tags = {{"host", "n2"}};
  read_pprof_data(pb, "t.pb.gz", r, o);
  EXPECT_EQ(r.total(), 0);
  // The same profile gives the same bytes.
  EXPECT_EQ(pprof_from_folded(p, eo), pb);
}

// A profile of `samples` random stacks over 300 locations (some with two
// lines, an inlined call), some deeper than kMaxStackDepth, with a label
// the --tag test can split on.
std::string many_samples(const char* type, const char* unit, size_t samples, size_t bad_sample = SIZE_MAX) {
  PprofBuilder b;
  b.add_sample_type(type, unit);
  std::mt19937 rng(5);
  std::vector<uint64_t> locs;
  for (int i = 0; i < 300; ++i) {
    PprofBuilder::Line lines[2] = {{b.function("inl" + std::to_string(i % 7)), 0},
                                   {b.function("f" + std::to_string(i % 40)), 0}};
    locs.push_back(i % 5 == 0 ? b.add_location(0, 0, lines, 2) : b.add_location(0, 0, lines + 1, 1));
  }
  const PprofBuilder::Label odd{b.string_id("parity"), b.string_id("odd"), 0, 0};
  const PprofBuilder::Label even{b.string_id("parity"), b.string_id("even"), 0, 0};
  std::vector<uint64_t> stack;
  for (size_t i = 0; i < samples; ++i) {
    stack.clear();
    const size_t depth = i % 1999 == 3 ? kMaxStackDepth + 10 : 1 + rng() % 20;
    for (size_t d = 0; d < depth; ++d) stack.push_back(locs[rng() % (d < 3 ? 4 : locs.size())]);
    const int64_t value = int64_t(rng() % 5000);
    if (i == bad_sample) stack.push_back(999999);  // no such location
    b.add_sample(stack.data(), stack.size(), &value, 1, i % 2 ? &odd : &even, 1);
  }
  return b.encode();
}

// A profile of 16 K samples or more is placed in the tree on a worker thread
// while its samples are decoded: the tree is the same node for node as
// placed inline, with --tag filters and with the microseconds of off-CPU
// time summed per node.
TEST(PprofReader, TheTreeThreadBuildsTheSameProfile) {
  for (const char* type : {"cpu", "off_cpu"}) {
    SCOPED_TRACE(type);
    const std::string pb = many_samples(type, "nanoseconds", 30000);
    for (bool tagged : {false, true}) {
      PprofReadOptions inline_tree;
      if (tagged) inline_tree.tags = {{"parity", "odd"}};
      inline_tree.tree_thread_after = 0;
      FoldedProfile want;
      PprofReadInfo want_info;
      read_pprof_data(pb, "m.pb", want, inline_tree, &want_info);
      for (uint64_t after : {uint64_t(1), uint64_t(16 * 1024)}) {
        PprofReadOptions o = inline_tree;
        o.tree_thread_after = after;
        FoldedProfile got;
        PprofReadInfo info;
        read_pprof_data(pb, "m.pb", got, o, &info);
        ASSERT_EQ(got.node_count(), want.node_count());
        ASSERT_EQ(got.frame_count(), want.frame_count());
        for (NodeId n = 0; n < got.node_count(); ++n) {
          ASSERT_EQ(got.node(n).frame, want.node(n).frame);
          ASSERT_EQ(got.node(n).parent, want.node(n).parent);
          ASSERT_EQ(got.node(n).self, want.node(n).self);
        }
        EXPECT_EQ(info.kept_samples, want_info.kept_samples);
        EXPECT_EQ(folded_text(got), folded_text(want));
      }
      EXPECT_GT(want.total(), 0);
      if (tagged) EXPECT_LT(want_info.kept_samples, 16000u);
    }
  }
}

// A bad sample after the tree thread started: the same error as read
// inline (the byte offset of the sample), and the thread stopped before
// the reader returns (the sanitizer builds check).
TEST(PprofReader, ABadSampleWhileTheTreeThreadRunsIsTheSameError) {
  const std::string pb = many_samples("cpu", "nanoseconds", 30000, 25000);
  std::vector<std::string> errors;
  for (uint64_t after : {uint64_t(0), uint64_t(1)}) {
    PprofReadOptions o;
    o.tree_thread_after = after;
    FoldedProfile p;
    try {
      read_pprof_data(pb, "bad.pb", p, o);
      ADD_FAILURE() << "no error";
    } catch (const InputError& e) {
      errors.push_back(e.what());
    }
  }
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0], errors[1]);
  EXPECT_NE(errors[0].find("Sample refers to location 999999"), std::string::npos) << errors[0];
  EXPECT_EQ(errors[0].rfind("bad.pb: byte ", 0), 0u) << errors[0];
}

std::string error_of(std::string_view data) {
  FoldedProfile p;
  try {
    read_pprof_data(data, "bad.pb", p, {});
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(PprofReader, MalformedProtobufNamesTheByteOffset) {
  std::string pb = small_profile(false);
  // Cut inside the string table (the last fields): a length runs past the end.
  std::string cut = pb.substr(0, pb.size() - 3);
  std::string e = error_of(cut);
  EXPECT_NE(e.find("bad.pb: byte "), std::string::npos) << e;
  // A sample field with a fixed64 wire type where a message belongs.
  std::string wrong = pb;
  ASSERT_EQ(uint8_t(wrong[0]), 0x0a);  // sample_type, length-delimited
  wrong[0] = char((1 << 3) | 1);
  e = error_of(wrong);
  EXPECT_NE(e.find("bad.pb: byte 0: Profile.sample_type has wire type fixed64"), std::string::npos) << e;
  // A location id no location has.
  PprofBuilder b;
  b.add_sample_type("samples", "count");
  uint64_t missing = 7;
  int64_t v = 1;
  b.add_sample(&missing, 1, &v, 1, nullptr, 0);
  e = error_of(b.encode());
  EXPECT_NE(e.find("refers to location 7"), std::string::npos) << e;
  // Truncated gzip.
  std::string gz = small_profile(true);
  e = error_of(gz.substr(0, gz.size() / 2));
  EXPECT_NE(e.find("bad.pb: byte "), std::string::npos) << e;
  EXPECT_NE(e.find("truncated"), std::string::npos) << e;
  // A string index past the table.
  e = error_of(std::string("\x0a\x04\x08\x09\x10\x01", 6));
  EXPECT_NE(e.find("string 9"), std::string::npos) << e;
}

TEST(PprofReader, GzipBombIsRefused) {
  // 300 MiB of zeros compress to about 1.3 MiB: over the 256 MiB floor, and 200x.
  std::string zeros(size_t(300) << 20, '\0');
  std::string bomb = gzip_bytes(zeros, 1);
  zeros.clear();
  zeros.shrink_to_fit();
  std::string e = error_of(bomb);
  EXPECT_NE(e.find("refusing to read it"), std::string::npos) << e;
}

TEST(PprofReader, DetectsPprofButNotFoldedText) {
  EXPECT_TRUE(looks_like_pprof(small_profile(true)));
  EXPECT_TRUE(looks_like_pprof(small_profile(false)));
  EXPECT_TRUE(looks_like_pprof(small_profile(false).substr(0, 40)));  // a head cut mid-field
  EXPECT_FALSE(looks_like_pprof("main;foo;bar 12\nmain;baz 3\n"));
  EXPECT_FALSE(looks_like_pprof("\nmain;foo 1\n"));
  EXPECT_FALSE(looks_like_pprof(gzip_bytes("main;foo;bar 12\nmain;baz 3\n", 6)));
  EXPECT_FALSE(looks_like_pprof(""));
  EXPECT_FALSE(looks_like_pprof("PERFILE2"));
}

// The fold's observer hook leaves the folded profile as it is: the same bytes
// with and without it, for each view and root option.
TEST(PprofExport, ObservedFoldIsTheSameFold) {
  struct Case {
    std::string file;
    FoldView view;
    bool tid, symfs;
  };
  const std::vector<Case> cases = {{"fold/fp_static.data", FoldView::on_cpu, false, true},
                                   {"fold/fp_static.data", FoldView::on_cpu, true, true},
                                   {"fold/dwarf_static.data", FoldView::on_cpu, false, true},
                                   {"perf/sched.data", FoldView::off_cpu, false, false},
                                   {"perf/sched.data", FoldView::wall, false, false}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    FoldOptions fo;
    fo.view = c.view;
    fo.root_with_tid = c.tid;
    if (c.symfs) fo.symbols.symfs = test::testdata("fold/symfs");
    std::string plain = folded_text(fold_perf_data(test::testdata(c.file), fo));
    for (PprofAddresses a : {PprofAddresses::object, PprofAddresses::process}) {
      FoldedProfile observed;
      PprofExportStats st;
      PprofExportOptions eo;
      eo.addresses = a;
      std::string pb = pprof_from_perf_data(test::testdata(c.file), fo, eo, nullptr, &observed, &st);
      EXPECT_EQ(folded_text(observed), plain);
      EXPECT_GT(st.samples, 0u);
      FoldedProfile back;
      read_pprof_data(pb, c.file, back);
      EXPECT_EQ(folded_text(back), plain);
    }
  }
}

// The parts of an exported pprof the address tests look at, read with
// protozero rather than with `go tool pprof`, which merges a file's mappings
// across processes and rebases their addresses.
struct PbAddresses {
  struct Mapping {
    uint64_t start = 0, limit = 0, offset = 0;
    std::string file;
  };
  struct Location {
    uint64_t mapping = 0, address = 0;
  };
  std::map<uint64_t, Mapping> mappings;
  std::map<uint64_t, Location> locations;
  std::vector<std::pair<std::vector<uint64_t>, int64_t>> samples;  // location ids, pid label (-1: none)
};

PbAddresses read_pb_addresses(std::string_view pb) {
  namespace pf = pprof_fields;
  std::vector<std::string> strings;
  PbAddresses out;
  std::map<uint64_t, uint64_t> file_index;  // mapping id -> string index
  std::vector<std::map<int64_t, int64_t>> num_labels;
  protozero::pbf_message<pf::Profile> top(protozero::data_view(pb.data(), pb.size()));
  while (top.next()) {
    switch (top.tag()) {
      case pf::Profile::string_table: strings.emplace_back(top.get_string()); break;
      case pf::Profile::mapping: {
        protozero::pbf_message<pf::Mapping> m(top.get_view());
        uint64_t id = 0, file = 0;
        PbAddresses::Mapping pm;
        while (m.next()) {
          switch (m.tag()) {
            case pf::Mapping::id: id = m.get_uint64(); break;
            case pf::Mapping::memory_start: pm.start = m.get_uint64(); break;
            case pf::Mapping::memory_limit: pm.limit = m.get_uint64(); break;
            case pf::Mapping::file_offset: pm.offset = m.get_uint64(); break;
            case pf::Mapping::filename: file = uint64_t(m.get_int64()); break;
            default: m.skip();
          }
        }
        out.mappings[id] = pm;
        file_index[id] = file;
        break;
      }
      case pf::Profile::location: {
        protozero::pbf_message<pf::Location> l(top.get_view());
        uint64_t id = 0;
        PbAddresses::Location pl;
        while (l.next()) {
          if (l.tag() == pf::Location::id) id = l.get_uint64();
          else if (l.tag() == pf::Location::mapping_id) pl.mapping = l.get_uint64();
          else if (l.tag() == pf::Location::address) pl.address = l.get_uint64();
          else l.skip();
        }
        out.locations[id] = pl;
        break;
      }
      case pf::Profile::sample: {
        protozero::pbf_message<pf::Sample> sm(top.get_view());
        out.samples.emplace_back();
        num_labels.emplace_back();
        while (sm.next()) {
          if (sm.tag() == pf::Sample::location_id) {
            for (uint64_t id : sm.get_packed_uint64()) out.samples.back().first.push_back(id);
          } else if (sm.tag() == pf::Sample::label) {
            protozero::pbf_message<pf::Label> lb(sm.get_view());
            int64_t key = 0, num = 0;
            while (lb.next()) {
              if (lb.tag() == pf::Label::key) key = lb.get_int64();
              else if (lb.tag() == pf::Label::num) num = lb.get_int64();
              else lb.skip();
            }
            num_labels.back()[key] = num;
          } else {
            sm.skip();
          }
        }
        break;
      }
      default: top.skip();
    }
  }
  for (auto& [id, m] : out.mappings) m.file = strings.at(file_index[id]);
  int64_t pid_key = -1;
  for (size_t i = 0; i < strings.size(); ++i)
    if (strings[i] == "pid") pid_key = int64_t(i);
  for (size_t i = 0; i < out.samples.size(); ++i)
    out.samples[i].second = num_labels[i].count(pid_key) ? num_labels[i].at(pid_key) : -1;
  return out;
}

// Each sample's addresses, per pid, as the exporter wrote them: "PID ADDR..."
// (hex, leaf first; the comm root's location, address 0, left out). With
// file_offsets, a file-backed address is "FILE+OFFSET" instead (its mapping's
// file and the offset in it).
std::set<std::string> sample_addresses(std::string_view pb, bool file_offsets = false) {
  const PbAddresses p = read_pb_addresses(pb);
  std::set<std::string> out;
  for (const auto& [locs, pid] : p.samples) {
    std::ostringstream line;
    line << pid << std::hex;
    for (uint64_t id : locs) {
      const PbAddresses::Location& l = p.locations.at(id);
      if (!l.address) continue;
      auto m = p.mappings.find(l.mapping);
      if (file_offsets && m != p.mappings.end() && !m->second.file.empty() && m->second.file[0] == '/')
        line << ' ' << m->second.file << "+0x" << l.address - m->second.start + m->second.offset;
      else
        line << " 0x" << l.address;
    }
    out.insert(line.str());
  }
  return out;
}

// 12 processes mapping the same objects at different addresses: with
// --addresses process, every frame's location must carry its own process's
// address (the collector shares a location between frames of one object
// offset only within one mapping), as perf recorded them
// (multi_process.stacks, from perf script -D).
TEST(PprofExport, LocationsKeepEachProcesssAddresses) {
  FoldOptions fo;
  fo.symbols.symfs = test::testdata("pprof/symfs");
  for (bool source_lines : {true, false}) {
    PprofExportOptions eo;
    eo.gzip = false;
    eo.source_lines = source_lines;
    eo.addresses = PprofAddresses::process;
    std::string pb = pprof_from_perf_data(test::testdata("pprof/multi_process.data"), fo, eo, nullptr, nullptr, nullptr);
    std::set<std::string> expected;
    std::ifstream in(test::testdata("pprof/multi_process.stacks"));
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) expected.insert(line);
    ASSERT_GT(expected.size(), 100u);
    // The fold ends a stack at its first caller outside any mapping (one
    // "[unknown]"), so a written stack is a prefix of the recorded one.
    std::set<std::string> got = sample_addresses(pb);
    auto starts_with = [](const std::string& recorded, const std::string& written) {
      return recorded.compare(0, written.size(), written) == 0 &&
             (recorded.size() == written.size() || recorded[written.size()] == ' ');
    };
    std::vector<std::string> missing, extra;
    for (const std::string& e : expected)
      if (std::none_of(got.begin(), got.end(), [&](const std::string& g) { return starts_with(e, g); }))
        missing.push_back(e);
    for (const std::string& g : got) {
      if (g.find(' ') == std::string::npos ||
          std::none_of(expected.begin(), expected.end(), [&](const std::string& e) { return starts_with(e, g); }))
        extra.push_back(g);
    }
    EXPECT_TRUE(missing.empty() && extra.empty())
        << missing.size() << " recorded stacks not written (first: " << (missing.empty() ? "" : missing[0]) << "), "
        << extra.size() << " written stacks not recorded (first: " << (extra.empty() ? "" : extra[0]) << ")";
  }
}

// The default, --addresses object, keys locations by object offset: the
// same 12 processes give one mapping per object segment (none twice by
// file, offset and size, as go tool pprof's merge keys them), fewer
// locations, each address inside its mapping, and every sample the same
// files and offsets (so the same symbols in any pprof tool) as with each
// process's own addresses.
TEST(PprofExport, ObjectAddressesKeepEveryFileOffset) {
  FoldOptions fo;
  fo.symbols.symfs = test::testdata("pprof/symfs");
  PprofExportOptions eo;
  eo.gzip = false;
  eo.source_lines = false;
  eo.addresses = PprofAddresses::process;
  const std::string per_process = pprof_from_perf_data(test::testdata("pprof/multi_process.data"), fo, eo);
  eo.addresses = PprofAddresses::object;
  const std::string per_object = pprof_from_perf_data(test::testdata("pprof/multi_process.data"), fo, eo);
  EXPECT_EQ(sample_addresses(per_object, true), sample_addresses(per_process, true));
  EXPECT_NE(sample_addresses(per_object), sample_addresses(per_process));  // the addresses were rebased

  const PbAddresses obj = read_pb_addresses(per_object), proc = read_pb_addresses(per_process);
  EXPECT_LT(obj.locations.size(), proc.locations.size());
  EXPECT_LT(obj.mappings.size(), proc.mappings.size());
  std::set<std::tuple<std::string, uint64_t, uint64_t>> keys;
  for (const auto& [id, m] : obj.mappings) {
    if (m.file.empty() || m.file[0] != '/') continue;
    EXPECT_TRUE(keys.emplace(m.file, m.offset, (m.limit - m.start + 4095) / 4096).second) << m.file;
  }
  EXPECT_GE(keys.size(), 3u);  // prog, libc, gzip, sort ...
  for (const auto& [id, l] : obj.locations) {
    if (!l.mapping || !l.address) continue;
    const PbAddresses::Mapping& m = obj.mappings.at(l.mapping);
    if (m.file.empty() || m.file[0] != '/') continue;
    EXPECT_GE(l.address, m.start) << m.file;
    EXPECT_LT(l.address, m.limit) << m.file;
  }
}

}  // namespace
}  // namespace fg
