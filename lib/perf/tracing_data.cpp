#include "perf/tracing_data.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "diagnostics/input_error.h"
#include "perf/perf_abi.h"

namespace fg {

using perf_abi::load;

const TracepointField* TracepointFormat::field(std::string_view n) const {
  for (const auto& f : fields)
    if (f.name == n) return &f;
  return nullptr;
}

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// Value of "key:VALUE;" inside a field line, or empty.
std::string_view attribute(std::string_view line, std::string_view key) {
  size_t pos = 0;
  while ((pos = line.find(key, pos)) != std::string_view::npos) {
    bool at_start = pos == 0 || line[pos - 1] == '\t' || line[pos - 1] == ' ' || line[pos - 1] == ';';
    if (at_start && pos + key.size() < line.size() && line[pos + key.size()] == ':') {
      size_t start = pos + key.size() + 1;
      size_t end = line.find(';', start);
      return trim(line.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    }
    pos += key.size();
  }
  return {};
}

uint64_t to_u64(std::string_view s) {
  std::string tmp(s);
  return std::strtoull(tmp.c_str(), nullptr, 10);
}

bool is_ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// "char prev_comm[16]" -> type "char", name "prev_comm", array.
void parse_decl(std::string_view decl, TracepointField& f) {
  decl = trim(decl);
  std::string_view base = decl;
  size_t bracket = decl.rfind('[');
  // "__data_loc char[] name": the brackets belong to the type, the name follows.
  size_t name_end = decl.size();
  if (bracket != std::string_view::npos && decl.back() == ']') {
    f.is_array = true;
    name_end = bracket;
    base = trim(decl.substr(0, bracket));
    name_end = base.size();
  }
  size_t name_start = name_end;
  while (name_start > 0 && is_ident_char(base[name_start - 1])) --name_start;
  f.name = std::string(base.substr(name_start, name_end - name_start));
  f.type = std::string(trim(base.substr(0, name_start)));
  if (f.type.rfind("__data_loc", 0) == 0) f.is_data_loc = true;
  if (f.type.rfind("__rel_loc", 0) == 0) f.is_rel_loc = true;
  bool char_type = f.type.find("char") != std::string::npos;
  f.is_string = char_type && (f.is_array || ((f.is_data_loc || f.is_rel_loc) && f.type.find("[]") != std::string::npos));
}

class Blob {
 public:
  Blob(std::string_view b, const std::string& source, uint64_t base) : b_(b), source_(source), base_(base) {}
  [[noreturn]] void fail(const std::string& what) const {
    throw InputError::at_offset(source_, base_ + pos_, "TRACING_DATA: " + what);
  }
  const uint8_t* take(uint64_t n, const char* what) {
    if (n > b_.size() - pos_)
      fail(std::string(what) + " needs " + std::to_string(n) + " bytes, only " + std::to_string(b_.size() - pos_) +
           " left");
    const uint8_t* p = reinterpret_cast<const uint8_t*>(b_.data()) + pos_;
    pos_ += n;
    return p;
  }
  template <typename T>
  T get(const char* what) {
    return load<T>(take(sizeof(T), what));
  }
  std::string_view cstring(const char* what) {
    size_t end = b_.find('\0', pos_);
    if (end == std::string_view::npos) fail(std::string(what) + " is not NUL-terminated");
    std::string_view s = b_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return s;
  }
  std::string_view text(uint64_t n, const char* what) {
    return std::string_view(reinterpret_cast<const char*>(take(n, what)), n);
  }
  bool at_end() const { return pos_ >= b_.size(); }
  size_t pos() const { return pos_; }

 private:
  std::string_view b_;
  const std::string& source_;
  uint64_t base_ = 0;
  size_t pos_ = 0;
};

}  // namespace

TracepointFormat TracingData::parse_format(std::string_view text, const std::string& system) {
  TracepointFormat fmt;
  fmt.system = system;
  size_t pos = 0;
  bool common = true;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = trim(text.substr(pos, end - pos));
    pos = end + 1;
    if (line.empty()) {
      // perf's formats separate the common fields from the event's by a blank line.
      if (!fmt.fields.empty()) common = false;
      continue;
    }
    if (line.rfind("name:", 0) == 0) {
      fmt.name = std::string(trim(line.substr(5)));
    } else if (line.rfind("ID:", 0) == 0) {
      fmt.id = to_u64(trim(line.substr(3)));
    } else if (line.rfind("print fmt:", 0) == 0) {
      fmt.print_fmt = std::string(trim(line.substr(10)));
    } else if (line.rfind("field:", 0) == 0 || line.rfind("field special:", 0) == 0) {
      TracepointField f;
      size_t colon = line.find(':');
      size_t semi = line.find(';', colon);
      if (semi == std::string_view::npos) continue;
      parse_decl(line.substr(colon + 1, semi - colon - 1), f);
      f.offset = static_cast<uint32_t>(to_u64(attribute(line, "offset")));
      f.size = static_cast<uint32_t>(to_u64(attribute(line, "size")));
      f.is_signed = attribute(line, "signed") == "1";
      f.is_common = common && f.name.rfind("common_", 0) == 0;
      if (!f.name.empty()) fmt.fields.push_back(std::move(f));
    }
  }
  return fmt;
}

