#include "pprof/pprof_merge.h"

#include <algorithm>
#include <unordered_map>

#include <protozero/exception.hpp>
#include <protozero/pbf_reader.hpp>

#include "diagnostics/input_error.h"
#include "pprof/pprof_gzip.h"
#include "pprof/profile_fields.h"

namespace fg {

namespace {

namespace pf = pprof_fields;
using protozero::pbf_reader;

// One input's tables as written, before remapping into the merged profile.
struct InputProfile {
  std::vector<std::string_view> strings;
  std::vector<std::pair<int64_t, int64_t>> sample_types;  // (type, unit) string indices
  std::pair<int64_t, int64_t> period_type{0, 0};
  int64_t period = 0, time_nanos = 0, duration_nanos = 0, default_sample_type = 0;
  std::vector<int64_t> comments;
  struct Mapping {
    uint64_t id = 0, start = 0, limit = 0, offset = 0;
    int64_t filename = 0, build_id = 0;
    bool functions = false, filenames = false, line_numbers = false, inline_frames = false;
  };
  std::vector<Mapping> mappings;
  struct Function {
    uint64_t id = 0;
    int64_t name = 0, filename = 0, start_line = 0;
  };
  std::vector<Function> functions;
  struct Location {
    uint64_t id = 0, mapping = 0, address = 0;
    std::vector<std::pair<uint64_t, int64_t>> lines;  // (function id, line), innermost first
  };
  std::vector<Location> locations;
  std::vector<protozero::data_view> samples;
};

// Field readers that check the wire type first: protozero only asserts it
// (an abort in builds with assertions, on a hostile file).
struct WrongWireType : protozero::exception {
  const char* what() const noexcept override { return "a field has the wrong wire type"; }
};
void expect(const pbf_reader& r, protozero::pbf_wire_type t) {
  if (r.wire_type() != t) throw WrongWireType();
}
uint64_t u64(pbf_reader& r) {
  expect(r, protozero::pbf_wire_type::varint);
  return r.get_uint64();
}
int64_t i64(pbf_reader& r) {
  expect(r, protozero::pbf_wire_type::varint);
  return r.get_int64();
}
bool flag(pbf_reader& r) {
  expect(r, protozero::pbf_wire_type::varint);
  return r.get_bool();
}
pbf_reader message(pbf_reader& r) {
  expect(r, protozero::pbf_wire_type::length_delimited);
  return r.get_message();
}
protozero::data_view view(pbf_reader& r) {
  expect(r, protozero::pbf_wire_type::length_delimited);
  return r.get_view();
}

// A repeated integer field, packed or not.
template <typename Fn>
void repeated(pbf_reader& r, Fn&& fn) {
  if (r.wire_type() == protozero::pbf_wire_type::length_delimited) {
    for (uint64_t v : r.get_packed_uint64()) fn(v);
  } else {
    fn(u64(r));
  }
}

InputProfile::Mapping read_mapping(pbf_reader m) {
  InputProfile::Mapping x;
  while (m.next()) {
    switch (pf::Mapping(m.tag())) {
      case pf::Mapping::id: x.id = u64(m); break;
      case pf::Mapping::memory_start: x.start = u64(m); break;
      case pf::Mapping::memory_limit: x.limit = u64(m); break;
      case pf::Mapping::file_offset: x.offset = u64(m); break;
      case pf::Mapping::filename: x.filename = i64(m); break;
      case pf::Mapping::build_id: x.build_id = i64(m); break;
      case pf::Mapping::has_functions: x.functions = flag(m); break;
      case pf::Mapping::has_filenames: x.filenames = flag(m); break;
      case pf::Mapping::has_line_numbers: x.line_numbers = flag(m); break;
      case pf::Mapping::has_inline_frames: x.inline_frames = flag(m); break;
      default: m.skip();
    }
  }
  return x;
}

InputProfile::Location read_location(pbf_reader m) {
  InputProfile::Location x;
  while (m.next()) {
    switch (pf::Location(m.tag())) {
      case pf::Location::id: x.id = u64(m); break;
      case pf::Location::mapping_id: x.mapping = u64(m); break;
      case pf::Location::address: x.address = u64(m); break;
      case pf::Location::line: {
        pbf_reader l = message(m);
        std::pair<uint64_t, int64_t> line{0, 0};
        while (l.next()) {
          if (l.tag() == uint32_t(pf::Line::function_id)) line.first = u64(l);
          else if (l.tag() == uint32_t(pf::Line::line)) line.second = i64(l);
          else l.skip();
        }
        x.lines.push_back(line);
        break;
      }
      default: m.skip();
    }
  }
  return x;
}

InputProfile::Function read_function(pbf_reader m) {
  InputProfile::Function x;
  while (m.next()) {
    switch (pf::Function(m.tag())) {
      case pf::Function::id: x.id = u64(m); break;
      case pf::Function::name: x.name = i64(m); break;
      case pf::Function::filename: x.filename = i64(m); break;
      case pf::Function::start_line: x.start_line = i64(m); break;
      default: m.skip();
    }
  }
  return x;
}

std::pair<int64_t, int64_t> read_value_type(pbf_reader m) {
  std::pair<int64_t, int64_t> vt{0, 0};
  while (m.next()) {
    if (m.tag() == uint32_t(pf::ValueType::type)) vt.first = i64(m);
    else if (m.tag() == uint32_t(pf::ValueType::unit)) vt.second = i64(m);
    else m.skip();
  }
  return vt;
}

void read_profile(std::string_view pb, InputProfile& p, uint64_t* at) {
  pbf_reader top(pb.data(), pb.size());
  for (;;) {
    *at = uint64_t(top.data().data() - pb.data());
    if (!top.next()) break;
    switch (pf::Profile(top.tag())) {
      case pf::Profile::sample_type: p.sample_types.push_back(read_value_type(message(top))); break;
      case pf::Profile::sample: p.samples.push_back(view(top)); break;
      case pf::Profile::mapping: p.mappings.push_back(read_mapping(message(top))); break;
      case pf::Profile::location: p.locations.push_back(read_location(message(top))); break;
      case pf::Profile::function: p.functions.push_back(read_function(message(top))); break;
      case pf::Profile::string_table: {
        protozero::data_view v = view(top);
        p.strings.emplace_back(v.data(), v.size());
        break;
      }
      case pf::Profile::time_nanos: p.time_nanos = i64(top); break;
      case pf::Profile::duration_nanos: p.duration_nanos = i64(top); break;
      case pf::Profile::period_type: p.period_type = read_value_type(message(top)); break;
      case pf::Profile::period: p.period = i64(top); break;
      case pf::Profile::default_sample_type: p.default_sample_type = i64(top); break;
      case pf::Profile::comment: repeated(top, [&](uint64_t v) { p.comments.push_back(int64_t(v)); }); break;
      default: top.skip();
    }
  }
  *at = pb.size();
}

// Old id -> new id, for one input's table.
class IdMap {
 public:
  void set(uint64_t from, uint64_t to) { map_[from] = to; }
  uint64_t at(uint64_t from, const std::string& name, const char* what) const {
    auto it = map_.find(from);
    if (it == map_.end())
      throw InputError(name + ": refers to " + what + " " + std::to_string(from) + ", which is not in the profile");
    return it->second;
  }

