#include "pprof/pprof_parser.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <unordered_map>
#include <vector>

#include <protozero/exception.hpp>
#include <protozero/pbf_reader.hpp>

#include "diagnostics/input_error.h"
#include "folded/profile_loader.h"
#include "folded/stack_record_queue.h"
#include "pprof/profile_fields.h"
#include "unwind/process_table.h"  // path_base_name

namespace fg {

namespace {

namespace pf = pprof_fields;
using protozero::pbf_reader;
using protozero::pbf_wire_type;

// Maps the format's ids (any non-zero uint64) to indices: a vector when the
// ids are dense (the usual 1..N), a hash map otherwise.
class IdIndex {
 public:
  static constexpr uint32_t kNone = ~uint32_t{0};
  void build(const std::vector<uint64_t>& ids) {
    uint64_t max = 0;
    for (uint64_t id : ids) max = std::max(max, id);
    dense_ = max <= ids.size() * 2 + 16;
    if (dense_) {
      vec_.assign(size_t(max) + 1, kNone);
      for (size_t i = 0; i < ids.size(); ++i) vec_[size_t(ids[i])] = uint32_t(i);
    } else {
      map_.reserve(ids.size());
      for (size_t i = 0; i < ids.size(); ++i) map_.emplace(ids[i], uint32_t(i));
    }
  }
  uint32_t find(uint64_t id) const {
    if (dense_) return id < vec_.size() ? vec_[size_t(id)] : kNone;
    auto it = map_.find(id);
    return it == map_.end() ? kNone : it->second;
  }

 private:
  bool dense_ = true;
  std::vector<uint32_t> vec_;
  std::unordered_map<uint64_t, uint32_t> map_;
};

const char* wire_name(pbf_wire_type t) {
  switch (t) {
    case pbf_wire_type::varint: return "varint";
    case pbf_wire_type::fixed64: return "fixed64";
    case pbf_wire_type::length_delimited: return "length-delimited";
    case pbf_wire_type::fixed32: return "fixed32";
    default: return "unknown";
  }
}

// Places the samples' stacks in the profile's tree, on the calling thread
// or, for a profile of many samples, on a worker thread while the caller
// goes on decoding samples: the decoder only interns names, this only walks
// and grows the tree (disjoint parts of a FoldedProfile). Stacks are placed
// in the order given, so the tree is the same either way.
class SampleTreePlacer {
 public:
  // micro: values are microseconds, summed per node and rounded to ms once.
  SampleTreePlacer(FoldedProfile& into, bool micro, bool threaded) : into_(into), micro_(micro) {
    if (threaded)
      records_ = std::make_unique<StackRecordQueue>([this](uint32_t, const FrameId* frames, size_t n, uint64_t bits) {
        place(frames, n, int64_t(bits));
      });
  }

  // A stack (root first, at least one frame) and its value.
  void add(const FrameId* frames, size_t n, int64_t value) {
    if (records_) records_->add(0, frames, n, uint64_t(value));
    else place(frames, n, value);
  }

  // Every stack placed (the worker's error rethrown), then the grouped
  // microsecond values added.
  void finish() {
    if (records_) records_->finish();
    if (!micro_) return;
    std::vector<std::pair<NodeId, double>> sums(grouped_.begin(), grouped_.end());
    std::sort(sums.begin(), sums.end());
    for (const auto& kv : sums) {
      double w = std::round(kv.second / 1000.0);
      if (w != 0) into_.add_self(kv.first, w);
    }
  }

 private:
  void place(const FrameId* frames, size_t n, int64_t value) {
    nodes_.resize(n);
    into_.add_path(0, frames, n, nodes_.data());
    const NodeId node = n ? nodes_[n - 1] : 0;
    if (micro_) grouped_[node] += double(value);
    else into_.add_self(node, double(value));
  }

