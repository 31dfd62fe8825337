// Decoding of the non-SAMPLE kernel records (MMAP, MMAP2, COMM, FORK, EXIT,
// SWITCH, LOST, KSYMBOL) into one EventRecord, once per record, with their
// sample_id_all trailers (parsed from the end); the queued form of a decoded
// record; and the choice of the attr a record belongs to (IDENTIFIER / ID
// position). Internal to lib/perf.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "perf/perf_records.h"

namespace fg::perf_record {

// The sample_id_all trailer of a non-SAMPLE kernel record.
struct SampleId {
  bool present = false;
  int32_t pid = -1, tid = -1;
  uint64_t time = 0, id = 0, stream_id = 0, identifier = 0;
  uint32_t cpu = kNoCpu;
  bool has_time = false;
};

// Parses the trailer at the end of rec (hdr.size = size) if attr.sample_id_all;
// returns its size in bytes (0 without one). Throws FormatError if the trailer
// does not fit after the 8-byte header.
size_t parse_sample_id(const EventAttr& attr, const uint8_t* rec, size_t size, SampleId& out);

// Picks the attr of a record: one attr -> 0; otherwise the IDENTIFIER (first
// u64 of SAMPLE, last u64 of other kernel records) or the PERF_SAMPLE_ID at
// its fixed position; id 0 or unknown -> 0 (synthesized records).
class AttrSelector {
 public:
  // Recomputes the scheme and the id map; returns a warning (empty if none).
  std::string reset(const std::vector<EventAttr>& attrs);
  // Appends one attr (index = attrs added so far; first = attr 0) in time
  // proportional to its ids, so that a stream of HEADER_ATTR records costs
  // O(1) amortised per id instead of a reset over all attrs each time.
  // Returns the warning when the scheme first falls back to First.
  std::string add(const EventAttr& attr, const EventAttr& first);
  // The attr an id belongs to (the first one that listed it), or SIZE_MAX.
  size_t attr_of_id(uint64_t id) const {
    auto it = by_id_.find(id);
    return it == by_id_.end() ? SIZE_MAX : it->second;
  }
  size_t select(uint32_t type, const uint8_t* rec, size_t size) const;

 private:
  enum class Scheme { Single, Identifier, IdPosition, First } scheme_ = Scheme::Single;
  size_t sample_id_offset_ = 0;   // byte offset of ID in SAMPLE (IdPosition)
  size_t trailer_id_from_end_ = 0;  // bytes from the end to ID in a trailer (IdPosition)
  bool trailers_ = false;           // attr 0 has sample_id_all
  size_t count_ = 0;                // attrs added
  bool all_identifier_ = true, all_id_ = true, same_pos_ = true;
  std::unordered_map<uint64_t, size_t> by_id_;
  size_t lookup(uint64_t id) const {
    auto it = by_id_.find(id);
    return it == by_id_.end() ? 0 : it->second;
  }
};

// A kernel record other than SAMPLE, decoded once when it is read: the
// reader's bookkeeping (its ordering time, LOST counts) reads it then, and the
// handler receives the same decoded record when its time comes. Only the
// member named by `type` is meaningful; views point into the record bytes it
// was decoded from (or, after load_event, into the queued copy).
struct EventRecord {
  uint32_t type = 0;  // perf_abi::MMAP, MMAP2, COMM, FORK, EXIT, LOST, LOST_SAMPLES, SWITCH*, KSYMBOL
  uint64_t time = 0;  // what ordering uses: the trailer's time, else FORK/EXIT's body time
  MmapRecord mmap;    // MMAP, MMAP2
  CommRecord comm;    // COMM
  TaskRecord task;    // FORK, EXIT
  LostRecord lost;    // LOST, LOST_SAMPLES
  SwitchRecord sw;    // SWITCH, SWITCH_CPU_WIDE
  KsymbolRecord ksymbol;
};

// Decodes rec (hdr.size = size, of the given attr) if it is a kind the
// handler receives; false for the kinds that are only counted (THROTTLE,
// NAMESPACES, CGROUP, AUX, ...). Fills trailer fields (time, cpu, pid/tid of
// SWITCH) and file_offset. Throws FormatError when the body or the trailer
// does not fit.
bool decode_event(const EventAttr& attr, uint32_t type, const uint8_t* rec, size_t size, uint64_t file_offset,
                  EventRecord& out);

// The queued form of a decoded event: the member for its type and the bytes
// its views refer to, in one 8-aligned block that may be moved with memcpy
// (the ordering queue's arena compacts). stored_size <= 64 KiB + 256.
size_t stored_size(const EventRecord& e);
void store_event(const EventRecord& e, uint8_t* dst);
// Reads a block written by store_event; out's views point into src.
void load_event(const uint8_t* src, EventRecord& out);

// Calls the handler method for e.type.
void deliver_event(const EventRecord& e, RecordHandler& handler);

}  // namespace fg::perf_record
