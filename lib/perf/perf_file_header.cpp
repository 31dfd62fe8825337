#include "perf/perf_file_header.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "diagnostics/input_error.h"
#include "perf/perf_abi.h"

namespace fg::perf_file {

using perf_abi::FormatError;
using perf_abi::load;

namespace {
std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}
}  // namespace

FileHeader parse_file_header(const uint8_t* p, size_t avail, const std::string& path) {
  if (avail == 0) throw InputError::at_offset(path, 0, "empty file: not a perf.data file");
  if (avail < 8)
    throw InputError::at_offset(path, 0, "file header: only " + std::to_string(avail) +
                                             " bytes, too short for a perf.data magic");
  uint64_t magic = load<uint64_t>(p);
  if (std::memcmp(p, "PERFFILE", 8) == 0)
    throw InputError::at_offset(path, 0, "file header: PERFFILE (version 1) perf.data is not supported; "
                                         "convert it with a newer perf");
  if (magic == perf_abi::MAGIC2_SWAPPED)
    throw InputError::at_offset(path, 0, "file header: foreign-endian perf.data (recorded on a machine "
                                         "with the other byte order) is not supported");
  if (magic != perf_abi::MAGIC2)
    throw InputError::at_offset(path, 0, "file header: bad magic " + hex(magic) +
                                             ": not a perf.data file (expected \"PERFILE2\")");
  if (avail < 16) throw InputError::at_offset(path, 8, "file header: truncated before its size field");
  FileHeader h;
  h.header_size = load<uint64_t>(p + 8);
  if (h.header_size == perf_abi::PIPE_HEADER_SIZE) {
    h.pipe_mode = true;
    return h;
  }
  if (h.header_size != perf_abi::FILE_HEADER_SIZE)
    throw InputError::at_offset(path, 8, "file header: size " + std::to_string(h.header_size) +
                                             " is neither 104 (file) nor 16 (pipe)");
  if (avail < perf_abi::FILE_HEADER_SIZE)
    throw InputError::at_offset(path, avail, "file header: truncated (" + std::to_string(avail) +
                                                 " of 104 bytes)");
  h.attr_size = load<uint64_t>(p + 16);
  h.attrs = {load<uint64_t>(p + 24), load<uint64_t>(p + 32)};
  h.data = {load<uint64_t>(p + 40), load<uint64_t>(p + 48)};
  h.event_types = {load<uint64_t>(p + 56), load<uint64_t>(p + 64)};
  for (int i = 0; i < 4; ++i) h.features[i] = load<uint64_t>(p + 72 + 8 * i);
  return h;
}

void check_sample_layout(const EventAttr& a) {
  if (a.sample_type & ~sample_bits::KNOWN)
    throw FormatError("sample_type " + hex(a.sample_type) + " has unknown bits " +
                      hex(a.sample_type & ~sample_bits::KNOWN) + " whose SAMPLE layout is unknown");
  if (a.read_format & ~perf_abi::FORMAT_KNOWN)
    throw FormatError("read_format " + hex(a.read_format) + " has unknown bits");
}

EventAttr parse_event_attr(const uint8_t* p, size_t avail) {
  if (avail < perf_abi::ATTR_SIZE_VER0)
    throw FormatError("perf_event_attr truncated: " + std::to_string(avail) + " bytes available, need 64");
  uint32_t size = load<uint32_t>(p + 4);
  if (size == 0) size = perf_abi::ATTR_SIZE_VER0;
  if (size < perf_abi::ATTR_SIZE_VER0)
    throw FormatError("perf_event_attr size " + std::to_string(size) + " is below the minimum 64");
  if (size > avail)
    throw FormatError("perf_event_attr size " + std::to_string(size) + " exceeds the " +
                      std::to_string(avail) + " bytes available");
  uint8_t b[perf_abi::ATTR_SIZE_OURS] = {};
  std::memcpy(b, p, std::min<size_t>(size, sizeof b));
  EventAttr a;
  a.type = load<uint32_t>(b + 0);
  a.size = size;
  a.config = load<uint64_t>(b + 8);
  a.sample_period = load<uint64_t>(b + 16);
  a.sample_type = load<uint64_t>(b + 24);
  a.read_format = load<uint64_t>(b + 32);
  a.flags = load<uint64_t>(b + 40);
  a.wakeup_events = load<uint32_t>(b + 48);
  a.bp_type = load<uint32_t>(b + 52);
  a.config1 = load<uint64_t>(b + 56);
  a.config2 = load<uint64_t>(b + 64);
  a.branch_sample_type = load<uint64_t>(b + 72);
  a.sample_regs_user = load<uint64_t>(b + 80);
  a.sample_stack_user = load<uint32_t>(b + 88);
  a.clockid = load<int32_t>(b + 92);
  a.sample_regs_intr = load<uint64_t>(b + 96);
  a.aux_watermark = load<uint32_t>(b + 104);
  a.sample_max_stack = load<uint16_t>(b + 108);
  a.aux_sample_size = load<uint32_t>(b + 112);
  a.sig_data = load<uint64_t>(b + 120);
  a.config3 = load<uint64_t>(b + 128);
  check_sample_layout(a);
  return a;
}

