// Generators of hostile perf.data images, small files that made the reader
// or the fold stage use gigabytes or minutes before the memory budget
// (issue 15): zstd bombs, attrs whose ids sections alias one region, floods
// of HEADER_ATTR records (plain and inside COMPRESSED), TRACING_DATA that
// copies a long system name into every event format, FORK floods, and pipe
// streams cut short. Each returns the file's bytes.
#pragma once

#include <zstd.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "../perf/perf_bytes.h"

namespace fg::hostile {

using fg::test::put;
using fg::test::set;

constexpr uint64_t kIp = 1, kTid = 2, kTime = 4, kId = 64, kPeriod = 256, kIdentifier = 1u << 16;
constexpr uint64_t kSampleIdAll = 1ull << 18;
constexpr uint64_t kMmapCommTask = (1ull << 8) | (1ull << 9) | (1ull << 13);

// A 128-byte perf_event_attr (perf 6.1's size).
inline std::string attr(uint32_t type, uint64_t config, uint64_t sample_type, uint64_t flags) {
  std::string a(128, '\0');
  set<uint32_t>(a, 0, type);
  set<uint32_t>(a, 4, 128);
  set<uint64_t>(a, 8, config);
  set<uint64_t>(a, 16, 1000);
  set<uint64_t>(a, 24, sample_type);
  set<uint64_t>(a, 40, flags);
  return a;
}

inline std::string record(uint32_t type, uint16_t misc, const std::string& body) {
  if (body.size() + 8 > 0xffff) throw std::length_error("record body too large");
  std::string r;
  put<uint32_t>(r, type);
  put<uint16_t>(r, misc);
  put<uint16_t>(r, uint16_t(8 + body.size()));
  return r + body;
}

inline std::string finished_round() { return record(68, 0, ""); }

// SAMPLE with IP|TID|TIME|PERIOD, preceded by an IDENTIFIER when given.
inline std::string sample(uint64_t ip, int32_t pid, uint64_t time, const uint64_t* identifier = nullptr) {
  std::string b;
  if (identifier) put<uint64_t>(b, *identifier);
  put<uint64_t>(b, ip);
  put<int32_t>(b, pid);
  put<int32_t>(b, pid);
  put<uint64_t>(b, time);
  put<uint64_t>(b, 1000);
  return record(9, 2, b);
}

// Records of an attr without sample_id_all (no trailers).
inline std::string comm(int32_t pid, const std::string& name) {
  std::string b;
  put<int32_t>(b, pid);
  put<int32_t>(b, pid);
  std::string n = name;
  n.resize((n.size() + 8) & ~size_t(7), '\0');
  return record(3, 0, b + n);
}
inline std::string mmap(int32_t pid, uint64_t start, uint64_t len, const std::string& name) {
  std::string b;
  put<int32_t>(b, pid);
  put<int32_t>(b, pid);
  put<uint64_t>(b, start);
  put<uint64_t>(b, len);
  put<uint64_t>(b, 0);
  std::string n = name;
  n.resize((n.size() + 8) & ~size_t(7), '\0');
  return record(1, 2, b + n);
}
inline std::string fork(int32_t pid, int32_t ppid) {
  std::string b;
  put<int32_t>(b, pid);
  put<int32_t>(b, ppid);
  put<int32_t>(b, pid);
  put<int32_t>(b, ppid);
  put<uint64_t>(b, 0);
  return record(7, 0, b);
}

inline std::string pipe_mode(const std::string& records) {
  std::string f = "PERFILE2";
  put<uint64_t>(f, 16);
  return f + records;
}

inline std::string header_attr(const std::string& a, const std::vector<uint64_t>& ids) {
  std::string b = a;
  for (uint64_t id : ids) put<uint64_t>(b, id);
  return record(64, 0, b);
}

// File mode: attr entries (attr + ids section each) at 104, then `extra`
// (ids, if any, addressed by the entries), then the data section.
inline std::string file_mode(const std::vector<std::string>& entries, const std::string& extra,
                             const std::string& data) {
  const uint64_t attr_size = entries.empty() ? 144 : entries[0].size();
  const uint64_t data_off = 104 + attr_size * entries.size() + extra.size();
  std::string f = "PERFILE2";
  put<uint64_t>(f, 104);
  put<uint64_t>(f, attr_size);
  put<uint64_t>(f, 104);
  put<uint64_t>(f, attr_size * entries.size());
  put<uint64_t>(f, data_off);
  put<uint64_t>(f, data.size());
  put<uint64_t>(f, 0);
  put<uint64_t>(f, 0);
  for (int i = 0; i < 4; ++i) put<uint64_t>(f, 0);
  for (const auto& e : entries) f += e;
  return f + extra + data;
}
inline std::string attr_entry(const std::string& a, uint64_t ids_offset, uint64_t ids_size) {
  std::string e = a;
  put<uint64_t>(e, ids_offset);
  put<uint64_t>(e, ids_size);
  return e;
}
inline std::string one_attr_file(const std::string& a, const std::string& data) {
  return file_mode({attr_entry(a, 0, 0)}, "", data);
}

// `chunk` repeated `times` as one zstd stream that is never ended (as perf
// writes it), cut into COMPRESSED records of at most 64 KiB.
inline std::string compressed_records(const std::string& chunk, uint64_t times) {
  ZSTD_CCtx* c = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 1);
  std::string out, pending;
  std::vector<char> buf(1 << 16);
  auto drain = [&](ZSTD_outBuffer& o) {
    pending.append(buf.data(), o.pos);
    o.pos = 0;
    while (pending.size() >= 60000) {
      out += record(81, 0, pending.substr(0, 60000));
      pending.erase(0, 60000);
    }
  };
  for (uint64_t i = 0; i < times; ++i) {
    ZSTD_inBuffer in{chunk.data(), chunk.size(), 0};
    while (in.pos < in.size) {
      ZSTD_outBuffer o{buf.data(), buf.size(), 0};
      ZSTD_compressStream2(c, &o, &in, ZSTD_e_continue);
      drain(o);
    }
  }
  for (;;) {
    ZSTD_outBuffer o{buf.data(), buf.size(), 0};
    ZSTD_inBuffer none{nullptr, 0, 0};
    size_t left = ZSTD_compressStream2(c, &o, &none, ZSTD_e_flush);
    drain(o);
    if (left == 0) break;
  }
  ZSTD_freeCCtx(c);
  if (!pending.empty()) out += record(81, 0, pending);
  return out;
}

