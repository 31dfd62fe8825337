#include "traces/trace_json_scanner.h"

#include <cstring>

#include "traces/json_stream.h"

namespace fg {

namespace {

using json_stream::key_is;
using json_stream::show;

// The Chrome trace layer over JsonStream: where traceEvents is, which keys
// of an event matter, and what may follow what.
class Scanner {
 public:
  Scanner(InputStream& in, TraceJsonEventSink& sink, Progress* progress) : json_(in, progress), sink_(sink) {}

  TraceJsonScanResult run();

 private:
  void parse_event(const char*& p);
  void parse_args(const char*& p);
  void events_loop(bool bare_array);
  // One member of the root object: traceEvents (true: its '[' is consumed),
  // distributedInfo (its rank kept) or anything else (skipped).
  bool root_member(const char*& p);
  void root_object();
  void expect_only_white_space();

  char peek(const char*& p) const { return json_.peek(p); }
  [[noreturn]] void malformed(const char* at, const std::string& what) const { json_.malformed(at, what); }

  JsonStream json_;
  TraceJsonEventSink& sink_;
  TraceJsonEvent ev_;
  std::string s_name_, s_ph_, s_cat_, s_pid_, s_tid_, s_id_, s_bp_, s_args_name_, s_args_stream_, s_key_;
  bool rank_key_ = false;
  TraceJsonScanResult result_;
};

void Scanner::parse_args(const char*& p) {
  ++p;  // '{'
  char c = peek(p);
  if (c == '}') {
    ++p;
    return;
  }
  for (;;) {
    std::string_view k = json_.parse_key(p, &s_key_);
    if (key_is(k, "name", 4)) json_.parse_field(p, ev_.args_name, &s_args_name_);
    else if (key_is(k, "correlation", 11) || (rank_key_ && key_is(k, "rank", 4)))
      json_.parse_field(p, ev_.args_correlation, nullptr);
    else if (key_is(k, "stream", 6)) json_.parse_field(p, ev_.args_stream, &s_args_stream_);
    else json_.skip_value(p);
    c = peek(p);
    if (c == ',') {
      ++p;
      c = peek(p);
      continue;
    }
    if (c == '}') {
      ++p;
      return;
    }
    malformed(p, "expected ',' or '}', got " + show(c));
  }
}

void Scanner::parse_event(const char*& p) {
  ev_ = TraceJsonEvent{};
  ev_.offset = json_.offset_of(p);
  ++p;  // '{'
  char c = peek(p);
  if (c == '}') {
    ++p;
    return;
  }
  for (;;) {
    std::string_view k = json_.parse_key(p, &s_key_);
    TraceJsonValue* v = nullptr;
    std::string* scratch = nullptr;
    switch (k.size()) {
      case 2:
        if (key_is(k, "ph", 2)) v = &ev_.ph, scratch = &s_ph_;
        else if (key_is(k, "ts", 2)) v = &ev_.ts;
        else if (key_is(k, "id", 2)) v = &ev_.id, scratch = &s_id_;
        else if (key_is(k, "bp", 2)) v = &ev_.bp, scratch = &s_bp_;
        break;
      case 3:
        if (key_is(k, "dur", 3)) v = &ev_.dur;
        else if (key_is(k, "pid", 3)) v = &ev_.pid, scratch = &s_pid_;
        else if (key_is(k, "tid", 3)) v = &ev_.tid, scratch = &s_tid_;
        else if (key_is(k, "cat", 3)) v = &ev_.cat, scratch = &s_cat_;
        break;
      case 4:
        if (key_is(k, "name", 4)) v = &ev_.name, scratch = &s_name_;
        else if (key_is(k, "args", 4) && *p == '{') {
          parse_args(p);
          goto next;
        }
        break;
      default:
        break;
    }
    if (v) json_.parse_field(p, *v, scratch);
    else json_.skip_value(p);
  next:
    c = peek(p);
    if (c == ',') {
      ++p;
      c = peek(p);
      continue;
    }
    if (c == '}') {
      ++p;
      return;
    }
    malformed(p, "expected ',' or '}', got " + show(c));
  }
}

void Scanner::events_loop(bool bare_array) {
  // In a bare array the format allows the input to stop between events.
  bool stop = false;
  auto at_eof_between = [&]() -> bool {
    if (!bare_array) json_.truncated();
    result_.missing_close = true;
    stop = true;
    return false;
  };
  auto at_eof_inside = [&]() -> bool { json_.truncated(); };
  bool first = true;
  for (;;) {
    bool closed = false, is_event = false;
    uint64_t element_offset = 0;
    TraceJsonValue::Type type = TraceJsonValue::Missing;
    // The element (or the closing ']' of an empty array).
    bool started = false;
    bool ok = json_.unit(
        [&](const char*& p) {
          started = false;
          char c = peek(p);
          if (first && c == ']') {
            ++p;
            closed = true;
            return;
          }
          started = true;
          element_offset = json_.offset_of(p);
          if (c == '{') {
            parse_event(p);
            is_event = true;
          } else {
            type = json_.skip_value(p);
          }
        },
        [&]() -> bool { return started ? at_eof_inside() : at_eof_between(); });
    if (!ok || stop) return;
    if (closed) return;
    if (is_event) sink_.event(ev_);
    else {
      TraceJsonValue v;
      v.type = type;
      sink_.bad_element(element_offset, v.type_name());
    }
    first = false;
    // The separator.
    json_.unit(
        [&](const char*& p) {
          char c = peek(p);
          if (c == ',') {
            ++p;
          } else if (c == ']') {
            ++p;
            closed = true;
          } else {
            malformed(p, "expected ',' or ']' after an event, got " + show(c));
          }
        },
        at_eof_between);
    if (stop || closed) return;
  }
}

TraceJsonScanResult Scanner::run() {
  json_.refill();
  auto at_eof = [&]() -> bool { json_.truncated(); };
  // BOM, then the root.
  if (json_.len() >= 3 && std::memcmp(json_.data(), "\xEF\xBB\xBF", 3) == 0) json_.set_pos(3);
  char root = 0;
  json_.unit([&](const char*& p) { root = peek(p); }, at_eof);
  if (root == '[') {
    json_.set_pos(json_.pos() + 1);
    result_.found_events = true;
    events_loop(true);
  } else if (root == '{') {
    result_.root_is_object = true;
    json_.set_pos(json_.pos() + 1);
    root_object();
  } else {
    json_.unit([&](const char*& p) { json_.skip_value(p); }, at_eof);
  }
  if (!result_.missing_close) expect_only_white_space();
  result_.bytes = json_.bytes_read();
  return result_;
}

bool Scanner::root_member(const char*& p) {
  rank_key_ = false;
  std::string_view k = json_.parse_key(p, &s_key_);
  char v = *p;
  if (!result_.found_events && v == '[' && key_is(k, "traceEvents", 11)) {
    ++p;
    return true;
  }
  if (v == '{' && key_is(k, "distributedInfo", 15)) {
    ev_ = TraceJsonEvent{};
    rank_key_ = true;  // "rank" lands where args.correlation would
    parse_args(p);
    rank_key_ = false;
    if (ev_.args_correlation.type == TraceJsonValue::Number && ev_.args_correlation.integral)
      result_.rank = ev_.args_correlation.integer;
    ev_ = TraceJsonEvent{};
    return false;
  }
  json_.skip_value(p);
  return false;
}

// After the root's '{': its members, up to and including its '}'.
void Scanner::root_object() {
  auto at_eof = [&]() -> bool { json_.truncated(); };
  bool first = true, done = false;
  while (!done) {
    bool events = false;
    json_.unit(
        [&](const char*& p) {
          events = false;
          char c = peek(p);
          if (first && c == '}') {
            ++p;
            done = true;
            return;
          }
          events = root_member(p);
        },
        at_eof);
    if (done) break;
    first = false;
    if (events) {
      result_.found_events = true;
      events_loop(false);
    }
    json_.unit(
        [&](const char*& p) {
          char c = peek(p);
          if (c == ',') {
            ++p;
          } else if (c == '}') {
            ++p;
            done = true;
          } else {
            malformed(p, "expected ',' or '}', got " + show(c));
          }
        },
        at_eof);
  }
}

// Nothing but white space may follow the root.
void Scanner::expect_only_white_space() {
  for (;;) {
    const char* p = json_.data() + json_.pos();
    while (p < json_.end() && json_stream::is_ws(*p)) ++p;
    json_.set_pos(size_t(p - json_.data()));
    if (p < json_.end()) malformed(p, "unexpected " + show(*p) + " after the end of the JSON document");
    if (json_.at_eof()) break;
    json_.refill();
  }
}

}  // namespace

const char* TraceJsonValue::type_name() const {
  switch (type) {
    case Number: return "a number";
    case String: return "a string";
    case Null: return "null";
    case Bool: return "a boolean";
    case Container: return "an object or array";
    default: return "missing";
  }
}

TraceJsonScanResult scan_trace_json(InputStream& in, TraceJsonEventSink& sink, Progress* progress) {
  Scanner s(in, sink, progress);
  return s.run();
}

}  // namespace fg