 private:
  std::unordered_map<uint64_t, uint64_t> map_;
};

// One input's mappings, functions and locations, added to the builder (equal
// mappings and equal addresses in them shared across inputs); `locations`
// gets the input's location ids -> the merged ones.
template <class Str>
void merge_tables(const InputProfile& p, const std::string& name, Str&& str, PprofBuilder& b,
                  std::unordered_map<std::string, uint64_t>& mapping_ids,
                  std::unordered_map<std::string, uint64_t>& location_ids, IdMap& locations) {
  IdMap mappings, functions;
  for (const auto& m : p.mappings) {
    std::string key = std::string(str(m.filename)) + '\0' + std::string(str(m.build_id)) + '\0' + std::to_string(m.start) +
                      '\0' + std::to_string(m.limit) + '\0' + std::to_string(m.offset);
    auto [it, fresh] = mapping_ids.try_emplace(key, 0);
    if (fresh) {
      PprofBuilder::Mapping pm;
      pm.memory_start = m.start;
      pm.memory_limit = m.limit;
      pm.file_offset = m.offset;
      pm.filename = std::string(str(m.filename));
      pm.build_id = std::string(str(m.build_id));
      pm.has_functions = m.functions;
      pm.has_filenames = m.filenames;
      pm.has_line_numbers = m.line_numbers;
      pm.has_inline_frames = m.inline_frames;
      it->second = b.add_mapping(pm);
    }
    mappings.set(m.id, it->second);
  }
  for (const auto& f : p.functions) functions.set(f.id, b.function(str(f.name), str(f.filename), f.start_line));
  std::vector<PprofBuilder::Line> lines;
  for (const auto& l : p.locations) {
    const uint64_t mapping = l.mapping ? mappings.at(l.mapping, name, "mapping") : 0;
    lines.clear();
    for (const auto& [fid, line] : l.lines) lines.push_back(PprofBuilder::Line{functions.at(fid, name, "function"), line});
    if (l.address && mapping) {
      // The same address of the same mapping: one location.
      auto [it, fresh] = location_ids.try_emplace(std::to_string(mapping) + ':' + std::to_string(l.address), 0);
      if (fresh) it->second = b.add_location(mapping, l.address, lines.data(), lines.size());
      locations.set(l.id, it->second);
    } else {
      locations.set(l.id, b.add_location(mapping, l.address, lines.data(), lines.size()));
    }
  }
}

// A sample's locations (as merged ids), values and labels (strings re-interned).
template <class Str>
void read_sample_fields(const protozero::data_view& s, std::string_view pb, const std::string& name,
                        const IdMap& locations, PprofBuilder& b, Str&& str, std::vector<uint64_t>& locs,
                        std::vector<int64_t>& values, std::vector<PprofBuilder::Label>& sample_labels) {
  try {
    pbf_reader r(s);
    while (r.next()) {
      switch (pf::Sample(r.tag())) {
        case pf::Sample::location_id:
          repeated(r, [&](uint64_t id) { locs.push_back(locations.at(id, name, "location")); });
          break;
        case pf::Sample::value: repeated(r, [&](uint64_t v) { values.push_back(int64_t(v)); }); break;
        case pf::Sample::label: {
          pbf_reader l = message(r);
          int64_t key = 0, sv = 0, num = 0, unit = 0;
          while (l.next()) {
            switch (pf::Label(l.tag())) {
              case pf::Label::key: key = i64(l); break;
              case pf::Label::str: sv = i64(l); break;
              case pf::Label::num: num = i64(l); break;
              case pf::Label::num_unit: unit = i64(l); break;
              default: l.skip();
            }
          }
          sample_labels.push_back(PprofBuilder::Label{b.string_id(str(key)), sv ? b.string_id(str(sv)) : 0, num,
                                                      unit ? b.string_id(str(unit)) : 0});
          break;
        }
        default: r.skip();
      }
    }
  } catch (const protozero::exception& e) {
    throw InputError::at_offset(name, uint64_t(s.data() - pb.data()), std::string("malformed sample: ") + e.what());
  }
}

}  // namespace

bool PprofMerger::add(std::string_view bytes, const std::string& name,
                      const std::vector<std::pair<std::string, std::string>>& labels, std::string* mismatch) {
  InflatedBytes inflated;
  std::string_view pb = bytes;
  if (is_gzip(pb)) {
    // The reader's bound: 200 times the compressed size, 256 MiB to 16 GiB.
    const uint64_t limit = std::min<uint64_t>(std::max<uint64_t>(uint64_t(256) << 20, uint64_t(bytes.size()) * 200),
                                              uint64_t(16) << 30);
    inflated = gunzip(pb, name, limit);
    pb = inflated.view();
  }
  InputProfile p;
  uint64_t at = 0;
  try {
    read_profile(pb, p, &at);
  } catch (const protozero::exception& e) {
    throw InputError::at_offset(name, at, std::string("malformed protobuf: ") + e.what());
  }
  if (p.strings.empty()) p.strings.emplace_back();
  auto str = [&](int64_t i) -> std::string_view {
    if (i < 0 || size_t(i) >= p.strings.size())
      throw InputError(name + ": refers to string " + std::to_string(i) + " but the string table has " +
                       std::to_string(p.strings.size()) + " entries");
    return p.strings[size_t(i)];
  };

  // Sample types: the first profile's, which every other must have too.
  std::vector<std::pair<std::string, std::string>> types;
  for (const auto& vt : p.sample_types) types.emplace_back(str(vt.first), str(vt.second));
  if (profiles_ == 0) {
    sample_types_ = types;
    for (const auto& t : types) b_.add_sample_type(t.first, t.second);
    if (p.period_type.first) b_.set_period(str(p.period_type.first), str(p.period_type.second), p.period);
    if (p.default_sample_type) b_.set_default_sample_type(str(p.default_sample_type));
  } else if (types != sample_types_) {
    auto list = [](const std::vector<std::pair<std::string, std::string>>& t) {
      std::string s;
      for (const auto& x : t) s += (s.empty() ? "" : ", ") + x.first + "/" + x.second;
      return s.empty() ? std::string("none") : s;
    };
    if (mismatch) *mismatch = name + " has sample types " + list(types) + ", the first input " + list(sample_types_);
    return false;
  }
  ++profiles_;
  if (p.time_nanos) {
    first_ns_ = first_ns_ ? std::min(first_ns_, p.time_nanos) : p.time_nanos;
    end_ns_ = std::max(end_ns_, p.time_nanos + p.duration_nanos);
  } else {
    end_ns_ = first_ns_ ? end_ns_ : std::max(end_ns_, p.duration_nanos);
  }
  for (int64_t c : p.comments) {
    std::string text(str(c));
    if (std::find(comments_.begin(), comments_.end(), text) == comments_.end()) comments_.push_back(text);
  }

  IdMap locations;
  merge_tables(p, name, str, b_, mapping_ids_, location_ids_, locations);

  std::vector<PprofBuilder::Label> extra;
  for (const auto& kv : labels) extra.push_back(PprofBuilder::Label{b_.string_id(kv.first), b_.string_id(kv.second), 0, 0});
  std::vector<uint64_t> locs;
  std::vector<int64_t> values;
  std::vector<PprofBuilder::Label> sample_labels;
  for (const protozero::data_view& s : p.samples) {
    locs.clear();
    values.clear();
    sample_labels.clear();
    read_sample_fields(s, pb, name, locations, b_, str, locs, values, sample_labels);
    if (values.size() != sample_types_.size())
      throw InputError::at_offset(name, uint64_t(s.data() - pb.data()),
                                  "Sample has " + std::to_string(values.size()) + " values but the profile has " +
                                      std::to_string(sample_types_.size()) + " sample types");
    sample_labels.insert(sample_labels.end(), extra.begin(), extra.end());
    b_.add_sample(locs.data(), locs.size(), values.data(), values.size(), sample_labels.data(), sample_labels.size());
  }
  return true;
}

std::string PprofMerger::finish(bool gzip, int level) {
  if (first_ns_) {
    b_.set_time_nanos(first_ns_);
    b_.set_duration_nanos(end_ns_ - first_ns_);
  } else if (end_ns_) {
    b_.set_duration_nanos(end_ns_);
  }
  for (const auto& c : comments_) b_.add_comment(c);
  return gzip ? b_.encode_gzip(level) : b_.encode();
}

}  // namespace fg
