// Which of a recording's events a fold reads, decided once its attrs are
// known: the sampling event to fold (--event, else the first one seen), the
// sched_switch events of the off-CPU views and their tracepoint fields, and
// whether the file has switch records to end off-CPU blocks with.
// Owning thread: the folding thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fold/fold_perf_data.h"
#include "perf/perf_records.h"
#include "perf/tracing_data.h"

namespace fg {

// "cpu-clock:u" names the same event as "cpu-clock".
bool event_name_matches(const std::string& attr_name, const std::string& wanted);
// "task-clock/period=100000/:u" without its terms: "task-clock:u".
std::string event_name_without_terms(const std::string& name);
bool is_clock_event(const EventAttr& a);

// One sched_switch sample's fields.
struct SchedSwitch {
  int64_t prev_pid = -1, next_pid = -1;
  uint64_t prev_state = 0;
  std::string_view prev_comm;  // into the sample's RAW bytes; empty if the format has none
};

class EventSelection {
 public:
  // Throws UsageError for an unknown --event or an off-CPU view without
  // sched_switch events, InputError for unusable tracing data; notes
  // harmless problems in `warnings`.
  EventSelection(const PerfFileInfo& info, const std::string& path, const FoldOptions& options,
                 std::vector<std::string>& warnings);

  bool is_switch(size_t attr_index) const;
  // Whether samples of attr_index are the folded event (the first sampling
  // event seen, unless --event chose one).
  bool is_folded(size_t attr_index) {
    if (fold_attr_ < 0) fold_attr_ = int(attr_index);
    return attr_index == size_t(fold_attr_);
  }
  // The folded event's attr index, or -1 before any sample.
  int folded_attr() const { return fold_attr_; }
  // The file has PERF_RECORD_SWITCH records (else off-CPU blocks end at the
  // thread's next record: an upper bound).
  bool has_switch_records() const { return switch_records_; }

  // Reads a sched_switch sample's fields; false when its RAW payload is too
  // short for the format.
  bool read_switch(const Sample& s, SchedSwitch* out) const;

 private:
  void select_event(const PerfFileInfo& info, const std::string& path, const std::string& wanted);
  bool is_sched_switch(const EventAttr& a) const;

  TracingData tracing_;
  int fold_attr_ = -1;
  bool switch_records_ = false;
  std::vector<size_t> sched_switch_attrs_;
  const TracepointField* prev_pid_ = nullptr;
  const TracepointField* prev_state_ = nullptr;
  const TracepointField* prev_comm_ = nullptr;
  const TracepointField* next_pid_ = nullptr;
};

}  // namespace fg