  FoldedProfile& into_;
  const bool micro_;
  std::vector<NodeId> nodes_;
  std::unordered_map<NodeId, double> grouped_;
  std::unique_ptr<StackRecordQueue> records_;  // last: stopped before the rest goes
};

class PprofParser {
 public:
  PprofParser(std::string_view pb, const std::string& name, const PprofReadOptions& options)
      : pb_(pb), name_(name), options_(options) {}

  void parse(FoldedProfile& into, PprofReadInfo* info) {
    try {
      parse_top();
      resolve(into, info);
    } catch (const protozero::exception& e) {
      throw error(at_, std::string("malformed protobuf: ") + e.what());
    }
  }

 private:
  struct ValueType {
    int64_t type = 0, unit = 0;
  };
  struct Location {
    uint64_t mapping_id = 0;
    uint32_t lines_start = 0, line_count = 0;
    uint64_t offset = 0;  // of the message, for errors
  };
  struct Span {
    const char* data;
    uint32_t size;
  };
  struct Function {
    int64_t name = 0, system_name = 0;
    uint64_t offset = 0;
  };

  InputError error(uint64_t offset, const std::string& what) const {
    return InputError::at_offset(name_, offset, what);
  }
  uint64_t offset_of(const pbf_reader& r) const { return uint64_t(r.data().data() - pb_.data()); }

  // Reads the current field as a varint, after checking its wire type.
  uint64_t varint(pbf_reader& r, const char* message, const char* field) {
    if (r.wire_type() != pbf_wire_type::varint)
      throw error(at_, std::string(message) + "." + field + " has wire type " + wire_name(r.wire_type()) +
                           ", expected varint");
    return r.get_uint64();
  }
  pbf_reader submessage(pbf_reader& r, const char* message, const char* field) {
    if (r.wire_type() != pbf_wire_type::length_delimited)
      throw error(at_, std::string(message) + "." + field + " has wire type " + wire_name(r.wire_type()) +
                           ", expected a length-delimited message");
    return r.get_message();
  }
  // A repeated integer field, packed or not: fn(value) for each.
  template <typename Fn>
  void repeated_varint(pbf_reader& r, const char* message, const char* field, Fn&& fn) {
    if (r.wire_type() == pbf_wire_type::length_delimited) {
      for (uint64_t v : r.get_packed_uint64()) fn(v);
    } else {
      fn(varint(r, message, field));
    }
  }
  std::string_view str(int64_t index, uint64_t offset, const char* what) const {
    if (index < 0 || uint64_t(index) >= strings_.size())
      throw error(offset, std::string(what) + " refers to string " + std::to_string(index) + " but the string table has " +
                              std::to_string(strings_.size()) + " entries");
    return strings_[size_t(index)];
  }

  void parse_top() {
    pbf_reader top(pb_.data(), pb_.size());
    for (;;) {
      at_ = offset_of(top);
      if (!top.next()) break;
      switch (pf::Profile(top.tag())) {
        case pf::Profile::sample_type: {
          pbf_reader m = submessage(top, "Profile", "sample_type");
          sample_types_.push_back(value_type(m));
          break;
        }
        case pf::Profile::sample: {
          if (top.wire_type() != pbf_wire_type::length_delimited) submessage(top, "Profile", "sample");
          // Read in the second pass, once the tables they refer to are known.
          protozero::data_view v = top.get_view();
          samples_.push_back(Span{v.data(), uint32_t(v.size())});
          break;
        }
        case pf::Profile::mapping: {
          pbf_reader m = submessage(top, "Profile", "mapping");
          mapping(m);
          break;
        }
        case pf::Profile::location: {
          pbf_reader m = submessage(top, "Profile", "location");
          location(m);
          break;
        }
        case pf::Profile::function: {
          pbf_reader m = submessage(top, "Profile", "function");
          function(m);
          break;
        }
        case pf::Profile::string_table: {
          if (top.wire_type() != pbf_wire_type::length_delimited) submessage(top, "Profile", "string_table");
          protozero::data_view v = top.get_view();
          strings_.emplace_back(v.data(), v.size());
          break;
        }
        case pf::Profile::default_sample_type:
          default_sample_type_ = int64_t(varint(top, "Profile", "default_sample_type"));
          default_sample_type_at_ = at_;
          break;
        case pf::Profile::period_type: {
          pbf_reader m = submessage(top, "Profile", "period_type");
          value_type(m);
          break;
        }
        case pf::Profile::drop_frames:
        case pf::Profile::keep_frames:
        case pf::Profile::time_nanos:
        case pf::Profile::duration_nanos:
        case pf::Profile::period:
        case pf::Profile::doc_url:
          varint(top, "Profile", "integer field");
          break;
        case pf::Profile::comment:
          repeated_varint(top, "Profile", "comment", [](uint64_t) {});
          break;
        default:
          top.skip();  // a field of a newer schema
      }
    }
    at_ = pb_.size();
  }

