#include "fold/sample_selection.h"

#include <algorithm>
#include <functional>

namespace fg {

SampleSelection::SampleSelection(SampleSelectionOptions options, const ProcessTable& table)
    : options_(std::move(options)), table_(table), tid_cache_(256) {}

size_t SampleSelection::RootKeyHash::operator()(const RootKey& k) const {
  return std::hash<std::string>()(k.comm) ^ (size_t(uint32_t(k.pid)) << 20) ^ size_t(uint32_t(k.tid));
}

SampleSelection::CachedThread& SampleSelection::thread(int32_t sample_pid, int32_t tid) {
  CachedThread& t = tid_cache_[uint32_t(tid) % tid_cache_.size()];
  if (t.sample_pid == sample_pid && t.tid == tid && t.epochs[0] == epoch_of(sample_pid) &&
      t.epochs[1] == epoch_of(tid) && t.epochs[2] == epoch_of(t.pid))
    return t;
  t = CachedThread{};
  t.sample_pid = sample_pid;
  t.tid = tid;
  t.comm = comm_of(sample_pid, tid);
  t.pid = sample_pid > 0 ? sample_pid : table_.pid_of(tid);
  t.proc = table_.process(t.pid);
  t.epochs[0] = epoch_of(sample_pid);
  t.epochs[1] = epoch_of(tid);
  t.epochs[2] = epoch_of(t.pid);
  return t;
}

std::string_view SampleSelection::comm_of(int32_t pid, int32_t tid) {
  std::string_view c = table_.comm_of(pid, tid);
  if (!c.empty()) return c;
  // perf names a thread it has no COMM for ":TID" (thread__new), except the
  // idle task, tid 0, which perf_session__register_idle_thread calls
  // "swapper" (a system-wide recording has no COMM record for it, and it is
  // often the largest root there).
  if (tid == 0) return "swapper";
  auto it = unnamed_.find(tid);
  if (it == unnamed_.end()) it = unnamed_.emplace(tid, ":" + std::to_string(tid)).first;
  return it->second;
}

bool SampleSelection::selected(int32_t pid, int32_t tid, uint64_t time_ns, std::string_view comm) const {
  const auto& o = options_;
  if (!o.pids.empty() && std::find(o.pids.begin(), o.pids.end(), pid) == o.pids.end()) return false;
  if (!o.tids.empty() && std::find(o.tids.begin(), o.tids.end(), tid) == o.tids.end()) return false;
  if (!o.comms.empty() && std::find(o.comms.begin(), o.comms.end(), comm) == o.comms.end()) return false;
  double secs = double(time_ns) / 1e9;
  if (o.time_start >= 0 && secs < o.time_start) return false;
  if (o.time_end >= 0 && secs > o.time_end) return false;
  return true;
}

// Named here, interned into the profile by whoever symbolises the first
// stack under it (the symbolising thread owns the profile).
ThreadRoot* SampleSelection::root(std::string_view comm, int32_t pid, int32_t tid) {
  const bool by_pid = options_.root_with_pid || options_.root_with_tid || options_.roots_per_thread;
  const bool by_tid = options_.root_with_tid || options_.roots_per_thread;
  RootKey key{std::string(comm), by_pid ? pid : 0, by_tid ? tid : 0};
  auto it = roots_.find(key);
  if (it != roots_.end()) return it->second;
  // As stackcollapse-perf.pl names a comm: spaces as '_'; and nothing
  // that splits a frame or a line (prctl(PR_SET_NAME) takes any bytes).
  std::string name = folded_safe_name(comm);
  std::replace(name.begin(), name.end(), ' ', '_');
  if (options_.root_with_tid) name += "-" + std::to_string(pid) + "/" + std::to_string(tid);
  else if (options_.root_with_pid) name += "-" + std::to_string(pid);
  ThreadRoot* root = &root_store_.emplace_back();
  root->name = std::move(name);
  if (options_.keep_root_comm) root->comm = std::string(comm);
  root->pid = pid;
  root->tid = tid;
  roots_.emplace(std::move(key), root);
  return root;
}

}  // namespace fg