std::vector<EventAttr> read_attrs_section(const uint8_t* file, uint64_t file_size,
                                          const FileHeader& h, const std::string& path) {
  std::vector<EventAttr> attrs;
  if (h.attr_size < perf_abi::ATTR_SIZE_VER0 + 16)
    throw InputError::at_offset(path, 16, "file header: attr_size " + std::to_string(h.attr_size) +
                                              " is smaller than the minimum 80 (64-byte attr + ids section)");
  if (h.attrs.offset > file_size || h.attrs.size > file_size - h.attrs.offset)
    throw InputError::at_offset(path, 24, "file header: attrs section [" + std::to_string(h.attrs.offset) +
                                              ", +" + std::to_string(h.attrs.size) + ") lies beyond the end of the " +
                                              std::to_string(file_size) + "-byte file");
  if (h.attrs.size % h.attr_size != 0)
    throw InputError::at_offset(path, 32, "file header: attrs section size " + std::to_string(h.attrs.size) +
                                              " is not a multiple of attr_size " + std::to_string(h.attr_size));
  uint64_t n = h.attrs.size / h.attr_size;
  if (n == 0) throw InputError::at_offset(path, 24, "file header: no events (empty attrs section)");
  attrs.reserve(n);
  uint64_t total_ids = 0;
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t off = h.attrs.offset + i * h.attr_size;
    const uint8_t* p = file + off;
    EventAttr a;
    try {
      a = parse_event_attr(p, h.attr_size - 16);
    } catch (const FormatError& e) {
      throw InputError::at_offset(path, off, "attr " + std::to_string(i) + ": " + e.what());
    }
    // perf reads the ids section right after attr.size bytes.
    const uint8_t* ids_sec = p + a.size;
    Section ids{load<uint64_t>(ids_sec), load<uint64_t>(ids_sec + 8)};
    if (ids.offset > file_size || ids.size > file_size - ids.offset || ids.size % 8 != 0)
      throw InputError::at_offset(path, off + a.size,
                                  "attr " + std::to_string(i) + ": ids section [" + std::to_string(ids.offset) +
                                      ", +" + std::to_string(ids.size) + ") is outside the " +
                                      std::to_string(file_size) + "-byte file or not a multiple of 8");
    // perf writes each attr's ids once, side by side; sections that together
    // exceed the file overlap, and copying them would multiply the file.
    total_ids += ids.size;
    if (total_ids > file_size)
      throw InputError::at_offset(path, off + a.size,
                                  "attr " + std::to_string(i) + ": the ids sections of attrs 0.." + std::to_string(i) +
                                      " total " + std::to_string(total_ids) + " bytes, more than the whole " +
                                      std::to_string(file_size) + "-byte file: they overlap (hostile or corrupt)");
    a.ids.resize(ids.size / 8);
    if (!a.ids.empty()) std::memcpy(a.ids.data(), file + ids.offset, ids.size);
    attrs.push_back(std::move(a));
  }
  return attrs;
}

std::string default_event_name(const EventAttr& a) {
  static const char* const hw[] = {"cycles", "instructions", "cache-references", "cache-misses",
                                   "branches", "branch-misses", "bus-cycles", "stalled-cycles-frontend",
                                   "stalled-cycles-backend", "ref-cycles"};
  static const char* const sw[] = {"cpu-clock", "task-clock", "page-faults", "context-switches",
                                   "cpu-migrations", "minor-faults", "major-faults", "alignment-faults",
                                   "emulation-faults", "dummy", "bpf-output", "cgroup-switches"};
  if (a.type == 0 && a.config < sizeof hw / sizeof *hw) return hw[a.config];
  if (a.type == 1 && a.config < sizeof sw / sizeof *sw) return sw[a.config];
  return "type " + std::to_string(a.type) + " config " + hex(a.config);
}

}  // namespace fg::perf_file
