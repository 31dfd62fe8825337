#include "perf/record_decoder.h"

#include <cstdio>
#include <cstring>
#include <type_traits>

#include "perf/perf_abi.h"

namespace fg {

std::string build_id_hex(const uint8_t* data, size_t size) {
  static const char digits[] = "0123456789abcdef";
  std::string s;
  s.reserve(size * 2);
  for (size_t i = 0; i < size; ++i) {
    s.push_back(digits[data[i] >> 4]);
    s.push_back(digits[data[i] & 15]);
  }
  return s;
}

}  // namespace fg

namespace fg::perf_abi {

std::string record_type_name(uint32_t type) {
  static const char* const kernel[] = {nullptr, "MMAP", "LOST", "COMM", "EXIT", "THROTTLE", "UNTHROTTLE", "FORK",
                                       "READ", "SAMPLE", "MMAP2", "AUX", "ITRACE_START", "LOST_SAMPLES", "SWITCH",
                                       "SWITCH_CPU_WIDE", "NAMESPACES", "KSYMBOL", "BPF_EVENT", "CGROUP",
                                       "TEXT_POKE", "AUX_OUTPUT_HW_ID", "CALLCHAIN_DEFERRED"};
  static const char* const user[] = {"HEADER_ATTR", "HEADER_EVENT_TYPE", "HEADER_TRACING_DATA", "HEADER_BUILD_ID",
                                     "FINISHED_ROUND", "ID_INDEX", "AUXTRACE_INFO", "AUXTRACE", "AUXTRACE_ERROR",
                                     "THREAD_MAP", "CPU_MAP", "STAT_CONFIG", "STAT", "STAT_ROUND", "EVENT_UPDATE",
                                     "TIME_CONV", "HEADER_FEATURE", "COMPRESSED", "FINISHED_INIT", "COMPRESSED2"};
  if (type < sizeof kernel / sizeof *kernel && kernel[type]) return kernel[type];
  if (type >= 64 && type - 64 < sizeof user / sizeof *user) return user[type - 64];
  return "type " + std::to_string(type);
}

}  // namespace fg::perf_abi

