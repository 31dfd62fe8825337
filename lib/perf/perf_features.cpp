#include "perf/perf_features.h"

#include <algorithm>
#include <cstring>

#include "perf/perf_abi.h"
#include "perf/perf_file_header.h"

namespace fg::perf_features {

using perf_abi::FormatError;
using perf_abi::load;

namespace {

// Bounds-checked cursor over one feature payload.
class Cursor {
 public:
  Cursor(const uint8_t* p, size_t size, const char* what) : p_(p), size_(size), what_(what) {}
  size_t left() const { return size_ - pos_; }
  size_t pos() const { return pos_; }
  void need(size_t n) const {
    if (n > left())
      throw FormatError(std::string(what_) + " feature: needs " + std::to_string(n) + " bytes at byte " +
                        std::to_string(pos_) + " of its " + std::to_string(size_) + "-byte section");
  }
  template <typename T>
  T get() {
    need(sizeof(T));
    T v = load<T>(p_ + pos_);
    pos_ += sizeof(T);
    return v;
  }
  const uint8_t* take(size_t n) {
    need(n);
    const uint8_t* r = p_ + pos_;
    pos_ += n;
    return r;
  }
  // perf_header_string: u32 len (incl. NUL and padding); chars.
  std::string string() {
    uint32_t len = get<uint32_t>();
    const uint8_t* s = take(len);
    size_t n = 0;
    while (n < len && s[n]) ++n;
    return std::string(reinterpret_cast<const char*>(s), n);
  }

