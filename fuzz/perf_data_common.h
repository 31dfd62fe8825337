// One fuzz iteration over a perf.data path: header, every record, the
// tracepoint formats and their fields on every RAW payload. Rejections must
// be fg::InputError; anything else (another exception, a crash, a leak, a
// hang past -timeout) is a finding.
#pragma once

#include <string>

#include "diagnostics/input_error.h"
#include "perf_data_touch.h"

namespace fg::fuzz {

class TracepointTouchingHandler : public TouchingHandler {
 public:
  const TracingData* tracing = nullptr;
  void on_sample(const Sample& s) override {
    TouchingHandler::on_sample(s);
    if (!tracing || !s.attr || !s.raw) return;
    const TracepointFormat* f = tracing->find(s.attr->config);
    if (!f) return;
    for (const auto& field : f->fields) {
      int64_t i;
      uint64_t u;
      if (read_tracepoint_int(field, s.raw, s.raw_size, &i)) sum += uint64_t(i);
      if (read_tracepoint_uint(field, s.raw, s.raw_size, &u)) sum += u;
      for (char c : read_tracepoint_string(field, s.raw, s.raw_size)) sum += uint8_t(c);
    }
  }
};

inline void read_perf_data(const std::string& path, bool partial) {
  ReadOptions options;
  options.partial = partial;
  // A small budget: the structural mutations (zstd bombs, floods) reach the
  // budget checks in milliseconds instead of filling 256 MiB under ASan.
  options.max_memory = 8u << 20;
  try {
    PerfDataReader reader(path, options);
    TracingData tracing;
    TracepointTouchingHandler handler;
    if (!reader.info().tracing_data.empty()) {
      try {
        tracing = TracingData::parse(reader.info().tracing_data, path);
        handler.tracing = &tracing;
      } catch (const InputError&) {
      }
    }
    reader.read(handler);
    // Pipe mode: tracing data arrives as a record during read().
    if (!handler.tracing && !reader.info().tracing_data.empty()) {
      try {
        TracingData::parse(reader.info().tracing_data, path);
      } catch (const InputError&) {
      }
    }
  } catch (const InputError&) {
  }
}

}  // namespace fg::fuzz