  ValueType value_type(pbf_reader& m) {
    ValueType vt;
    for (;;) {
      at_ = offset_of(m);
      if (!m.next()) break;
      if (m.tag() == uint32_t(pf::ValueType::type)) vt.type = int64_t(varint(m, "ValueType", "type"));
      else if (m.tag() == uint32_t(pf::ValueType::unit)) vt.unit = int64_t(varint(m, "ValueType", "unit"));
      else m.skip();
    }
    return vt;
  }

  void mapping(pbf_reader& m) {
    uint64_t id = 0;
    int64_t filename = 0;
    uint64_t start = at_;
    for (;;) {
      at_ = offset_of(m);
      if (!m.next()) break;
      switch (pf::Mapping(m.tag())) {
        case pf::Mapping::id: id = varint(m, "Mapping", "id"); break;
        case pf::Mapping::filename: filename = int64_t(varint(m, "Mapping", "filename")); break;
        case pf::Mapping::memory_start:
        case pf::Mapping::memory_limit:
        case pf::Mapping::file_offset:
        case pf::Mapping::build_id:
        case pf::Mapping::has_functions:
        case pf::Mapping::has_filenames:
        case pf::Mapping::has_line_numbers:
        case pf::Mapping::has_inline_frames: varint(m, "Mapping", "integer field"); break;
        default: m.skip();
      }
    }
    if (id == 0) throw error(start, "Mapping with id 0 (reserved)");
    mapping_ids_.push_back(id);
    mapping_files_.push_back(filename);
    mapping_offsets_.push_back(start);
  }

  void location(pbf_reader& m) {
    uint64_t id = 0;
    Location loc;
    loc.offset = at_;
    loc.lines_start = uint32_t(lines_.size());
    for (;;) {
      at_ = offset_of(m);
      if (!m.next()) break;
      switch (pf::Location(m.tag())) {
        case pf::Location::id: id = varint(m, "Location", "id"); break;
        case pf::Location::mapping_id: loc.mapping_id = varint(m, "Location", "mapping_id"); break;
        case pf::Location::address: varint(m, "Location", "address"); break;
        case pf::Location::is_folded: varint(m, "Location", "is_folded"); break;
        case pf::Location::line: {
          pbf_reader l = submessage(m, "Location", "line");
          uint64_t function_id = 0;
          for (;;) {
            at_ = offset_of(l);
            if (!l.next()) break;
            if (l.tag() == uint32_t(pf::Line::function_id)) function_id = varint(l, "Line", "function_id");
            else if (l.tag() == uint32_t(pf::Line::line) || l.tag() == uint32_t(pf::Line::column)) varint(l, "Line", "line");
            else l.skip();
          }
          lines_.push_back(function_id);
          break;
        }
        default: m.skip();
      }
    }
    if (id == 0) throw error(loc.offset, "Location with id 0 (reserved)");
    loc.line_count = uint32_t(lines_.size() - loc.lines_start);
    location_ids_.push_back(id);
    locations_.push_back(loc);
  }