 private:
  const uint8_t* p_;
  size_t size_;
  size_t pos_ = 0;
  const char* what_;
};

}  // namespace

void parse_build_id_entry(uint16_t misc, const uint8_t* body, size_t body_size, PerfFileInfo& info) {
  // body: s32 pid; u8 build_id[24]; char filename[]
  if (body_size < 4 + 24) throw FormatError("build-id entry of " + std::to_string(body_size) + " bytes is too short");
  PerfFileInfo::BuildIdEntry e;
  e.pid = load<int32_t>(body);
  e.cpumode = misc & perf_abi::MISC_CPUMODE_MASK;
  size_t id_size = 20;
  if (misc & perf_abi::MISC_BUILD_ID_SIZE) id_size = std::min<size_t>(body[4 + 20], 20);
  e.build_id.assign(reinterpret_cast<const char*>(body + 4), id_size);
  const char* name = reinterpret_cast<const char*>(body + 28);
  size_t max = body_size - 28;
  e.filename.assign(name, strnlen(name, max));
  info.build_ids.push_back(std::move(e));
}

// Long function: one short case per feature section, each next to its
// on-disk layout (tools/perf/util/header.c); a table of functions would only
// add indirection.
void parse_feature(int feature, const uint8_t* p, size_t size, PerfFileInfo& info,
                   std::vector<EventAttr>& event_desc) {
  using namespace perf_abi;
  switch (feature) {
    case FEAT_TRACING_DATA:
      info.tracing_data.assign(reinterpret_cast<const char*>(p), size);  // the caller sets tracing_data_offset
      break;
    case FEAT_BUILD_ID: {
      size_t pos = 0;
      while (pos + RECORD_HEADER_SIZE <= size) {
        uint16_t misc = load<uint16_t>(p + pos + 4);
        uint16_t rsize = load<uint16_t>(p + pos + 6);
        if (rsize < RECORD_HEADER_SIZE || rsize > size - pos)
          throw FormatError("BUILD_ID feature: entry at byte " + std::to_string(pos) + " has size " +
                            std::to_string(rsize) + " (section is " + std::to_string(size) + " bytes)");
        parse_build_id_entry(misc, p + pos + RECORD_HEADER_SIZE, rsize - RECORD_HEADER_SIZE, info);
        pos += rsize;
      }
      break;
    }
    case FEAT_HOSTNAME: info.hostname = Cursor(p, size, "HOSTNAME").string(); break;
    case FEAT_OSRELEASE: info.os_release = Cursor(p, size, "OSRELEASE").string(); break;
    case FEAT_VERSION: info.perf_version = Cursor(p, size, "VERSION").string(); break;
    case FEAT_ARCH: info.arch = Cursor(p, size, "ARCH").string(); break;
    case FEAT_CPUDESC: info.cpu_desc = Cursor(p, size, "CPUDESC").string(); break;
    case FEAT_CPUID: info.cpu_id = Cursor(p, size, "CPUID").string(); break;
    case FEAT_TOTAL_MEM: info.total_mem_kb = Cursor(p, size, "TOTAL_MEM").get<uint64_t>(); break;
    case FEAT_NRCPUS: {
      Cursor c(p, size, "NRCPUS");
      info.nr_cpus_avail = c.get<uint32_t>();
      info.nr_cpus_online = c.get<uint32_t>();
      break;
    }
    case FEAT_CMDLINE: {
      Cursor c(p, size, "CMDLINE");
      uint32_t nr = c.get<uint32_t>();
      if (nr > c.left() / 4) throw FormatError("CMDLINE feature: " + std::to_string(nr) + " strings cannot fit");
      info.cmdline.clear();
      for (uint32_t i = 0; i < nr; ++i) info.cmdline.push_back(c.string());
      break;
    }
    case FEAT_EVENT_DESC: {
      Cursor c(p, size, "EVENT_DESC");
      uint32_t nr = c.get<uint32_t>();
      uint32_t attr_size = c.get<uint32_t>();
      if (attr_size < ATTR_SIZE_VER0) throw FormatError("EVENT_DESC feature: attr size " + std::to_string(attr_size));
      if (nr > c.left() / attr_size) throw FormatError("EVENT_DESC feature: " + std::to_string(nr) + " events cannot fit");
      for (uint32_t i = 0; i < nr; ++i) {
        const uint8_t* ap = c.take(attr_size);
        EventAttr a;
        // The attr's own size may say less than attr_size; never more than written.
        uint8_t tmp[ATTR_SIZE_OURS] = {};
        std::memcpy(tmp, ap, std::min<size_t>(attr_size, sizeof tmp));
        uint32_t asz = load<uint32_t>(tmp + 4);
        if (asz == 0 || asz > attr_size) {
          asz = std::min<uint32_t>(attr_size, ATTR_SIZE_OURS);
          std::memcpy(tmp + 4, &asz, 4);
        }
        try {
          a = perf_file::parse_event_attr(tmp, std::min<size_t>(asz, sizeof tmp));
        } catch (const FormatError&) {
          // Only the name and ids matter here; the real attrs come from the attrs section.
        }
        uint32_t nr_ids = c.get<uint32_t>();
        a.name = c.string();
        if (nr_ids > c.left() / 8) throw FormatError("EVENT_DESC feature: " + std::to_string(nr_ids) + " ids cannot fit");
        a.ids.resize(nr_ids);
        if (nr_ids) std::memcpy(a.ids.data(), c.take(size_t(nr_ids) * 8), size_t(nr_ids) * 8);
        event_desc.push_back(std::move(a));
      }
      break;
    }
    case FEAT_SAMPLE_TIME: {
      Cursor c(p, size, "SAMPLE_TIME");
      info.first_sample_time = c.get<uint64_t>();
      info.last_sample_time = c.get<uint64_t>();
      info.has_sample_time = true;
      break;
    }
    case FEAT_COMPRESSED: {
      Cursor c(p, size, "COMPRESSED");
      info.comp_version = c.get<uint32_t>();
      info.comp_type = c.get<uint32_t>();
      info.comp_level = c.get<uint32_t>();
      info.comp_ratio = c.get<uint32_t>();
      info.comp_mmap_len = c.get<uint32_t>();
      info.compressed = true;
      break;
    }
    default:
      break;  // features that do not matter for reading records
  }
  if (feature >= 0 && feature < 256) info.features[feature / 64] |= uint64_t(1) << (feature % 64);
}

}  // namespace fg::perf_features