namespace fg::perf_record {

using perf_abi::FormatError;
using perf_abi::load;
namespace sb = sample_bits;

namespace {

constexpr size_t H = perf_abi::RECORD_HEADER_SIZE;

// The body (between the header and the trailer) must hold at least `need` bytes.
size_t body_size(size_t size, size_t trailer, size_t need, const char* what) {
  size_t body = size - H - trailer;  // parse_sample_id guarantees H + trailer <= size
  if (body < need)
    throw FormatError(std::string(what) + " body is " + std::to_string(body) + " bytes (hdr.size " +
                      std::to_string(size) + ", trailer " + std::to_string(trailer) + "), needs at least " +
                      std::to_string(need));
  return body;
}

std::string_view c_string(const uint8_t* p, size_t max) {
  const char* s = reinterpret_cast<const char*>(p);
  return std::string_view(s, strnlen(s, max));
}

size_t id_position_in_sample(uint64_t t) {
  return H + 8 * (!!(t & sb::IP) + !!(t & sb::TID) + !!(t & sb::TIME) + !!(t & sb::ADDR));
}
size_t id_position_from_end(uint64_t t) {
  return 8 * (!!(t & sb::IDENTIFIER) + !!(t & sb::CPU) + !!(t & sb::STREAM_ID) + 1);
}

}  // namespace

size_t parse_sample_id(const EventAttr& a, const uint8_t* rec, size_t size, SampleId& out) {
  out = SampleId();
  if (!a.sample_id_all()) return 0;
  const uint64_t t = a.sample_type;
  size_t n = 8 * (!!(t & sb::TID) + !!(t & sb::TIME) + !!(t & sb::ID) + !!(t & sb::STREAM_ID) +
                  !!(t & sb::CPU) + !!(t & sb::IDENTIFIER));
  if (size < H + n)
    throw FormatError("sample_id_all trailer of " + std::to_string(n) + " bytes does not fit hdr.size " +
                      std::to_string(size));
  const uint8_t* p = rec + size - n;
  out.present = true;
  if (t & sb::TID) {
    out.pid = load<int32_t>(p);
    out.tid = load<int32_t>(p + 4);
    p += 8;
  }
  if (t & sb::TIME) {
    out.time = load<uint64_t>(p);
    out.has_time = true;
    p += 8;
  }
  if (t & sb::ID) {
    out.id = load<uint64_t>(p);
    p += 8;
  }
  if (t & sb::STREAM_ID) {
    out.stream_id = load<uint64_t>(p);
    p += 8;
  }
  if (t & sb::CPU) {
    out.cpu = load<uint32_t>(p);
    p += 8;
  }
  if (t & sb::IDENTIFIER) out.identifier = load<uint64_t>(p);
  return n;
}

std::string AttrSelector::reset(const std::vector<EventAttr>& attrs) {
  by_id_.clear();
  count_ = 0;
  scheme_ = Scheme::Single;
  trailers_ = false;
  std::string warning;
  for (size_t i = 0; i < attrs.size(); ++i)
    if (auto w = add(attrs[i], attrs[0]); !w.empty()) warning = w;
  return warning;
}

std::string AttrSelector::add(const EventAttr& a, const EventAttr& first) {
  const size_t index = count_++;
  for (uint64_t id : a.ids) by_id_.emplace(id, index);
  if (index == 0) {
    trailers_ = a.sample_id_all();
    all_identifier_ = all_id_ = same_pos_ = true;
  }
  all_identifier_ &= a.has(sb::IDENTIFIER);
  all_id_ &= a.has(sb::ID);
  same_pos_ &= id_position_in_sample(a.sample_type) == id_position_in_sample(first.sample_type) &&
               id_position_from_end(a.sample_type) == id_position_from_end(first.sample_type);
  const Scheme before = scheme_;
  if (count_ <= 1) {
    scheme_ = Scheme::Single;
  } else if (all_identifier_) {
    scheme_ = Scheme::Identifier;
  } else if (all_id_ && same_pos_) {
    scheme_ = Scheme::IdPosition;
    sample_id_offset_ = id_position_in_sample(first.sample_type);
    trailer_id_from_end_ = id_position_from_end(first.sample_type);
  } else {
    scheme_ = Scheme::First;
    // Said once, when the scheme first falls back (not for every later attr).
    if (before != Scheme::First)
      return "events have neither PERF_SAMPLE_IDENTIFIER nor PERF_SAMPLE_ID at one position: "
             "every record is read with the first event's layout";
  }
  return {};
}

size_t AttrSelector::select(uint32_t type, const uint8_t* rec, size_t size) const {
  switch (scheme_) {
    case Scheme::Single:
    case Scheme::First:
      return 0;
    case Scheme::Identifier:
      if (type == perf_abi::SAMPLE) return size >= H + 8 ? lookup(load<uint64_t>(rec + H)) : 0;
      if (!trailers_ || type >= perf_abi::USER_TYPE_START || size < H + 8) return 0;
      return lookup(load<uint64_t>(rec + size - 8));
    case Scheme::IdPosition:
      if (type == perf_abi::SAMPLE)
        return size >= sample_id_offset_ + 8 ? lookup(load<uint64_t>(rec + sample_id_offset_)) : 0;
      if (!trailers_ || type >= perf_abi::USER_TYPE_START || size < H + trailer_id_from_end_) return 0;
      return lookup(load<uint64_t>(rec + size - trailer_id_from_end_));
  }
  return 0;
}

namespace {

void decode_mmap(const uint8_t* rec, size_t size, size_t trailer, bool mmap2, MmapRecord& m) {
  m = MmapRecord();
  m.is_mmap2 = mmap2;
  m.misc = load<uint16_t>(rec + 4);
  const uint8_t* b = rec + H;
  size_t fixed = mmap2 ? 64 : 32;
  size_t body = body_size(size, trailer, fixed, mmap2 ? "MMAP2" : "MMAP");
  m.pid = load<int32_t>(b);
  m.tid = load<int32_t>(b + 4);
  m.start = load<uint64_t>(b + 8);
  m.len = load<uint64_t>(b + 16);
  m.pgoff = load<uint64_t>(b + 24);
  if (mmap2) {
    if (m.misc & perf_abi::MISC_MMAP_BUILD_ID) {
      m.build_id_size = b[32];
      if (m.build_id_size > 20)
        throw FormatError("MMAP2 build-id size " + std::to_string(m.build_id_size) + " exceeds 20");
      m.build_id = b + 36;
    } else {
      m.maj = load<uint32_t>(b + 32);
      m.min = load<uint32_t>(b + 36);
      m.ino = load<uint64_t>(b + 40);
      m.ino_generation = load<uint64_t>(b + 48);
    }
    m.prot = load<uint32_t>(b + 56);
    m.flags = load<uint32_t>(b + 60);
  } else {
    m.prot = (m.misc & perf_abi::MISC_MMAP_DATA) ? 1 : 5;  // MMAP carries no prot: r-- or r-x
  }
  // The kernel sets MMAP_DATA for every non-VM_EXEC vma; use it, not prot: the
  // kernel map that perf synthesizes as MMAP2 has prot 0 ("---p").
  m.executable = !(m.misc & perf_abi::MISC_MMAP_DATA);
  m.filename = c_string(b + fixed, body - fixed);
}

void decode_comm(const uint8_t* rec, size_t size, size_t trailer, CommRecord& c) {
  c = CommRecord();
  size_t body = body_size(size, trailer, 8, "COMM");
  const uint8_t* b = rec + H;
  c.pid = load<int32_t>(b);
  c.tid = load<int32_t>(b + 4);
  c.comm = c_string(b + 8, body - 8);
  c.exec = (load<uint16_t>(rec + 4) & perf_abi::MISC_COMM_EXEC) != 0;
}

void decode_task(const uint8_t* rec, size_t size, size_t trailer, TaskRecord& t) {
  t = TaskRecord();
  body_size(size, trailer, 24, "FORK/EXIT");
  const uint8_t* b = rec + H;
  t.pid = load<int32_t>(b);
  t.ppid = load<int32_t>(b + 4);
  t.tid = load<int32_t>(b + 8);
  t.ptid = load<int32_t>(b + 12);
  t.body_time = load<uint64_t>(b + 16);
  t.time = t.body_time;
}

void decode_lost(const uint8_t* rec, size_t size, size_t trailer, bool lost_samples, LostRecord& l) {
  l = LostRecord();
  l.samples = lost_samples;
  const uint8_t* b = rec + H;
  if (lost_samples) {
    body_size(size, trailer, 8, "LOST_SAMPLES");
    l.lost = load<uint64_t>(b);
  } else {
    body_size(size, trailer, 16, "LOST");
    l.id = load<uint64_t>(b);
    l.lost = load<uint64_t>(b + 8);
  }
}

void decode_switch(const uint8_t* rec, size_t size, size_t trailer, bool cpu_wide, SwitchRecord& s) {
  s = SwitchRecord();
  uint16_t misc = load<uint16_t>(rec + 4);
  s.cpu_wide = cpu_wide;
  s.out = (misc & perf_abi::MISC_SWITCH_OUT) != 0;
  s.preempt = (misc & perf_abi::MISC_SWITCH_OUT_PREEMPT) != 0;
  if (cpu_wide) {
    body_size(size, trailer, 8, "SWITCH_CPU_WIDE");
    s.next_prev_pid = load<int32_t>(rec + H);
    s.next_prev_tid = load<int32_t>(rec + H + 4);
  }
}

void decode_ksymbol(const uint8_t* rec, size_t size, size_t trailer, KsymbolRecord& k) {
  k = KsymbolRecord();
  size_t body = body_size(size, trailer, 16, "KSYMBOL");
  const uint8_t* b = rec + H;
  k.addr = load<uint64_t>(b);
  k.len = load<uint32_t>(b + 8);
  k.ksym_type = load<uint16_t>(b + 12);
  k.flags = load<uint16_t>(b + 14);
  k.name = c_string(b + 16, body - 16);
}


}  // namespace

bool decode_event(const EventAttr& attr, uint32_t type, const uint8_t* rec, size_t size, uint64_t file_offset,
                  EventRecord& e) {
  SampleId sid;
  size_t trailer;
  switch (type) {
    case perf_abi::MMAP:
    case perf_abi::MMAP2:
      trailer = parse_sample_id(attr, rec, size, sid);
      decode_mmap(rec, size, trailer, type == perf_abi::MMAP2, e.mmap);
      e.mmap.time = sid.time;
      e.mmap.cpu = sid.cpu;
      e.mmap.file_offset = file_offset;
      break;
    case perf_abi::COMM:
      trailer = parse_sample_id(attr, rec, size, sid);
      decode_comm(rec, size, trailer, e.comm);
      e.comm.time = sid.time;
      e.comm.cpu = sid.cpu;
      e.comm.file_offset = file_offset;
      break;
    case perf_abi::FORK:
    case perf_abi::EXIT:
      trailer = parse_sample_id(attr, rec, size, sid);
      decode_task(rec, size, trailer, e.task);
      if (sid.has_time) e.task.time = sid.time;
      e.task.cpu = sid.cpu;
      e.task.file_offset = file_offset;
      break;
    case perf_abi::LOST:
    case perf_abi::LOST_SAMPLES:
      trailer = parse_sample_id(attr, rec, size, sid);
      decode_lost(rec, size, trailer, type == perf_abi::LOST_SAMPLES, e.lost);
      e.lost.time = sid.time;
      e.lost.cpu = sid.cpu;
      e.lost.file_offset = file_offset;
      break;
    case perf_abi::SWITCH:
    case perf_abi::SWITCH_CPU_WIDE:
      trailer = parse_sample_id(attr, rec, size, sid);
      decode_switch(rec, size, trailer, type == perf_abi::SWITCH_CPU_WIDE, e.sw);
      e.sw.pid = sid.pid;
      e.sw.tid = sid.tid;
      e.sw.cpu = sid.cpu;
      e.sw.time = sid.time;
      e.sw.file_offset = file_offset;
      break;
    case perf_abi::KSYMBOL:
      trailer = parse_sample_id(attr, rec, size, sid);
      decode_ksymbol(rec, size, trailer, e.ksymbol);
      e.ksymbol.time = sid.time;
      e.ksymbol.file_offset = file_offset;
      break;
    default:
      return false;
  }
  e.type = type;
  // FORK/EXIT without a trailer time are ordered by their body time (perf does the same).
  e.time = (type == perf_abi::FORK || type == perf_abi::EXIT) ? e.task.time : sid.time;
  return true;
}

// --- The queued form: [type u32, pad u32][time u64][the member][view bytes].

namespace {

constexpr size_t kStoredHeader = 16;

template <typename T>
size_t stored_member_size() {
  static_assert(std::is_trivially_copyable_v<T>, "stored with memcpy");
  return kStoredHeader + ((sizeof(T) + 7) & ~size_t(7));
}

template <typename T>
void store_member(const EventRecord& e, const T& member, uint8_t* dst, std::string_view bytes,
                  const uint8_t* extra = nullptr, size_t extra_size = 0) {
  std::memcpy(dst, &e.type, 4);
  std::memset(dst + 4, 0, 4);
  std::memcpy(dst + 8, &e.time, 8);
  std::memcpy(dst + kStoredHeader, &member, sizeof(T));  // views are rebuilt by load_event
  uint8_t* p = dst + stored_member_size<T>();
  if (!bytes.empty()) std::memcpy(p, bytes.data(), bytes.size());
  if (extra_size) std::memcpy(p + bytes.size(), extra, extra_size);
}

template <typename T>
const uint8_t* load_member(const uint8_t* src, T& member) {
  std::memcpy(&member, src + kStoredHeader, sizeof(T));
  return src + stored_member_size<T>();
}

}  // namespace

size_t stored_size(const EventRecord& e) {
  size_t n = 0;
  switch (e.type) {
    case perf_abi::MMAP:
    case perf_abi::MMAP2:
      n = stored_member_size<MmapRecord>() + e.mmap.filename.size() + e.mmap.build_id_size;
      break;
    case perf_abi::COMM:
      n = stored_member_size<CommRecord>() + e.comm.comm.size();
      break;
    case perf_abi::FORK:
    case perf_abi::EXIT:
      n = stored_member_size<TaskRecord>();
      break;
    case perf_abi::LOST:
    case perf_abi::LOST_SAMPLES:
      n = stored_member_size<LostRecord>();
      break;
    case perf_abi::SWITCH:
    case perf_abi::SWITCH_CPU_WIDE:
      n = stored_member_size<SwitchRecord>();
      break;
    case perf_abi::KSYMBOL:
      n = stored_member_size<KsymbolRecord>() + e.ksymbol.name.size();
      break;
    default:
      n = kStoredHeader;
  }
  return (n + 7) & ~size_t(7);
}

void store_event(const EventRecord& e, uint8_t* dst) {
  switch (e.type) {
    case perf_abi::MMAP:
    case perf_abi::MMAP2:
      store_member(e, e.mmap, dst, e.mmap.filename, e.mmap.build_id, e.mmap.build_id ? e.mmap.build_id_size : 0);
      break;
    case perf_abi::COMM:
      store_member(e, e.comm, dst, e.comm.comm);
      break;
    case perf_abi::FORK:
    case perf_abi::EXIT:
      store_member(e, e.task, dst, {});
      break;
    case perf_abi::LOST:
    case perf_abi::LOST_SAMPLES:
      store_member(e, e.lost, dst, {});
      break;
    case perf_abi::SWITCH:
    case perf_abi::SWITCH_CPU_WIDE:
      store_member(e, e.sw, dst, {});
      break;
    case perf_abi::KSYMBOL:
      store_member(e, e.ksymbol, dst, e.ksymbol.name);
      break;
    default:
      std::memcpy(dst, &e.type, 4);
      std::memset(dst + 4, 0, 4);
      std::memcpy(dst + 8, &e.time, 8);
  }
}

void load_event(const uint8_t* src, EventRecord& e) {
  e.type = load<uint32_t>(src);
  e.time = load<uint64_t>(src + 8);
  const uint8_t* p;
  switch (e.type) {
    case perf_abi::MMAP:
    case perf_abi::MMAP2:
      p = load_member(src, e.mmap);
      e.mmap.filename = std::string_view(reinterpret_cast<const char*>(p), e.mmap.filename.size());
      if (e.mmap.build_id) e.mmap.build_id = p + e.mmap.filename.size();
      break;
    case perf_abi::COMM:
      p = load_member(src, e.comm);
      e.comm.comm = std::string_view(reinterpret_cast<const char*>(p), e.comm.comm.size());
      break;
    case perf_abi::FORK:
    case perf_abi::EXIT:
      load_member(src, e.task);
      break;
    case perf_abi::LOST:
    case perf_abi::LOST_SAMPLES:
      load_member(src, e.lost);
      break;
    case perf_abi::SWITCH:
    case perf_abi::SWITCH_CPU_WIDE:
      load_member(src, e.sw);
      break;
    case perf_abi::KSYMBOL:
      p = load_member(src, e.ksymbol);
      e.ksymbol.name = std::string_view(reinterpret_cast<const char*>(p), e.ksymbol.name.size());
      break;
    default:
      break;
  }
}

void deliver_event(const EventRecord& e, RecordHandler& h) {
  switch (e.type) {
    case perf_abi::MMAP:
    case perf_abi::MMAP2:
      h.on_mmap(e.mmap);
      break;
    case perf_abi::COMM:
      h.on_comm(e.comm);
      break;
    case perf_abi::FORK:
      h.on_fork(e.task);
      break;
    case perf_abi::EXIT:
      h.on_exit(e.task);
      break;
    case perf_abi::LOST:
    case perf_abi::LOST_SAMPLES:
      h.on_lost(e.lost);
      break;
    case perf_abi::SWITCH:
    case perf_abi::SWITCH_CPU_WIDE:
      h.on_switch(e.sw);
      break;
    case perf_abi::KSYMBOL:
      h.on_ksymbol(e.ksymbol);
      break;
    default:
      break;
  }
}

}  // namespace fg::perf_record