// cpu-clock without sample_id_all: records carry no trailer.
inline std::string plain_attr() { return attr(1, 0, kIp | kTid | kTime | kPeriod, kMmapCommTask); }

// 1. zstd bomb whose inner records are queued: SWITCH records (8 bytes, no
// trailer) with no FINISHED_ROUND; `mib` MiB decompressed.
inline std::string zstd_bomb_queued(uint64_t mib) {
  std::string chunk;
  for (int i = 0; i < (1 << 17); ++i) chunk += record(14, 0, "");
  return one_attr_file(plain_attr(), compressed_records(chunk, mib));
}

// 2. zstd bomb of records that are not queued (THREAD_MAP, ~64 KiB of zeros
// each): only the volume of zstd output is large.
inline std::string zstd_bomb_volume(uint64_t mib) {
  std::string chunk;
  const std::string big = record(73, 0, std::string(65520, '\0'));
  while (chunk.size() < (1u << 20)) chunk += big;
  return one_attr_file(plain_attr(), compressed_records(chunk, mib) + finished_round());
}

// 2b. zstd bomb of tiny records with a FINISHED_ROUND after every 127, so
// that nothing piles up: only the number of records (time) is large.
inline std::string zstd_bomb_rounds(uint64_t mib) {
  std::string chunk;
  for (int i = 0; i < (1 << 17); ++i) chunk += (i % 128 == 127) ? finished_round() : record(14, 0, "");
  return one_attr_file(plain_attr(), compressed_records(chunk, mib));
}

// 3. n attrs whose ids sections all point at the same 1 MiB region.
inline std::string aliased_ids(size_t n) {
  std::vector<std::string> entries;
  const uint64_t region = 104 + 144 * n;
  for (size_t i = 0; i < n; ++i)
    entries.push_back(attr_entry(attr(1, 0, kIp | kTid | kTime | kPeriod | kIdentifier, kMmapCommTask), region, 1 << 20));
  std::string ids(1 << 20, '\0');
  const uint64_t id = 0;
  return file_mode(entries, ids, sample(0x1000, 1, 1, &id) + finished_round());
}

