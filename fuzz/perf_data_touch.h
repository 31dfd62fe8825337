// A RecordHandler for the perf.data fuzz targets that reads every byte each
// delivered record points at (callchain, registers, stack copy, raw payload,
// names), so ASan sees any view that runs past the record it came from.
#pragma once

#include <cstdint>

#include "perf/perf_data_reader.h"
#include "perf/tracing_data.h"

namespace fg::fuzz {

class TouchingHandler : public RecordHandler {
 public:
  uint64_t sum = 0;
  void on_sample(const Sample& s) override {
    for (uint64_t i = 0; i < s.callchain_nr; ++i) sum += s.callchain[i];
    for (uint64_t i = 0; i < s.read_nr_words; ++i) sum += s.read_values[i];
    for (uint32_t i = 0; i < s.raw_size; ++i) sum += s.raw[i];
    for (uint64_t i = 0; i < s.branch_nr * 3; ++i) sum += s.branch_entries[i];
    if (s.branch_counters)
      for (uint64_t i = 0; i < s.branch_nr; ++i) sum += s.branch_counters[i];
    for (uint64_t i = 0; i < s.stack_user_size; ++i) sum += s.stack_user[i];
    for (uint64_t i = 0; i < s.aux_size; ++i) sum += s.aux[i];
    uint64_t v;
    for (int k = 0; k < 24; ++k) {
      if (s.user_reg(k, &v)) sum += v;
      if (s.intr_reg(k, &v)) sum += v;
    }
  }
  void on_mmap(const MmapRecord& m) override {
    for (char c : m.filename) sum += uint8_t(c);
    for (unsigned i = 0; i < m.build_id_size; ++i) sum += m.build_id[i];
  }
  void on_comm(const CommRecord& c) override {
    for (char ch : c.comm) sum += uint8_t(ch);
  }
  void on_ksymbol(const KsymbolRecord& k) override {
    for (char c : k.name) sum += uint8_t(c);
  }
};

}  // namespace fg::fuzz
