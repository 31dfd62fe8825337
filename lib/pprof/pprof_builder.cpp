#include "pprof/pprof_builder.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <vector>
#include <stdexcept>

#include <protozero/pbf_builder.hpp>
#include <protozero/varint.hpp>

#include "pprof/pprof_gzip.h"
#include "pprof/profile_fields.h"

namespace fg {

namespace pf = pprof_fields;

namespace {

// A sample's labels, written into the Sample message being built.
void add_labels(protozero::pbf_builder<pf::Sample>& b, const PprofBuilder::Label* labels, size_t label_count) {
  for (size_t i = 0; i < label_count; ++i) {
    protozero::pbf_builder<pf::Label> l(b, pf::Sample::label);
    l.add_int64(pf::Label::key, labels[i].key);
    if (labels[i].str) {
      l.add_int64(pf::Label::str, labels[i].str);
    } else {
      l.add_int64(pf::Label::num, labels[i].num);
      if (labels[i].num_unit) l.add_int64(pf::Label::num_unit, labels[i].num_unit);
    }
  }
}

// A packed repeated varint field: the values through protozero's encoder
// into `buffer` (grown as needed), then the field at once. protozero's
// add_packed_* append to the std::string a byte at a time, each with a
// capacity check, and move the bytes when the length is known: half of a
// large export's sample encoding (busy3.data). The bytes are the same.
template <class Builder, class Tag, class T>
void add_packed_varints(Builder& b, Tag tag, const T* values, size_t count, std::string& buffer) {
  if (!count) return;
  if (buffer.size() < count * protozero::max_varint_length) buffer.resize(count * protozero::max_varint_length);
  char* p = buffer.data();
  for (size_t i = 0; i < count; ++i) p += protozero::add_varint_to_buffer(p, uint64_t(values[i]));
  b.add_bytes(tag, buffer.data(), size_t(p - buffer.data()));
}

}  // namespace

PprofBuilder::PprofBuilder() {
  strings_.emplace_back();
  string_ids_.emplace(std::string_view(), 0);
}

std::string_view PprofBuilder::store(std::string_view s) {
  if (s.size() > block_left_) {
    size_t size = std::max<size_t>(s.size(), 1 << 16);
    string_blocks_.emplace_back(new char[size]);
    block_pos_ = string_blocks_.back().get();
    block_left_ = size;
  }
  char* p = block_pos_;
  if (!s.empty()) std::memcpy(p, s.data(), s.size());
  block_pos_ += s.size();
  block_left_ -= s.size();
  return std::string_view(p, s.size());
}

int64_t PprofBuilder::string_id(std::string_view s) {
  auto it = string_ids_.find(s);
  if (it != string_ids_.end()) return it->second;
  std::string_view kept = store(s);
  int64_t id = int64_t(strings_.size());
  strings_.push_back(kept);
  string_ids_.emplace(kept, id);
  return id;
}

void PprofBuilder::add_sample_type(std::string_view type, std::string_view unit) {
  protozero::pbf_builder<pf::Profile> top(sample_types_bytes_);
  protozero::pbf_builder<pf::ValueType> vt(top, pf::Profile::sample_type);
  vt.add_int64(pf::ValueType::type, string_id(type));
  vt.add_int64(pf::ValueType::unit, string_id(unit));
  ++sample_types_;
}

void PprofBuilder::set_period(std::string_view type, std::string_view unit, int64_t period) {
  period_type_ = string_id(type);
  period_unit_ = string_id(unit);
  period_ = period;
  has_period_ = true;
}

uint64_t PprofBuilder::add_mapping(const Mapping& m) {
  uint64_t id = next_mapping_++;
  protozero::pbf_builder<pf::Profile> top(mappings_bytes_);
  protozero::pbf_builder<pf::Mapping> b(top, pf::Profile::mapping);
  b.add_uint64(pf::Mapping::id, id);
  if (m.memory_start) b.add_uint64(pf::Mapping::memory_start, m.memory_start);
  if (m.memory_limit) b.add_uint64(pf::Mapping::memory_limit, m.memory_limit);
  if (m.file_offset) b.add_uint64(pf::Mapping::file_offset, m.file_offset);
  if (int64_t f = string_id(m.filename)) b.add_int64(pf::Mapping::filename, f);
  if (int64_t bid = string_id(m.build_id)) b.add_int64(pf::Mapping::build_id, bid);
  if (m.has_functions) b.add_bool(pf::Mapping::has_functions, true);
  if (m.has_filenames) b.add_bool(pf::Mapping::has_filenames, true);
  if (m.has_line_numbers) b.add_bool(pf::Mapping::has_line_numbers, true);
  if (m.has_inline_frames) b.add_bool(pf::Mapping::has_inline_frames, true);
  return id;
}

uint64_t PprofBuilder::function(std::string_view name, std::string_view filename, int64_t start_line) {
  FunctionKey key{string_id(name), string_id(filename)};
  auto it = functions_.find(key);
  if (it != functions_.end()) return it->second;
  uint64_t id = next_function_++;
  functions_.emplace(key, id);
  protozero::pbf_builder<pf::Profile> top(functions_bytes_);
  protozero::pbf_builder<pf::Function> b(top, pf::Profile::function);
  b.add_uint64(pf::Function::id, id);
  if (key.name) {
    b.add_int64(pf::Function::name, key.name);
    b.add_int64(pf::Function::system_name, key.name);
  }
  if (key.filename) b.add_int64(pf::Function::filename, key.filename);
  if (start_line) b.add_int64(pf::Function::start_line, start_line);
  return id;
}

uint64_t PprofBuilder::add_location(uint64_t mapping_id, uint64_t address, const Line* lines, size_t line_count) {
  uint64_t id = next_location_++;
  encode_location(locations_bytes_, id, mapping_id, address, lines, line_count, location_scratch_);
  return id;
}

void PprofBuilder::encode_location(std::string& out, uint64_t id, uint64_t mapping_id, uint64_t address,
                                   const Line* lines, size_t line_count, std::string scratch[2]) {
  // Built in scratch buffers and added whole: a nested builder reserves room
  // for its length and moves its bytes back when it is shorter, for each of
  // millions of small messages.
  std::string& message = scratch[0];
  std::string& line = scratch[1];
  message.clear();
  {
    protozero::pbf_builder<pf::Location> b(message);
    b.add_uint64(pf::Location::id, id);
    if (mapping_id) b.add_uint64(pf::Location::mapping_id, mapping_id);
    if (address) b.add_uint64(pf::Location::address, address);
    for (size_t i = 0; i < line_count; ++i) {
      line.clear();
      {
        protozero::pbf_builder<pf::Line> l(line);
        l.add_uint64(pf::Line::function_id, lines[i].function_id);
        if (lines[i].line) l.add_int64(pf::Line::line, lines[i].line);
      }
      b.add_message(pf::Location::line, line);
    }
  }
  protozero::pbf_builder<pf::Profile> top(out);
  top.add_message(pf::Profile::location, message);
}

void PprofBuilder::append_locations(std::string&& encoded, uint64_t count) {
  if (locations_bytes_.empty()) locations_bytes_ = std::move(encoded);
  else locations_bytes_ += encoded;
  next_location_ += count;
}

void PprofBuilder::add_sample(const uint64_t* location_ids, size_t location_count, const int64_t* values,
                              size_t value_count, const Label* labels, size_t label_count) {
  {
    // The builders write the sample's length when they go out of scope: that
    // must happen before the bytes can be shipped (ship_full_samples).
    protozero::pbf_builder<pf::Profile> top(samples_bytes_);
    protozero::pbf_builder<pf::Sample> b(top, pf::Profile::sample);
    add_packed_varints(b, pf::Sample::location_id, location_ids, location_count, packed_);
    add_packed_varints(b, pf::Sample::value, values, value_count, packed_);
    add_labels(b, labels, label_count);
  }
  ++samples_;
  ship_full_samples();
}

std::string PprofBuilder::encode_labels(const Label* labels, size_t label_count) {
  std::string out;
  protozero::pbf_builder<pf::Sample> b(out);
  add_labels(b, labels, label_count);
  return out;
}

void PprofBuilder::add_sample(const uint64_t* location_ids, size_t location_count, const int64_t* values,
                              size_t value_count, std::string_view encoded_labels) {
  scratch_.clear();
  {
    protozero::pbf_builder<pf::Sample> b(scratch_);
    add_packed_varints(b, pf::Sample::location_id, location_ids, location_count, packed_);
    add_packed_varints(b, pf::Sample::value, values, value_count, packed_);
  }
  scratch_.append(encoded_labels.data(), encoded_labels.size());
  {
    protozero::pbf_builder<pf::Profile> top(samples_bytes_);
    top.add_message(pf::Profile::sample, scratch_);
  }
  ++samples_;
  ship_full_samples();
}

std::string PprofBuilder::encode() const {
  std::string out;
  out.reserve(sample_types_bytes_.size() + samples_bytes_.size());
  out += sample_types_bytes_;
  out += samples_bytes_;
  out += encode_after_samples();
  return out;
}

// Everything after the samples: mappings, locations, functions, strings and
// the scalar fields.
std::string PprofBuilder::encode_after_samples() const {
  std::string trailer = encode_trailer();
  std::string out;
  out.reserve(mappings_bytes_.size() + locations_bytes_.size() + functions_bytes_.size() + trailer.size());
  out += mappings_bytes_;
  out += locations_bytes_;
  out += functions_bytes_;
  out += trailer;
  return out;
}

// The strings and the scalar fields (what follows the functions).
std::string PprofBuilder::encode_trailer() const {
  std::string out;
  size_t strings_bytes = 0;
  for (const auto& s : strings_) strings_bytes += s.size() + 6;
  out.reserve(strings_bytes + 64);
  protozero::pbf_builder<pf::Profile> top(out);
  for (const auto& s : strings_) top.add_string(pf::Profile::string_table, s.data(), s.size());
  if (time_nanos_) top.add_int64(pf::Profile::time_nanos, time_nanos_);
  if (duration_nanos_) top.add_int64(pf::Profile::duration_nanos, duration_nanos_);
  if (has_period_) {
    protozero::pbf_builder<pf::ValueType> vt(top, pf::Profile::period_type);
    vt.add_int64(pf::ValueType::type, period_type_);
    vt.add_int64(pf::ValueType::unit, period_unit_);
  }
  if (has_period_) top.add_int64(pf::Profile::period, period_);
  if (!comments_.empty()) top.add_packed_int64(pf::Profile::comment, comments_.begin(), comments_.end());
  if (default_sample_type_) top.add_int64(pf::Profile::default_sample_type, default_sample_type_);
  return out;
}

// A shipped run's buffer comes back with its member and is filled again:
// 8 MiB of fresh pages for each of a large export's dozen runs was 2,000
// page faults a run on the thread adding samples.
void PprofBuilder::ship_full_samples() {
  constexpr size_t kChunk = 8u << 20;
  if (stream_level_ < 0 || samples_bytes_.size() < kChunk) return;
  // Two members in flight at most: memory stays a few chunks.
  while (pending_members_.size() >= 2) take_member();
  std::string chunk;
  if (!shipped_prefix_) {
    chunk.reserve(sample_types_bytes_.size() + samples_bytes_.size());
    chunk = sample_types_bytes_;
    chunk += samples_bytes_;
    shipped_prefix_ = true;
    samples_bytes_.clear();  // its capacity is the next run's
  } else {
    chunk.swap(samples_bytes_);
    if (!spare_runs_.empty()) {
      samples_bytes_.swap(spare_runs_.back());
      spare_runs_.pop_back();
      samples_bytes_.clear();
    }
    samples_bytes_.reserve(kChunk + (64 << 10));
  }
  int level = stream_level_;
  pending_members_.push_back(std::async(std::launch::async, [c = std::move(chunk), level]() mutable {
    ShippedRun r;
    r.member = gzip_member(c, level);
    r.run = std::move(c);
    return r;
  }));
}

void PprofBuilder::take_member() {
  ShippedRun r = pending_members_.front().get();
  pending_members_.pop_front();
  done_members_.push_back(std::move(r.member));
  spare_runs_.push_back(std::move(r.run));
}

std::string PprofBuilder::encode_gzip(int level) {
  std::string trailer = encode_trailer();
  if (!shipped_prefix_)
    return gzip_pieces({sample_types_bytes_, samples_bytes_, mappings_bytes_, locations_bytes_, functions_bytes_, trailer},
                       level);
  // The rest as more members, compressed straight from the parts (no copy
  // into one buffer) while the last shipped runs finish on their threads.
  std::string rest = gzip_pieces({samples_bytes_, mappings_bytes_, locations_bytes_, functions_bytes_, trailer}, level);
  while (!pending_members_.empty()) take_member();
  spare_runs_.clear();
  done_members_.push_back(std::move(rest));
  std::string out;
  size_t total = 0;
  for (const auto& m : done_members_) total += m.size();
  out.reserve(total);
  for (auto& m : done_members_) {
    out += m;
    std::string().swap(m);  // the whole file is not held twice
  }
  done_members_.clear();
  return out;
}

}  // namespace fg