  void function(pbf_reader& m) {
    uint64_t id = 0;
    Function f;
    f.offset = at_;
    for (;;) {
      at_ = offset_of(m);
      if (!m.next()) break;
      switch (pf::Function(m.tag())) {
        case pf::Function::id: id = varint(m, "Function", "id"); break;
        case pf::Function::name: f.name = int64_t(varint(m, "Function", "name")); break;
        case pf::Function::system_name: f.system_name = int64_t(varint(m, "Function", "system_name")); break;
        case pf::Function::filename:
        case pf::Function::start_line: varint(m, "Function", "integer field"); break;
        default: m.skip();
      }
    }
    if (id == 0) throw error(f.offset, "Function with id 0 (reserved)");
    function_ids_.push_back(id);
    functions_.push_back(f);
  }

  size_t choose_value(std::string* units, bool* micro) {
    if (sample_types_.empty() && !samples_.empty()) throw error(0, "samples but no sample_type");
    std::vector<std::string_view> names;
    for (const ValueType& vt : sample_types_) names.push_back(str(vt.type, 0, "a sample_type"));
    size_t index = sample_types_.empty() ? 0 : sample_types_.size() - 1;
    const std::string& want = options_.sample_index;
    if (!want.empty()) {
      bool numeric = want.find_first_not_of("0123456789") == std::string::npos;
      size_t found = names.size();
      if (numeric) {
        found = size_t(std::stoull(want));
      } else {
        for (size_t i = 0; i < names.size(); ++i)
          if (names[i] == want) found = i;
      }
      if (found >= names.size()) {
        std::string list;
        for (size_t i = 0; i < names.size(); ++i)
          list += (list.empty() ? "" : ", ") + std::to_string(i) + "=" + std::string(names[i]);
        throw UsageError("--sample-index " + want + ": " + name_ + " has sample types " + (list.empty() ? "(none)" : list));
      }
      index = found;
    } else if (default_sample_type_) {
      std::string_view d = str(default_sample_type_, default_sample_type_at_, "default_sample_type");
      for (size_t i = 0; i < names.size(); ++i)
        if (names[i] == d) index = i;
    }
    *micro = false;
    if (sample_types_.empty()) {
      *units = "samples";
      return 0;
    }
    std::string_view type = names[index];
    std::string_view unit = str(sample_types_[index].unit, 0, "a sample_type");
    if (unit == "nanoseconds") {
      // fgtool fold shows off-CPU and wall time in microseconds, summed per
      // stack before rounding; doing the same here makes a round trip exact.
      *micro = type == "off_cpu" || type == "wall";
      *units = *micro ? "us" : "ns";
    } else if (unit == "microseconds") {
      *units = "us";
    } else if (unit == "count") {
      *units = type == "samples" ? "samples" : "events";
    } else {
      *units = unit.empty() ? std::string(type) : std::string(unit);
    }
    return index;
  }

  void resolve(FoldedProfile& into, PprofReadInfo* info) {
    if (strings_.empty() || !strings_[0].empty()) {
      if (!strings_.empty()) throw error(0, "string_table[0] is not the empty string");
      strings_.emplace_back();
    }
    std::string units;
    bool micro = false;
    const size_t value_index = choose_value(&units, &micro);

    mappings_.build(mapping_ids_);
    functions_index_.build(function_ids_);
    locations_index_.build(location_ids_);
    intern_locations(into);
    const uint64_t kept = fold_samples(into, value_index, micro);
    into.units = units;
    if (info) {
      info->sample_types.clear();
      for (const ValueType& vt : sample_types_)
        info->sample_types.emplace_back(std::string(str(vt.type, 0, "sample_type")), std::string(str(vt.unit, 0, "sample_type")));
      info->value_index = value_index;
      info->samples = samples_.size();
      info->kept_samples = kept;
      info->locations = locations_.size();
      info->functions = functions_.size();
      info->mappings = mapping_ids_.size();
      info->protobuf_bytes = pb_.size();
    }
  }

