// A streaming, validating JSON reader specialised for Chrome trace files: it
// walks the traceEvents array and hands each event's few fields that folding
// needs (name, ph, cat, ts, dur, pid, tid, id, bp and args.name/correlation/
// stream) to a callback, skipping everything else without building a DOM.
// Written by hand because a general SAX parser spends most of its time on
// values nobody reads (nlohmann's reaches ~50 MB/s; this one several times that).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "folded/input_stream.h"

namespace fg {

class Progress;

// One field of an event as it was written.
struct TraceJsonValue {
  enum Type : uint8_t { Missing, Number, String, Null, Bool, Container };
  Type type = Missing;
  bool integral = false;      // Number: written without fraction or exponent and fits int64
  bool ns_ok = false;         // Number: value * 1000 fits the timestamp range (ns)
  bool has_fraction = false;  // Number: written with a fraction or an exponent
  int64_t integer = 0;        // Number, when integral
  int64_t ns = 0;             // Number, when ns_ok: the value (us) in integer ns, rounded
  std::string_view text;      // String: the unescaped text; Number: its spelling

  // "a string", "a number", "null", "a boolean", "an object or array", "missing"
  const char* type_name() const;
};

// The fields of one traceEvents element; the views are valid during the callback only.
struct TraceJsonEvent {
  uint64_t offset = 0;  // byte offset of the event's '{' in the (decompressed) input
  TraceJsonValue name, ph, cat, ts, dur, pid, tid, id, bp;
  TraceJsonValue args_name, args_correlation, args_stream;
};

class TraceJsonEventSink {
 public:
  virtual ~TraceJsonEventSink() = default;
  virtual void event(const TraceJsonEvent& e) = 0;
  // An element of traceEvents that is not an object ("a string", ...).
  virtual void bad_element(uint64_t offset, const char* type_name) = 0;
};

struct TraceJsonScanResult {
  bool found_events = false;   // a traceEvents array (or a bare top-level array) was seen
  bool root_is_object = false;
  bool missing_close = false;  // bare array cut after a complete element (the format allows it)
  uint64_t bytes = 0;          // input bytes read (decompressed)
  int64_t rank = -1;           // Kineto's top-level distributedInfo.rank, when present
};

// Reads all of `in`, calling `sink` per event. Throws InputError naming
// `in.name()` and the byte offset for malformed JSON ("malformed JSON: ...",
// "(truncated file?)" when the input ends early) and for single values over
// 64 MiB (memory stays bounded by that and the 4 MiB read block).
TraceJsonScanResult scan_trace_json(InputStream& in, TraceJsonEventSink& sink, Progress* progress = nullptr);

// "12.345678" (microseconds) -> 12346 ns: exact for plain decimals, through
// double for exponents. False when beyond +-4e18 ns.
bool trace_us_to_ns(std::string_view text, int64_t& out);

}  // namespace fg
