// Which samples a fold keeps (--pid-filter, --tid-filter, --comm, --time) and
// under which root frame they go ("comm", "comm-PID" or "comm-PID/TID"), with
// a small per-tid cache of what a sample needs of its thread.
// Owning thread: the folding thread. A ThreadRoot's `frame` alone belongs to
// whichever thread symbolises (it interns the name on first use).
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "folded/folded_profile.h"
#include "unwind/process_table.h"

namespace fg {

// A root frame's name, and its id once interned.
struct ThreadRoot {
  std::string name;
  FrameId frame = FoldedProfile::kNoFrame;  // set by the symbolising side
  std::string comm;  // as recorded (a copy: an off-CPU comm may point into a sample); only for an observer
  int32_t pid = 0, tid = 0;
};

struct SampleSelectionOptions {
  // Root naming: comm-PID (root_with_pid), comm-PID/TID (root_with_tid).
  bool root_with_pid = false, root_with_tid = false;
  // Keep roots apart per thread even when their names are equal (an
  // observer wants raw stacks per thread; the folded output is the same).
  bool roots_per_thread = false;
  bool keep_root_comm = false;  // fill ThreadRoot::comm
  // Filters; empty = all.
  std::vector<std::string> comms;
  std::vector<int32_t> pids, tids;
  double time_start = -1, time_end = -1;  // seconds; < 0 = open
  // No filter: every sample of the folded event is kept.
  bool selects_every_sample() const {
    return comms.empty() && pids.empty() && tids.empty() && time_start < 0 && time_end < 0;
  }
};

class SampleSelection {
 public:
  SampleSelection(SampleSelectionOptions options, const ProcessTable& table);

  // What a sample needs of its thread, cached: consecutive samples mostly
  // come from a few threads, and three hash lookups per sample (comm, pid,
  // process) showed in profiles. Valid until table_changed() names its
  // sample pid, tid or pid.
  struct CachedThread {
    int32_t sample_pid = 0, tid = 0;
    // The epochs of sample_pid, tid and pid when this was filled (0: never).
    uint32_t epochs[3] = {0, 0, 0};
    std::string_view comm;
    int32_t pid = -1;  // sample_pid, or looked up by tid
    const ProcessMaps* proc = nullptr;
    ThreadRoot* root = nullptr;  // filled by root_of
  };
  CachedThread& thread(int32_t sample_pid, int32_t tid);
  // The process table changed pid's process or tid's thread (a record's pid
  // and tid: what ProcessTable changes for an MMAP, COMM, FORK or EXIT):
  // threads cached with either are stale. Only those: on a busy machine's
  // recording (Chromium relaunched, 75 k table changes in 1 M samples) a
  // flush of the whole cache at every change made 11% of samples look their
  // thread up again.
  void table_changed(int32_t pid, int32_t tid) {
    ++epoch_of(pid);
    ++epoch_of(tid);
  }

  bool selected(int32_t pid, int32_t tid, uint64_t time_ns, std::string_view comm) const;

  // The root frame for a thread (the same object for the same name and,
  // with roots_per_thread, thread). Addresses stay valid for the fold.
  ThreadRoot* root(std::string_view comm, int32_t pid, int32_t tid);
  ThreadRoot* root_of(CachedThread& t) {
    if (!t.root) t.root = root(t.comm, t.sample_pid, t.tid);
    return t.root;
  }

  // The thread's comm; perf names a thread it never saw a COMM for ":TID".
  std::string_view comm_of(int32_t pid, int32_t tid);

 private:
  // Keyed by the comm's text, not its address: a sched_switch sample's
  // prev_comm lives in the record buffer, which the next record reuses.
  // (Comms are at most 16 bytes: no allocation.)
  struct RootKey {
    std::string comm;
    int32_t pid, tid;
    bool operator==(const RootKey& o) const { return pid == o.pid && tid == o.tid && comm == o.comm; }
  };
  struct RootKeyHash {
    size_t operator()(const RootKey& k) const;
  };

  SampleSelectionOptions options_;
  const ProcessTable& table_;
  std::vector<CachedThread> tid_cache_;  // indexed by tid modulo its size
  // Per pid or tid modulo kEpochSlots (ids that share a slot only
  // invalidate each other's threads more often): bumped by table_changed.
  static constexpr size_t kEpochSlots = 4096;
  uint32_t& epoch_of(int32_t id) { return epochs_[uint32_t(id) % kEpochSlots]; }
  std::vector<uint32_t> epochs_ = std::vector<uint32_t>(kEpochSlots, 1);
  std::unordered_map<RootKey, ThreadRoot*, RootKeyHash> roots_;
  std::deque<ThreadRoot> root_store_;  // a deque: addresses stay valid
  std::unordered_map<int32_t, std::string> unnamed_;
};

}  // namespace fg
