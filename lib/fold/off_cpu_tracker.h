// Off-CPU pairing: a task's time off the CPU runs from its switch-out (a
// sched:sched_switch sample, whose stack is kept) to its next switch-in
// (PERF_RECORD_SWITCH IN, SWITCH_CPU_WIDE IN, or a sched_switch naming it as
// next_pid), whichever comes first. Records must arrive in time order.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace fg {

// prev_state as perf prints it: "R", "R+", "S", "D", "T", "t", "X", "Z", "P", "I".
std::string task_state_name(uint64_t prev_state, uint64_t preempt_bit = 0x100);

struct OffCpuBlock {
  uint32_t stack;        // caller's stack handle, from begin()
  uint64_t nanoseconds;
  uint64_t prev_state;
};

struct OffCpuStats {
  uint64_t switch_outs = 0;
  uint64_t paired = 0;             // closed by a real switch-in
  uint64_t closed_by_fallback = 0; // closed by the task's next record (upper bound)
  uint64_t replaced = 0;           // a second switch-out before any switch-in
  uint64_t unfinished = 0;         // still off-CPU at the end
  uint64_t dropped_short = 0;      // below --min-block
  uint64_t dropped_state = 0;      // filtered by --state
};

class OffCpuTracker {
 public:
  struct Options {
    bool fallback_to_next_record = false;  // no switch-in source in the file
    bool include_unfinished = false;
    uint64_t min_block_ns = 0;
    std::string states;                    // letters to keep ("S", "D", "R"...); empty = all
  };
  explicit OffCpuTracker(Options options) : options_(std::move(options)) {}

  // A switch-out of tid at time t with the caller's stack handle.
  void switch_out(int32_t tid, uint64_t time, uint32_t stack, uint64_t prev_state, std::vector<OffCpuBlock>& out);
  // A switch-in of tid at time t (any of the three sources).
  void switch_in(int32_t tid, uint64_t time, std::vector<OffCpuBlock>& out);
  // Any other record of tid (the fallback's end of a block).
  void activity(int32_t tid, uint64_t time, std::vector<OffCpuBlock>& out) {
    if (options_.fallback_to_next_record && !pending_.empty()) close(tid, time, out, true);
  }
  // End of the trace: with include_unfinished, closes every pending block at end_time.
  void finish(uint64_t end_time, std::vector<OffCpuBlock>& out);

  const OffCpuStats& stats() const { return stats_; }

 private:
  struct Pending {
    uint64_t time;
    uint32_t stack;
    uint64_t prev_state;
  };
  void close(int32_t tid, uint64_t time, std::vector<OffCpuBlock>& out, bool fallback);
  bool keep_state(uint64_t prev_state) const;

  Options options_;
  std::unordered_map<int32_t, Pending> pending_;
  OffCpuStats stats_;
};

}  // namespace fg