  // Each location's frames, root-most first (a location's lines are
  // innermost first), interned once.
  void intern_locations(FoldedProfile& into) {
    std::vector<FrameId> function_frames(functions_.size(), FoldedProfile::kNoFrame);
    loc_frames_start_.resize(locations_.size() + 1);
    loc_frames_.clear();
    for (size_t i = 0; i < locations_.size(); ++i) {
      const Location& loc = locations_[i];
      loc_frames_start_[i] = uint32_t(loc_frames_.size());
      std::string_view object;
      if (loc.mapping_id) {
        uint32_t mi = mappings_.find(loc.mapping_id);
        if (mi == IdIndex::kNone)
          throw error(loc.offset, "Location refers to mapping " + std::to_string(loc.mapping_id) + ", which is not in the profile");
        object = str(mapping_files_[mi], mapping_offsets_[mi], "Mapping.filename");
      }
      for (uint32_t k = loc.line_count; k-- > 0;) {
        uint64_t fid = lines_[loc.lines_start + k];
        uint32_t fi = functions_index_.find(fid);
        if (fi == IdIndex::kNone)
          throw error(loc.offset, "Line refers to function " + std::to_string(fid) + ", which is not in the profile");
        FrameId& frame = function_frames[fi];
        if (frame == FoldedProfile::kNoFrame) {
          const Function& f = functions_[fi];
          std::string_view n = str(f.name, f.offset, "Function.name");
          if (n.empty()) n = str(f.system_name, f.offset, "Function.system_name");
          if (n.empty()) n = "[unknown]";
          frame = into.intern_from_input(n);
        }
        loc_frames_.push_back(frame);
        if (!object.empty() && into.frame_object(frame).empty()) into.set_frame_object(frame, object);
      }
      if (loc.line_count == 0) {
        // No symbol: the stackcollapse convention, "[object]".
        FrameId frame =
            into.intern_from_input(object.empty() ? std::string("[unknown]") : "[" + std::string(path_base_name(object)) + "]");
        if (!object.empty() && into.frame_object(frame).empty()) into.set_frame_object(frame, object);
        loc_frames_.push_back(frame);
      }
    }
    loc_frames_start_[locations_.size()] = uint32_t(loc_frames_.size());
  }

  // One sample: its location indices (leaf first) into `stack`, which --tag
  // filters it matches into tag_hit; returns its value at value_index.
  int64_t read_sample(const Span& s, size_t value_index, std::vector<uint32_t>& stack, std::vector<bool>& tag_hit) {
    pbf_reader r(s.data, s.size);
    const uint64_t sample_at = uint64_t(s.data - pb_.data());
    stack.clear();
    int64_t value = 0;
    size_t values = 0;
    std::fill(tag_hit.begin(), tag_hit.end(), false);
    for (;;) {
      at_ = offset_of(r);
      if (!r.next()) break;
      switch (pf::Sample(r.tag())) {
        case pf::Sample::location_id:
          repeated_varint(r, "Sample", "location_id", [&](uint64_t id) {
            uint32_t li = locations_index_.find(id);
            if (li == IdIndex::kNone)
              throw error(at_, "Sample refers to location " + std::to_string(id) + ", which is not in the profile");
            stack.push_back(li);
          });
          break;
        case pf::Sample::value:
          repeated_varint(r, "Sample", "value", [&](uint64_t v) {
            if (values == value_index) value = int64_t(v);
            ++values;
          });
          break;
        case pf::Sample::label: {
          pbf_reader l = submessage(r, "Sample", "label");
          if (!tag_hit.empty()) label(l, tag_hit);
          break;
        }
        default: r.skip();
      }
    }
    if (values != sample_types_.size())
      throw error(sample_at, "Sample has " + std::to_string(values) + " values but the profile has " +
                                 std::to_string(sample_types_.size()) + " sample types");
    return value;
  }