// 4. A pipe stream of n HEADER_ATTR records (distinct ids), then samples.
inline std::string attr_flood_pipe(size_t n) {
  const uint64_t st = kIp | kTid | kTime | kPeriod | kIdentifier;
  std::string s;
  for (size_t i = 0; i < n; ++i) s += header_attr(attr(1, 0, st, kMmapCommTask), {i + 1});
  s += comm(7, "victim");
  for (uint64_t i = 0; i < 10; ++i) {
    uint64_t id = 1 + i;
    s += sample(0x1000 + i, 7, 100 + i, &id);
  }
  return pipe_mode(s + finished_round());
}

// 5. The same attrs inside COMPRESSED records of a file (a few KB of zstd).
inline std::string attr_flood_zstd(size_t n) {
  const uint64_t st = kIp | kTid | kTime | kPeriod | kIdentifier;
  std::string inner;
  for (size_t i = 0; i < n; ++i) inner += header_attr(attr(1, 0, st, 0), {1000 + i});
  uint64_t id = 0;
  std::string data = compressed_records(inner, 1) + sample(0x1000, 7, 100, &id) + finished_round();
  return one_attr_file(attr(1, 0, st, 0), data);
}

// 6. TRACING_DATA (pipe record) with one system of n empty event formats
// under a system name of name_bytes.
inline std::string tracing_amplification(size_t name_bytes, uint32_t n) {
  std::string t("\x17\x08\x44tracing", 10);
  t += std::string("0.6\0", 4);
  t += '\0';  // little-endian
  t += '\x08';
  put<uint32_t>(t, 4096);
  t += std::string("header_page\0", 12);
  put<uint64_t>(t, 0);
  t += std::string("header_event\0", 13);
  put<uint64_t>(t, 0);
  put<uint32_t>(t, 0);  // ftrace formats
  put<uint32_t>(t, 1);  // systems
  t += std::string(name_bytes, 's') + '\0';
  put<uint32_t>(t, n);
  for (uint32_t i = 0; i < n; ++i) put<uint64_t>(t, 0);
  put<uint32_t>(t, 0);
  put<uint32_t>(t, 0);
  put<uint64_t>(t, 0);
  while (t.size() % 8) t += '\0';
  std::string body;
  put<uint32_t>(body, uint32_t(t.size()));
  put<uint32_t>(body, 0);
  std::string s = header_attr(attr(2, 1, kIp | kTid | kTime | kPeriod, kMmapCommTask), {1});
  s += record(66, 0, body) + t;
  s += comm(7, "victim") + sample(0x1000, 7, 1) + finished_round();
  return pipe_mode(s);
}

// 7. A parent with `maps` mappings, then `forks` FORK records of new
// processes; with child_mmaps each child also maps one more page (which
// makes it copy its parent's list).
inline std::string fork_flood(size_t maps, size_t forks, bool child_mmaps) {
  std::string d = comm(1, "parent");
  for (size_t i = 0; i < maps; ++i) d += mmap(1, 0x400000 + 0x2000 * i, 0x1000, "/lib/x.so");
  for (size_t i = 0; i < forks; ++i) {
    int32_t pid = int32_t(1000 + i);
    d += fork(pid, 1);
    if (child_mmaps) d += mmap(pid, 0x7f0000000000 + 0x1000 * i, 0x1000, "/lib/y.so");
  }
  d += sample(0x400010, 1, 1);
  return one_attr_file(plain_attr(), d);
}

// 8. One process given n mappings in descending address order (each new one
// lands at the front of the sorted map list).
inline std::string descending_mmaps(size_t n) {
  std::string d = comm(1, "parent");
  for (size_t i = 0; i < n; ++i) d += mmap(1, 0x7f0000000000 - 0x2000 * i, 0x1000, "/lib/x.so");
  d += sample(0x400010, 1, 1);
  return one_attr_file(plain_attr(), d);
}

}  // namespace fg::hostile