TracingData TracingData::parse(std::string_view blob, const std::string& source, uint64_t base_offset) {
  TracingData td;
  Blob b(blob, source, base_offset);
  static const char magic[] = "\x17\x08\x44tracing";
  if (std::memcmp(b.take(10, "magic"), magic, 10) != 0) b.fail("bad magic (expected \\x17\\x08Dtracing)");
  td.version_ = std::string(b.cstring("version"));
  uint8_t big_endian = b.get<uint8_t>("endianness");
  if (big_endian) b.fail("big-endian tracing data is not supported");
  td.long_size_ = b.get<uint8_t>("long size");
  td.page_size_ = b.get<uint32_t>("page size");
  if (b.cstring("header_page tag") != "header_page") b.fail("expected \"header_page\"");
  b.text(b.get<uint64_t>("header_page size"), "header_page");
  if (b.cstring("header_event tag") != "header_event") b.fail("expected \"header_event\"");
  b.text(b.get<uint64_t>("header_event size"), "header_event");
  uint32_t nr_ftrace = b.get<uint32_t>("ftrace format count");
  for (uint32_t i = 0; i < nr_ftrace; ++i) b.text(b.get<uint64_t>("ftrace format size"), "ftrace format");
  uint32_t nr_systems = b.get<uint32_t>("system count");
  const uint64_t budget = std::max<uint64_t>(kMinFormatBudget, kMaxBytesPerBlobByte * blob.size());
  uint64_t used = 0;
  for (uint32_t s = 0; s < nr_systems; ++s) {
    std::string system(b.cstring("system name"));
    uint32_t nr = b.get<uint32_t>("event count");
    for (uint32_t i = 0; i < nr; ++i) {
      uint64_t size = b.get<uint64_t>("event format size");
      TracepointFormat f = parse_format(b.text(size, "event format"), system);
      // What the format holds, roughly; the vectors' slack at most doubles it.
      used += sizeof f + f.system.size() + f.name.size() + f.print_fmt.size();
      for (const auto& field : f.fields) used += sizeof field + field.name.size() + field.type.size();
      if (used > budget)
        b.fail("event formats take more than " + std::to_string(budget >> 20) + " MiB (" +
               std::to_string(kMaxBytesPerBlobByte) + " x the " + std::to_string(blob.size()) +
               "-byte blob, at least " + std::to_string(kMinFormatBudget >> 20) +
               " MiB): hostile or corrupt tracing data");
      td.by_id_.emplace(f.id, td.formats_.size());
      td.formats_.push_back(std::move(f));
    }
  }
  // kallsyms, printk formats and saved cmdlines follow; not needed here.
  return td;
}

const TracepointFormat* TracingData::find(uint64_t id) const {
  auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : &formats_[it->second];
}

const TracepointFormat* TracingData::find(std::string_view system, std::string_view name) const {
  for (const auto& f : formats_)
    if (f.system == system && f.name == name) return &f;
  return nullptr;
}

bool read_tracepoint_uint(const TracepointField& f, const uint8_t* raw, uint32_t raw_size, uint64_t* out) {
  if (!raw || f.offset > raw_size || f.size > raw_size - f.offset) return false;
  const uint8_t* p = raw + f.offset;
  switch (f.size) {
    case 1: *out = *p; return true;
    case 2: *out = load<uint16_t>(p); return true;
    case 4: *out = load<uint32_t>(p); return true;
    case 8: *out = load<uint64_t>(p); return true;
    default: return false;
  }
}

bool read_tracepoint_int(const TracepointField& f, const uint8_t* raw, uint32_t raw_size, int64_t* out) {
  uint64_t u;
  if (!read_tracepoint_uint(f, raw, raw_size, &u)) return false;
  if (f.is_signed && f.size < 8) {
    unsigned shift = 64 - 8 * f.size;
    *out = static_cast<int64_t>(u << shift) >> shift;
  } else {
    *out = static_cast<int64_t>(u);
  }
  return true;
}

std::string_view read_tracepoint_string(const TracepointField& f, const uint8_t* raw, uint32_t raw_size) {
  if (!raw || f.offset > raw_size || f.size > raw_size - f.offset) return {};
  const char* base = reinterpret_cast<const char*>(raw);
  uint64_t start = f.offset, len = f.size;
  if (f.is_data_loc || f.is_rel_loc) {
    if (f.size < 4) return {};
    uint32_t desc = load<uint32_t>(raw + f.offset);
    start = desc & 0xffff;
    len = desc >> 16;
    if (f.is_rel_loc) start += f.offset + f.size;
    if (start > raw_size || len > raw_size - start) return {};
  }
  const char* s = base + start;
  return std::string_view(s, strnlen(s, len));
}

}  // namespace fg