  // Adds each sample's value at value_index to its stack's node; returns how
  // many samples were kept (the --tag filters, a non-zero value).
  uint64_t fold_samples(FoldedProfile& into, size_t value_index, bool micro) {
    // Tag filters: (key, value) text compared with each label.
    const auto& tags = options_.tags;
    std::vector<uint32_t> stack;  // location indices, leaf first
    std::vector<FrameId> frames;  // root first
    uint64_t kept = 0;
    FrameId no_stack = FoldedProfile::kNoFrame;
    std::vector<bool> tag_hit(tags.size());
    const uint64_t thread_after = options_.tree_thread_after;
    SampleTreePlacer placer(into, micro, thread_after && samples_.size() >= thread_after);
    for (const Span& s : samples_) {
      const int64_t value = read_sample(s, value_index, stack, tag_hit);
      bool keep = true;
      for (bool hit : tag_hit) keep &= hit;
      if (!keep || value == 0) continue;
      ++kept;
      // Root first: the last location first, each location's frames
      // already root-most first. Only the leaf-most kMaxStackDepth frames
      // are kept, as the other readers do.
      size_t depth = 0;
      for (uint32_t li : stack) depth += loc_frames_start_[li + 1] - loc_frames_start_[li];
      size_t skip = depth > kMaxStackDepth ? depth - kMaxStackDepth : 0;
      frames.clear();
      for (size_t i = stack.size(); i-- > 0;) {
        const FrameId* f = loc_frames_.data() + loc_frames_start_[stack[i]];
        const FrameId* end = loc_frames_.data() + loc_frames_start_[stack[i] + 1];
        for (; f != end; ++f) {
          if (skip) {
            --skip;
            continue;
          }
          frames.push_back(*f);
        }
      }
      if (depth == 0) {
        if (no_stack == FoldedProfile::kNoFrame) no_stack = into.intern("[no stack]");
        frames.push_back(no_stack);
      }
      placer.add(frames.data(), frames.size(), value);
    }
    placer.finish();
    return kept;
  }

  void label(pbf_reader& l, std::vector<bool>& tag_hit) {
    int64_t key = 0, s = 0, num = 0;
    bool has_str = false;
    uint64_t at = at_;
    for (;;) {
      at_ = offset_of(l);
      if (!l.next()) break;
      switch (pf::Label(l.tag())) {
        case pf::Label::key: key = int64_t(varint(l, "Label", "key")); break;
        case pf::Label::str: s = int64_t(varint(l, "Label", "str")); has_str = true; break;
        case pf::Label::num: num = int64_t(varint(l, "Label", "num")); break;
        case pf::Label::num_unit: varint(l, "Label", "num_unit"); break;
        default: l.skip();
      }
    }
    std::string_view k = str(key, at, "Label.key");
    std::string num_text;
    std::string_view v;
    if (has_str && s != 0) {
      v = str(s, at, "Label.str");
    } else {
      num_text = std::to_string(num);
      v = num_text;
    }
    for (size_t i = 0; i < options_.tags.size(); ++i)
      if (options_.tags[i].first == k && options_.tags[i].second == v) tag_hit[i] = true;
  }

  std::string_view pb_;
  const std::string& name_;
  const PprofReadOptions& options_;
  uint64_t at_ = 0;  // where the field being read starts (for errors)
  std::vector<ValueType> sample_types_;
  std::vector<Span> samples_;
  std::vector<std::string_view> strings_;
  std::vector<uint64_t> mapping_ids_, mapping_offsets_;
  std::vector<int64_t> mapping_files_;
  std::vector<uint64_t> location_ids_, lines_;
  std::vector<Location> locations_;
  std::vector<uint64_t> function_ids_;
  std::vector<Function> functions_;
  int64_t default_sample_type_ = 0;
  uint64_t default_sample_type_at_ = 0;
  IdIndex mappings_, functions_index_, locations_index_;
  std::vector<uint32_t> loc_frames_start_;
  std::vector<FrameId> loc_frames_;
};

}  // namespace

void parse_pprof(std::string_view pb, const std::string& name, const PprofReadOptions& options, FoldedProfile& into,
                 PprofReadInfo* info) {
  PprofParser parser(pb, name, options);
  parser.parse(into, info);
}

}  // namespace fg
