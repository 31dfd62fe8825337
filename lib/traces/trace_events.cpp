#include "traces/trace_events.h"

#include <cctype>
#include <cstring>

#include "diagnostics/input_error.h"
#include "symbols/symbol_names.h"

namespace fg::chrome_trace {

std::string label_of(const std::string& key, const char* prefix) {
  if (key.compare(0, 2, "n:") == 0) return std::string(prefix) + " " + key.substr(2);
  return key.substr(2);
}

std::string quote_name(std::string_view name) {
  std::string s = name.size() > 60 ? std::string(name.substr(0, 57)) + "..." : std::string(name);
  return "'" + s + "'";
}

std::string trimmed(std::string_view s) {
  size_t n = s.size();
  while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t')) --n;
  size_t b = 0;
  while (b < n && (s[b] == ' ' || s[b] == '\t')) ++b;
  return std::string(s.substr(b, n - b));
}

namespace {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

bool ends_with_ci(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && iequals(s.substr(s.size() - suffix.size()), suffix);
}

}  // namespace

void TraceEventCollector::bad_element(uint64_t offset, const char* type_name) {
  ++stats_.events;
  fail_event(offset, std::string("traceEvents element is ") + type_name + ", not an event object");
}

void TraceEventCollector::fail_event(uint64_t offset, const std::string& what) {
  if (!opt_.lenient) throw InputError::at_offset(file_, offset, what + " (--lenient skips such events)");
  ++stats_.bad_events;
  if (stats_.first_bad_event.empty()) stats_.first_bad_event = "byte " + std::to_string(offset) + ": " + what;
}

std::string TraceEventCollector::describe() const {
  std::string d = "event";
  if (ev_->name.type == TraceJsonValue::String) d += " " + quote_name(ev_->name.text);
  if (ev_->ph.type == TraceJsonValue::String) d += " (ph '" + std::string(ev_->ph.text) + "')";
  return d;
}

bool TraceEventCollector::need_time(const TraceJsonValue& v, const char* key) {
  if (v.type == TraceJsonValue::Missing) {
    fail_event(ev_->offset, describe() + ": no \"" + key + "\"");
    return false;
  }
  if (v.type != TraceJsonValue::Number) {
    fail_event(ev_->offset, describe() + ": \"" + key + "\" is " + v.type_name() + ", expected a number");
    return false;
  }
  if (!v.ns_ok) {
    fail_event(ev_->offset, describe() + ": \"" + key + "\" " + std::string(v.text.substr(0, 40)) + " is out of range");
    return false;
  }
  if (v.has_fraction) out_.any_fraction = true;
  return true;
}

bool TraceEventCollector::id_key(const TraceJsonValue& v, const char* key, std::string& out) {
  out.clear();
  if (v.type == TraceJsonValue::Missing) {
    out = "n:0";
    return true;
  }
  if (v.type == TraceJsonValue::String) {
    out += "s:";
    out += v.text;
    return true;
  }
  if (v.type == TraceJsonValue::Number && v.integral) {
    out += "n:";
    out += v.text;  // integral: written as digits
    if (v.text.size() > 1 && v.text[0] == '-' && v.integer == 0) out = "n:0";
    return true;
  }
  fail_event(ev_->offset, describe() + ": \"" + key + "\" is " +
                              (v.type == TraceJsonValue::Number ? "not an integer" : v.type_name()) +
                              ", expected an integer or a string");
  return false;
}

uint32_t TraceEventCollector::thread_index() {
  key_.clear();
  key_ += pid_key_;
  key_ += '\0';
  key_ += tid_key_;
  if (last_thread_ != UINT32_MAX && key_ == last_key_) return last_thread_;
  auto it = thread_of_.find(key_);
  uint32_t id;
  if (it != thread_of_.end()) {
    id = it->second;
  } else {
    id = uint32_t(out_.threads.size());
    out_.threads.push_back(Thread{pid_key_, tid_key_, {}, {}});
    thread_of_.emplace(key_, id);
  }
  last_key_ = key_;
  last_thread_ = id;
  return id;
}

FrameId TraceEventCollector::frame_of_name() {
  const TraceJsonValue& n = ev_->name;
  if (n.type == TraceJsonValue::Missing || n.text.empty()) return profile_.intern("[unnamed]");
  return profile_.intern_from_input(n.text);  // numbers as spelled
}

uint8_t TraceEventCollector::kind_of() const {
  std::string_view cat = ev_->cat.type == TraceJsonValue::String ? ev_->cat.text : std::string_view();
  if (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset" || cat == "Kernel" || cat == "Memcpy" ||
      cat == "Memset")
    return kGpu;
  if (cat == "gpu_user_annotation" || cat == "cuda_sync" || cat == "gpu_instant_event") return kDeviceOther;
  // libtorch's legacy exporter: no cat, device work in pid "CUDA functions".
  if (cat.empty() && ev_->pid.type == TraceJsonValue::String && ends_with_ci(ev_->pid.text, " functions") &&
      !iequals(ev_->pid.text, "CPU functions"))
    return kGpu;
  if (ev_->args_correlation.type == TraceJsonValue::Number && ev_->args_correlation.integral) return kLaunch;
  return kCpu;
}

void TraceEventCollector::event(const TraceJsonEvent& e) {
  ev_ = &e;
  ++stats_.events;
  if (e.ph.type != TraceJsonValue::String) {
    if (e.ph.type == TraceJsonValue::Missing) {
      ++stats_.unknown_phases;
      if (stats_.first_unknown_phase.empty())
        stats_.first_unknown_phase = "byte " + std::to_string(e.offset) + ": " + describe() + " has no \"ph\"";
      return;
    }
    fail_event(e.offset, describe() + ": \"ph\" is " + e.ph.type_name() + ", expected a string");
    return;
  }
  std::string_view ph = e.ph.text;
  char c = ph.size() == 1 ? ph[0] : '\0';
  if (c == 'X' || c == 'B' || c == 'E') return duration_event(c);
  if (c == 'M') return metadata_event();
  if ((c == 's' || c == 't' || c == 'f') && opt_.view == ChromeTraceOptions::View::Gpu) return flow_event(c);
  // Phases of the trace event format that are not durations.
  static const char kOther[] = "iIPCbenSTpFstfONDRc()vV=";
  if (c != '\0' && std::strchr(kOther, c)) {
    ++stats_.other_phases;
    return;
  }
  ++stats_.unknown_phases;
  if (stats_.first_unknown_phase.empty())
    stats_.first_unknown_phase = "byte " + std::to_string(e.offset) + ": " + describe();
}

void TraceEventCollector::duration_event(char c) {
  const TraceJsonEvent& e = *ev_;
  if (!need_time(e.ts, "ts")) return;
  if (!id_key(e.pid, "pid", pid_key_) || !id_key(e.tid, "tid", tid_key_)) return;
  if (e.name.type == TraceJsonValue::Container || e.name.type == TraceJsonValue::Bool ||
      e.name.type == TraceJsonValue::Null) {
    fail_event(e.offset, describe() + ": \"name\" is " + e.name.type_name() + ", expected a string");
    return;
  }
  if (c != 'X') {
    Mark m{e.ts.ns, e.offset, c == 'B' ? frame_of_name() : FoldedProfile::kNoFrame, c == 'B'};
    out_.threads[thread_index()].marks.push_back(m);
    return;
  }
  if (!need_time(e.dur, "dur")) return;
  if (e.dur.ns < 0) {
    fail_event(e.offset, describe() + ": negative \"dur\" " + std::string(e.dur.text));
    return;
  }
  if (e.cat.type == TraceJsonValue::String && e.cat.text == "Trace") {
    ++stats_.trace_spans;  // "PyTorch Profiler (0)": the profiling window, not work
    return;
  }
  uint8_t kind = kind_of();
  int64_t corr = -1, stream = -1;
  if (kind == kLaunch || kind == kGpu) {
    if (e.args_correlation.type == TraceJsonValue::Number && e.args_correlation.integral)
      corr = e.args_correlation.integer;
  }
  if (kind == kGpu) {
    if (e.args_stream.type == TraceJsonValue::Number && e.args_stream.integral) stream = e.args_stream.integer;
    else if (e.tid.type == TraceJsonValue::Number && e.tid.integral) stream = e.tid.integer;
  }
  Span s{e.ts.ns, e.ts.ns + e.dur.ns, e.offset, frame_of_name(), kind, corr, stream};
  out_.threads[thread_index()].spans.push_back(s);
}

void TraceEventCollector::metadata_event() {
  const TraceJsonEvent& e = *ev_;
  ++stats_.metadata;
  if (e.name.type != TraceJsonValue::String) return;
  bool process = e.name.text == "process_name", thread = e.name.text == "thread_name";
  if (!process && !thread) return;
  if (!id_key(e.pid, "pid", pid_key_)) return;
  std::string label = e.args_name.type == TraceJsonValue::String ? trimmed(e.args_name.text) : std::string();
  if (process) {
    out_.process_names[pid_key_] = label;
  } else {
    if (!id_key(e.tid, "tid", tid_key_)) return;
    out_.thread_names[pid_key_ + '\0' + tid_key_] = label;
  }
}

void TraceEventCollector::flow_event(char c) {
  const TraceJsonEvent& e = *ev_;
  ++stats_.other_phases;
  int64_t id;
  if (e.id.type == TraceJsonValue::Number && e.id.integral) {
    id = e.id.integer;
  } else if (e.id.type == TraceJsonValue::String) {
    auto it = string_ids_.try_emplace(std::string(e.id.text), -2 - int64_t(string_ids_.size())).first;
    id = it->second;
  } else {
    return;
  }
  if (e.ts.type != TraceJsonValue::Number || !e.ts.ns_ok) return;
  if (!id_key(e.pid, "pid", pid_key_) || !id_key(e.tid, "tid", tid_key_)) return;
  bool enclosing = c != 'f' || (e.bp.type == TraceJsonValue::String && e.bp.text == "e");
  out_.flows.push_back(Flow{id, e.ts.ns, thread_index(), c, enclosing});
}

}  // namespace fg::chrome_trace
