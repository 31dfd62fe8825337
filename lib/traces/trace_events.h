// A Chrome trace's events sorted by thread, as the fold needs them: duration
// events (X spans, B/E marks), flow events and the process and thread names,
// collected from trace_json_scanner's callbacks with each event's fields
// checked (an error, or counted and skipped with --lenient).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "folded/folded_profile.h"
#include "traces/chrome_trace.h"
#include "traces/trace_json_scanner.h"

namespace fg::chrome_trace {

// What a span is, for the GPU view.
enum SpanKind : uint8_t {
  kCpu,          // an op, annotation, python function, ... on a CPU thread
  kLaunch,       // a CPU span carrying args.correlation (cudaLaunchKernel, hipMemcpyAsync, ...)
  kGpu,          // a kernel, memcpy or memset on a device stream
  kDeviceOther,  // other spans on device streams (gpu_user_annotation, cuda_sync)
};

// Timestamps are integer nanoseconds so self times subtract exactly and
// identical stacks add up without floating-point noise.
struct Span {
  int64_t start, end;
  uint64_t offset;  // byte offset of the event: file order breaks ties
  FrameId name;
  uint8_t kind;
  int64_t corr;    // kLaunch, kGpu: the correlation id (or -1)
  int64_t stream;  // kGpu: args.stream, else the tid when numeric, else -1
};

// Nesting order: by start, longer first, then file order (the earlier of two
// equal spans is the outer one).
inline bool span_before(const Span& a, const Span& b) {
  if (a.start != b.start) return a.start < b.start;
  if (a.end != b.end) return a.end > b.end;
  return a.offset < b.offset;
}
inline bool span_after(const Span& a, const Span& b) { return span_before(b, a); }

struct Mark {  // one B or E event
  int64_t ts;
  uint64_t offset;
  FrameId name;
  bool begin;
};

struct Flow {  // one flow event (ph s, t or f)
  int64_t id, ts;
  uint32_t thread;
  char ph;
  bool enclosing;  // "bp":"e": binds to the enclosing slice, else to the next one
};

struct Thread {
  std::string pid_key, tid_key;  // "n:42" or "s:CPU Functions"
  std::vector<Span> spans;
  std::vector<Mark> marks;
};

struct TraceEvents {
  std::vector<Thread> threads;  // in order of first appearance
  std::vector<Flow> flows;      // collected in the GPU view only
  std::unordered_map<std::string, std::string> process_names;  // pid key -> process_name
  std::unordered_map<std::string, std::string> thread_names;   // pid key '\0' tid key -> thread_name
  bool any_fraction = false;  // some time written with a fraction (the tick is 1 ns, else 1 us)
};

// "pid 42" for "n:42", the string itself for "s:...".
std::string label_of(const std::string& key, const char* prefix);
// 'name' for messages, cut at 60 bytes.
std::string quote_name(std::string_view name);
// Leading and trailing blanks removed ("stream 7 " in Kineto's thread names).
std::string trimmed(std::string_view s);

// Receives the scanner's events; span and frame names are interned into
// `profile` as they come.
class TraceEventCollector : public TraceJsonEventSink {
 public:
  TraceEventCollector(const std::string& file, FoldedProfile& profile, const ChromeTraceOptions& opt,
                      ChromeTraceStats& stats)
      : file_(file), profile_(profile), opt_(opt), stats_(stats) {}

  void event(const TraceJsonEvent& e) override;
  void bad_element(uint64_t offset, const char* type_name) override;

  TraceEvents& events() { return out_; }

 private:
  // A per-event problem: an error, or counted and skipped when lenient.
  void fail_event(uint64_t offset, const std::string& what);
  std::string describe() const;
  bool need_time(const TraceJsonValue& v, const char* key);
  // "n:42" / "s:name" key of a pid or tid; false when mistyped.
  bool id_key(const TraceJsonValue& v, const char* key, std::string& out);
  uint32_t thread_index();
  FrameId frame_of_name();
  uint8_t kind_of() const;
  // One event by its phase.
  void duration_event(char ph);  // X, B, E
  void metadata_event();         // M
  void flow_event(char ph);      // s, t, f (GPU view)

  const std::string& file_;
  FoldedProfile& profile_;
  const ChromeTraceOptions& opt_;
  ChromeTraceStats& stats_;
  const TraceJsonEvent* ev_ = nullptr;
  TraceEvents out_;

  std::string pid_key_, tid_key_, key_, last_key_;
  uint32_t last_thread_ = UINT32_MAX;
  std::unordered_map<std::string, uint32_t> thread_of_;
  std::unordered_map<std::string, int64_t> string_ids_;
};

}  // namespace fg::chrome_trace
