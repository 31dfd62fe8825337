#include "fold/off_cpu_tracker.h"

#include <algorithm>

namespace fg {

std::string task_state_name(uint64_t prev_state, uint64_t preempt_bit) {
  // TASK_REPORT bits as the sched_switch print fmt decodes them.
  static const char letters[] = "SDTtXZPI";
  uint64_t low = prev_state & 0xff;
  if (low == 0) return (prev_state & preempt_bit) ? "R+" : "R";
  std::string s;
  for (int bit = 0; bit < 8; ++bit)
    if (low & (1u << bit)) s += letters[bit];
  return s;
}

bool OffCpuTracker::keep_state(uint64_t prev_state) const {
  if (options_.states.empty()) return true;
  std::string name = task_state_name(prev_state);
  // "R+" is kept by "R"; a multi-letter state is kept if any letter is asked for.
  for (char c : name)
    if (c != '+' && options_.states.find(c) != std::string::npos) return true;
  return false;
}

void OffCpuTracker::switch_out(int32_t tid, uint64_t time, uint32_t stack, uint64_t prev_state,
                               std::vector<OffCpuBlock>& out) {
  if (tid <= 0) return;  // the idle task is never counted
  ++stats_.switch_outs;
  auto it = pending_.find(tid);
  if (it != pending_.end()) {
    if (options_.fallback_to_next_record) {
      close(tid, time, out, true);
    } else {
      // The switch-in in between was not recorded (lost events): the block's end is unknown.
      ++stats_.replaced;
      pending_.erase(it);
    }
  }
  pending_[tid] = Pending{time, stack, prev_state};
}

void OffCpuTracker::switch_in(int32_t tid, uint64_t time, std::vector<OffCpuBlock>& out) {
  if (tid <= 0 || pending_.empty()) return;
  close(tid, time, out, false);
}

void OffCpuTracker::close(int32_t tid, uint64_t time, std::vector<OffCpuBlock>& out, bool fallback) {
  auto it = pending_.find(tid);
  if (it == pending_.end()) return;
  Pending p = it->second;
  pending_.erase(it);
  if (fallback) ++stats_.closed_by_fallback;
  else ++stats_.paired;
  uint64_t ns = time > p.time ? time - p.time : 0;
  if (!keep_state(p.prev_state)) {
    ++stats_.dropped_state;
    return;
  }
  if (ns < options_.min_block_ns) {
    ++stats_.dropped_short;
    return;
  }
  out.push_back(OffCpuBlock{p.stack, ns, p.prev_state});
}

void OffCpuTracker::finish(uint64_t end_time, std::vector<OffCpuBlock>& out) {
  stats_.unfinished += pending_.size();
  if (options_.include_unfinished) {
    // Deterministic order: by tid.
    std::vector<int32_t> tids;
    for (auto& kv : pending_) tids.push_back(kv.first);
    std::sort(tids.begin(), tids.end());
    for (int32_t tid : tids) {
      Pending p = pending_[tid];
      uint64_t ns = end_time > p.time ? end_time - p.time : 0;
      if (keep_state(p.prev_state) && ns >= options_.min_block_ns) out.push_back(OffCpuBlock{p.stack, ns, p.prev_state});
    }
  }
  pending_.clear();
}

}  // namespace fg
