// Structure-aware mutations for the perf.data fuzz targets: besides
// libFuzzer's byte mutations, build the shapes that found the memory and
// time blow-ups of issue 15, from records already in the input: zstd
// payloads (a record repeated many times, compressed as perf does it, never
// ending the frame), floods of HEADER_ATTR records, attrs whose ids sections
// alias one region, TRACING_DATA whose one system has many empty formats
// under a long name, and FORK floods (with child MMAPs). Only in the
// libFuzzer build; the regression replay (FGTOOL_FUZZ_REGISTRY) runs inputs.
#pragma once

#ifndef FGTOOL_FUZZ_REGISTRY

#include <zstd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <exception>
#include <string>
#include <vector>

namespace fg::fuzz::mutate {

template <typename T>
T get(const std::string& s, size_t off) {
  T v{};
  if (off + sizeof v <= s.size()) std::memcpy(&v, s.data() + off, sizeof v);
  return v;
}
template <typename T>
void set(std::string& s, size_t off, T v) {
  if (off + sizeof v <= s.size()) std::memcpy(&s[off], &v, sizeof v);
}
template <typename T>
void put(std::string& s, T v) {
  s.append(reinterpret_cast<const char*>(&v), sizeof v);
}

inline std::string record(uint32_t type, const std::string& body) {
  std::string r;
  put<uint32_t>(r, type);
  put<uint16_t>(r, 0);
  put<uint16_t>(r, uint16_t(std::min<size_t>(8 + body.size(), 0xffff)));
  return r + body.substr(0, 0xffff - 8);
}

struct Layout {
  bool pipe = false, ok = false;
  uint64_t begin = 0, end = 0;      // the records
  std::vector<uint64_t> records;    // offsets of whole records in [begin, end)
};

inline Layout layout(const std::string& s) {
  Layout l;
  if (s.size() < 16 || s.compare(0, 8, "PERFILE2") != 0) return l;
  l.pipe = get<uint64_t>(s, 8) == 16;
  if (l.pipe) {
    l.begin = 16;
    l.end = s.size();
  } else {
    if (s.size() < 104) return l;
    l.begin = get<uint64_t>(s, 40);
    l.end = l.begin + get<uint64_t>(s, 48);
    if (l.begin < 104 || l.begin > s.size() || l.end > s.size() || l.end < l.begin) return l;
  }
  for (uint64_t p = l.begin; p + 8 <= l.end && l.records.size() < 100000;) {
    uint16_t size = get<uint16_t>(s, p + 6);
    if (size < 8 || p + size > l.end) break;
    l.records.push_back(p);
    p += size;
    if (get<uint32_t>(s, p - size) == 66 || get<uint32_t>(s, p - size) == 71) break;  // payload follows
  }
  l.ok = true;
  return l;
}

// Inserts bytes at pos (inside or at the end of the records); in file mode
// the data size, the feature table and sections, and ids offsets behind pos move.
inline void insert(std::string& s, const Layout& l, uint64_t pos, const std::string& bytes) {
  if (!l.pipe) {
    const uint64_t n = bytes.size();
    set<uint64_t>(s, 48, get<uint64_t>(s, 48) + n);
    uint64_t nr = 0;
    for (int i = 0; i < 4; ++i) nr += uint64_t(__builtin_popcountll(get<uint64_t>(s, 72 + 8 * i)));
    for (uint64_t i = 0; i < nr; ++i) {
      uint64_t e = l.end + 16 * i;
      if (get<uint64_t>(s, e) >= pos) set<uint64_t>(s, e, get<uint64_t>(s, e) + n);
    }
    uint64_t attr_size = get<uint64_t>(s, 16), attrs = get<uint64_t>(s, 24), attrs_size = get<uint64_t>(s, 32);
    if (attr_size >= 80 && attrs_size / attr_size < 4096)
      for (uint64_t i = 0; i < attrs_size / attr_size; ++i) {
        uint64_t e = attrs + i * attr_size + attr_size - 16;
        if (get<uint64_t>(s, e) >= pos) set<uint64_t>(s, e, get<uint64_t>(s, e) + n);
      }
  }
  s.insert(size_t(pos), bytes);
}

// `chunk` x times as one never-ended zstd stream in COMPRESSED records.
inline std::string compressed(const std::string& chunk, uint64_t times, size_t max_out) {
  ZSTD_CCtx* c = ZSTD_createCCtx();
  std::string out, pending;
  std::vector<char> buf(1 << 16);
  auto drain = [&](size_t n) {
    pending.append(buf.data(), n);
    while (pending.size() >= 60000) {
      out += record(81, pending.substr(0, 60000));
      pending.erase(0, 60000);
    }
  };
  // At most 32 MiB compressed per mutation: bombs past the fuzz targets'
  // 8 MiB budget need no more, and compressing more would slow the mutator.
  times = std::min<uint64_t>(times, (uint64_t(32) << 20) / std::max<size_t>(chunk.size(), 1) + 1);
  for (uint64_t i = 0; i < times && out.size() < max_out; ++i) {
    ZSTD_inBuffer in{chunk.data(), chunk.size(), 0};
    while (in.pos < in.size) {
      ZSTD_outBuffer o{buf.data(), buf.size(), 0};
      ZSTD_compressStream2(c, &o, &in, ZSTD_e_continue);
      drain(o.pos);
    }
  }
  for (int guard = 0; guard < 1000; ++guard) {
    ZSTD_inBuffer none{nullptr, 0, 0};
    ZSTD_outBuffer o{buf.data(), buf.size(), 0};
    size_t left = ZSTD_compressStream2(c, &o, &none, ZSTD_e_flush);
    drain(o.pos);
    if (left == 0 || ZSTD_isError(left)) break;
  }
  ZSTD_freeCCtx(c);
  if (!pending.empty()) out += record(81, pending);
  return out;
}

inline std::string record_at(const std::string& s, uint64_t off) {
  return s.substr(size_t(off), get<uint16_t>(s, off + 6));
}
inline const uint64_t* find_type(const std::string& s, const Layout& l, uint32_t type) {
  for (const uint64_t& off : l.records)
    if (get<uint32_t>(s, off) == type) return &off;
  return nullptr;
}

// One structural mutation of s; false if none applied.
template <typename Rng>
bool mutate_structure(std::string& s, Rng& rng, size_t max_size) {
  Layout l = layout(s);
  if (!l.ok || l.records.empty()) return false;
  auto pick = [&](uint64_t n) { return n ? uint64_t(rng() % n) : 0; };
  const uint64_t at = l.records[pick(l.records.size())];
  const size_t room = max_size > s.size() ? max_size - s.size() : 0;
  switch (rng() % 5) {
    case 0: {  // zstd payload: existing records repeated, compressed
      std::string chunk;
      uint64_t first = pick(l.records.size()), count = 1 + pick(8);
      for (uint64_t i = first; i < l.records.size() && i < first + count; ++i) chunk += record_at(s, l.records[i]);
      if (chunk.empty()) return false;
      if (rng() % 2) chunk[pick(chunk.size())] ^= char(1 + pick(255));  // payload content
      std::string z = compressed(chunk, 1 + pick(1u << (rng() % 20)), room);
      if (z.empty() || z.size() > room) return false;
      insert(s, l, at, z);
      return true;
    }
    case 1: {  // HEADER_ATTR flood (plain in a pipe, inside zstd in a file)
      const uint64_t* a = find_type(s, l, 64);
      std::string attr;
      if (a) attr = record_at(s, *a);
      else if (!l.pipe && get<uint64_t>(s, 16) >= 80 && get<uint64_t>(s, 24) < s.size()) attr = record(64, s.substr(size_t(get<uint64_t>(s, 24)), size_t(get<uint64_t>(s, 16) - 16)) + std::string(8, '\0'));
      if (attr.size() < 16) return false;
      const uint64_t n = 1 + pick(50000);
      std::string flood;
      for (uint64_t i = 0; i < n && flood.size() < (8u << 20); ++i) {
        std::string r = attr;
        set<uint64_t>(r, r.size() - 8, 0x100000 + i);  // a new id
        flood += r;
      }
      if (!l.pipe || rng() % 2) flood = compressed(flood, 1, room);
      if (flood.size() > room) return false;
      insert(s, l, l.pipe ? l.begin : at, flood);
      return true;
    }
    case 2: {  // file mode: attrs' ids sections aliasing one region
      if (l.pipe) return false;
      uint64_t attr_size = get<uint64_t>(s, 16), attrs = get<uint64_t>(s, 24), n = attr_size ? get<uint64_t>(s, 32) / attr_size : 0;
      if (attr_size < 80 || n == 0 || n > 4096) return false;
      uint64_t off = pick(s.size()), size = (s.size() - off) & ~uint64_t(7);
      for (uint64_t i = 0; i < n; ++i) {
        set<uint64_t>(s, attrs + i * attr_size + attr_size - 16, off);
        set<uint64_t>(s, attrs + i * attr_size + attr_size - 8, size);
      }
      // More attrs sharing it: duplicate the entries (the attrs section grows).
      if (rng() % 2 && attrs + n * attr_size <= s.size()) {
        std::string entries = s.substr(size_t(attrs), size_t(n * attr_size));
        uint64_t copies = 1 + pick(2000);
        std::string more;
        for (uint64_t i = 0; i < copies && more.size() < room; ++i) more += entries;
        if (more.size() > room) return false;
        s.insert(size_t(attrs + n * attr_size), more);
        set<uint64_t>(s, 32, get<uint64_t>(s, 32) + more.size());
        for (uint64_t f : {uint64_t(40)}) set<uint64_t>(s, f, get<uint64_t>(s, f) + more.size());
        // Feature sections and ids behind the attrs move with the data.
        uint64_t nr = 0;
        for (int i = 0; i < 4; ++i) nr += uint64_t(__builtin_popcountll(get<uint64_t>(s, 72 + 8 * i)));
        uint64_t table = get<uint64_t>(s, 40) + get<uint64_t>(s, 48);
        for (uint64_t i = 0; i < nr; ++i) set<uint64_t>(s, table + 16 * i, get<uint64_t>(s, table + 16 * i) + more.size());
      }
      return true;
    }
    case 3: {  // TRACING_DATA: one system, many empty formats, a long name (pipe)
      if (!l.pipe) return false;
      std::string t("\x17\x08\x44tracing", 10);
      t += std::string("0.6\0\0\x08", 6);
      put<uint32_t>(t, 4096);
      t += std::string("header_page\0", 12);
      put<uint64_t>(t, 0);
      t += std::string("header_event\0", 13);
      put<uint64_t>(t, 0);
      put<uint32_t>(t, 0);
      put<uint32_t>(t, 1);
      t += std::string(pick(std::min<size_t>(room / 2, 1 << 20)), 's') + '\0';
      uint32_t n = uint32_t(pick(std::max<size_t>(1, room / 16)));
      put<uint32_t>(t, n);
      for (uint32_t i = 0; i < n; ++i) put<uint64_t>(t, 0);
      t += std::string(16, '\0');
      while (t.size() % 8) t += '\0';
      std::string body;
      put<uint32_t>(body, uint32_t(t.size()));
      put<uint32_t>(body, 0);
      std::string rec = record(66, body) + t;
      if (rec.size() > room) return false;
      // After the attrs: where perf puts it.
      uint64_t pos = l.begin;
      for (uint64_t off : l.records)
        if (get<uint32_t>(s, off) == 64) pos = off + get<uint16_t>(s, off + 6);
      insert(s, l, pos, rec);
      return true;
    }
    default: {  // FORK flood, cloned from a FORK (and an MMAP for the children)
      const uint64_t* f = find_type(s, l, 7);
      if (!f) return false;
      std::string fork = record_at(s, *f);
      const uint64_t* m = find_type(s, l, 10);
      if (!m) m = find_type(s, l, 1);
      std::string mm = m && rng() % 2 ? record_at(s, *m) : std::string();
      int32_t parent = get<int32_t>(fork, 12);
      uint64_t n = 1 + pick(40000);
      std::string flood;
      for (uint64_t i = 0; i < n && flood.size() < room; ++i) {
        std::string r = fork;
        set<int32_t>(r, 8, int32_t(100000 + i));
        set<int32_t>(r, 12, parent);
        set<int32_t>(r, 16, int32_t(100000 + i));
        flood += r;
        if (!mm.empty()) {
          std::string c = mm;
          set<int32_t>(c, 8, int32_t(100000 + i));
          set<int32_t>(c, 12, int32_t(100000 + i));
          flood += c;
        }
      }
      if (flood.size() > room) return false;
      insert(s, l, *f + fork.size(), flood);
      return true;
    }
  }
}

}  // namespace fg::fuzz::mutate

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

// A quarter of the mutations are structural (when one applies).
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  std::minstd_rand rng(seed);
  if (rng() % 4 == 0) {
    std::string s(reinterpret_cast<const char*>(data), size);
    bool mutated = false;
    try {
      mutated = fg::fuzz::mutate::mutate_structure(s, rng, max_size);
    } catch (const std::exception&) {
      mutated = false;  // a header field out of range for this input: mutate plainly
    }
    if (mutated && s.size() <= max_size) {
      std::memcpy(data, s.data(), s.size());
      return s.size();
    }
  }
  return LLVMFuzzerMutate(data, size, max_size);
}

#endif  // FGTOOL_FUZZ_REGISTRY
