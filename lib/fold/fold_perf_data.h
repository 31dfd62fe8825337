// Folds a perf.data recording into a FoldedProfile: on-CPU samples weighted by
// their period, off-CPU time from sched_switch pairing, or both (wall clock).
// This is where the reader, the process table, the unwinder and the symbol
// cache meet; names follow `perf script --no-inline | stackcollapse-perf.pl`.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "fold/off_cpu_tracker.h"
#include "folded/folded_profile.h"
#include "perf/perf_data_reader.h"
#include "symbols/symbol_cache.h"
#include "unwind/dwarf_unwinder.h"

namespace fg {

enum class FoldView { on_cpu, off_cpu, wall };

// ---- below the folded text: raw stacks, for exporters that keep addresses (pprof) ----

// One address of a raw stack, and the folded frames it became.
struct RawStackFrame {
  uint64_t address = 0;      // as sampled: a kernel or user virtual address
  bool kernel = false;
  bool return_address = false;  // a caller's return address (symbolised at address - 1)
  const MapEntry* map = nullptr;  // the user mapping; nullptr for kernel and unmapped addresses
  // The frames (inlines included) this address folded to, outermost first:
  // names[0 .. name_count), valid during on_raw_stack only. The same
  // names_start (the fold's frame-cache entry) means the same symbolisation
  // (the fold caches it per object and offset).
  uint32_t names_start = 0, name_count = 0;
  const FrameId* names = nullptr;
};

// The thread a raw stack came from and its root frame in the profile.
struct RawStackRoot {
  std::string_view comm;
  int32_t pid = 0, tid = 0;
  FrameId frame = 0;
};

// The outermost callers a raw stack shares with a recent one of its thread
// (the fold's path memo, stack_symboliser.h), for an observer that
// follows_memo(): it keeps, per memo slot, what it made of each of the
// slot's frames, outermost first. The stack's `reused` outermost frames are
// the slot's first `reused` (they are not in `frames`); afterwards the slot
// holds `kept` frames: those, then the outermost `kept - reused` of `frames`.
struct RawStackMemo {
  uint32_t slot = 0, reused = 0, kept = 0;
};

// Sees every raw stack (a sample stack's addresses, per thread) the fold
// builds and, at the end, its weights. Off unless FoldOptions::observer is
// set; with it, raw stacks are kept apart per thread (the folded output is the
// same). Calls come one at a time, in order, but not always from the same
// thread: on_raw_stack from whichever thread places the stack in the tree
// (the folding or the symbolising thread, one at a time under a mutex), the
// others from the folding thread.
class FoldObserver {
 public:
  virtual ~FoldObserver() = default;
  // Whether on_raw_stack gets only the frames the path memo does not give
  // (about half on a busy recording: the fold names only those); else every
  // frame, and `memo` is empty.
  virtual bool follows_memo() const { return false; }
  // A new raw stack, index 0, 1, 2, ...; frames leaf first, valid during
  // the call only.
  virtual void on_raw_stack(uint32_t index, const RawStackRoot& root, const RawStackFrame* frames, size_t count,
                            const RawStackMemo& memo) = 0;
  // Whether on_known_raw_stack may come instead of on_raw_stack (below);
  // else every raw stack is named and handed over.
  virtual bool takes_known_stacks() const { return false; }
  // A new raw stack, in on_raw_stack's order, with the root and frames of
  // the earlier raw stack `same_as`: seen again after the fold's bounded
  // raw-stack table forgot it, and not named again (KnownStacks).
  virtual void on_known_raw_stack(uint32_t /*index*/, uint32_t /*same_as*/) {}
  // Per raw stack with samples, once: their number and summed weight (the
  // period, or 1 each with --count; ns for clock events), and the profile
  // node the stack folded to. After the fold, or (on-CPU) during it, when
  // the fold's bounded raw-stack table forgets the stack: one seen again
  // later is a new raw stack with a new index.
  virtual void on_samples(uint32_t index, uint64_t samples, double weight, NodeId node) = 0;
  // Off-CPU and wall views: nanoseconds blocked in task state `state` (a
  // prev_state value) after raw stack `index`; `node` is where it was folded
  // (the wall view adds an "[off-cpu: S]" frame, `extra_frame`, else kNoFrame).
  virtual void on_off_cpu(uint32_t index, uint64_t state, uint64_t nanoseconds, FrameId extra_frame, NodeId node) = 0;
  // The last raw stack has been seen; the weights at the end of the fold
  // follow. The fold's MapEntry objects (RawStackFrame::map) still live
  // during this call, not after the fold returns.
  virtual void on_raw_stacks_done() {}
  // Instead of on_raw_stacks_done when the fold stops short (an error on its
  // way out): the MapEntry objects go away once this returns, so nothing
  // may read them afterwards (an observer's own thread included).
  virtual void on_fold_abandoned() noexcept {}
};

struct FoldOptions {
  FoldView view = FoldView::on_cpu;
  // Root frame: "comm" (default), "comm-PID" (root_with_pid, --pid) or
  // "comm-PID/TID" (root_with_tid, --tid). Not filters: see pids/tids.
  bool root_with_pid = false, root_with_tid = false;
  bool annotate_kernel = false;  // "_[k]" on kernel frames
  bool annotate_jit = false;     // "_[j]" on JIT frames (perf-PID.map)
  bool addrs = false;            // "[dso+0xOFFSET]" instead of "[dso]" for unknown frames
  // Unnamed code in anonymous executable memory (JIT code without a
  // perf-PID.map entry): "[perf-PID.map]" as perf script names its dso, or
  // with merge_jit one "[JIT]" for every process.
  bool merge_jit = false;
  // Callers in a frame-pointer callchain (user and kernel) named by their
  // call instruction (return address - 1), as DWARF-unwound callers always
  // are. perf script names them by the return address itself: where a call
  // is a function's last instruction (a noreturn call: exit, abort, ld.so's
  // _start calling _dl_start), that is the next function ("_dl_start_user")
  // or the padding after it ("[unknown]"). Default: perf's names. Source
  // lines (pprof export) are the call site's either way.
  bool call_sites = false;
  bool count = false;            // weight 1 per sample instead of the period
  std::string event;             // fold this event; empty = the first sampling event
  // Filters (--comm, --pid-filter, --tid-filter); empty = all.
  std::vector<std::string> comms;
  std::vector<int32_t> pids, tids;
  // Sample time window in seconds, as `perf script` prints times; < 0 = open.
  double time_start = -1, time_end = -1;
  // Off-CPU.
  std::string states;            // keep only these prev_state letters (S, D, R, ...)
  uint64_t min_block_us = 0;
  bool include_unfinished = false;
  // Reading.
  bool partial = false;          // fold what was read before damage instead of failing
  // Memory budget of the read (ReadBudget): 0 = automatic (proportional to
  // the input), ReadBudget::kUnlimited = none, else bytes (--max-memory).
  uint64_t max_memory = 0;
  bool progress = false;
  // 0 = one per core (max 2). With 2: reading runs on its own thread, and
  // new stacks are symbolised (frame pointers) or unwound (DWARF) on a second
  // one; 1 = everything on the calling thread. Output is the same either way.
  unsigned threads = 0;
  // Fill FoldStats::objects (what `fgtool info` lists). Off by default: it
  // makes every object load its DWARF to say whether it has debuginfo.
  bool object_statuses = false;
  SymbolOptions symbols;
  DwarfUnwinderOptions unwind;
  // At most this many distinct raw stacks are held at once (RawStackIndex);
  // 0 = no bound. It applies to on-CPU folds only: the off-CPU views refer
  // to raw stacks by index until the end (an observer is told a forgotten
  // stack's weights when it is forgotten, FoldObserver::on_samples).
  // 16 K keys are about 4 MB on a busy system-wide recording (where all of
  // them, 1.4 M, took 240 MB, and 64 K 15 MB: the difference is a tenth of
  // that fold's peak). A program with more recurring raw stacks has them
  // symbolised again in each round, which the frame cache and the
  // symboliser's path memo make cheap (busy.data: 11.5% of stacks again
  // against 4.7% with 64 K, the same CPU time). Tests set it tiny: the
  // output must not depend on it.
  size_t max_raw_stacks = 16 * 1024;
  // How many new stacks the symbolising thread is judged over (StackFolder::
  // keep_symbolising_thread_or_not); tests set it tiny.
  uint64_t symbolising_window = 64 * 1024;
  // Not owned; nullptr = none (the normal fold). See FoldObserver.
  FoldObserver* observer = nullptr;
};

struct FoldStats {
  uint64_t samples = 0;           // SAMPLE records read
  uint64_t folded_samples = 0;    // samples that contributed weight
  uint64_t filtered_samples = 0;  // dropped by --pid/--tid/--comm/--time
  uint64_t other_event_samples = 0;
  std::string event;              // the event that was folded
  uint64_t lost_events = 0, lost_samples = 0;
  // unique_raw_stacks: raw stacks symbolised; with max_raw_stacks a stack
  // seen again after the table was emptied counts again.
  uint64_t unique_raw_stacks = 0, unique_frames = 0;
  // frames: of the raw stacks named (not those KnownStacks knew);
  // unknown_frames: of the named_addresses (frame-cache entries made), those
  // with no symbol (one per distinct address, not per frame).
  uint64_t kernel_frames = 0, unknown_frames = 0, frames = 0;
  uint64_t memo_frames = 0, named_addresses = 0, alike_frames = 0;  // SymboliserStats
  uint64_t preloaded_objects = 0;  // objects opened ahead on another thread and used (SymbolCache)
  // Stacks placed in the tree while a symbolising thread ran, and how many
  // of them that thread placed (SymbolisingThread).
  uint64_t placed_stacks = 0, placed_by_symbolising_thread = 0;
  // New raw stacks whose node came from KnownStacks (seen before their
  // table was forgotten): neither named nor placed again.
  uint64_t known_stacks = 0;
  bool dwarf = false;
  UnwindStats unwind;
  std::string unwind_error;       // last libdwfl message, if any
  bool off_cpu_fallback = false;  // no switch-in source: times are upper bounds
  OffCpuStats off_cpu;
  // DWARF samples cut short because the user stack copy was too small
  // (they get perf's root-side "[unknown]" marker; --stack-size fixes them).
  uint64_t cut_short_samples = 0;
  uint64_t truncated_stacks = 0;  // stacks over kMaxStackDepth frames (leaf-most kept, like perf --max-stack)
  uint64_t truncated_names = 0;   // symbol names cut to kMaxFrameNameBytes
  // The symbolising thread was stopped mid-fold: it made the folding thread
  // wait too often (see FoldOptions::symbolising_window).
  bool symbolising_thread_stopped = false;
  std::vector<std::string> warnings;
  // What `fgtool info` shows: the header, per-record counts, and what could
  // (not) be symbolised and why.
  PerfFileInfo file;
  ReadStats read;
  std::vector<ObjectStatus> objects;
  KernelSymbolStatus kernel;
  size_t processes = 0;
};

// Takes a finished fold's state down (the symbol cache and its ELF objects,
// the process maps, the reader's mapping of the file) on a thread of its
// own, while the caller writes the profile: 8-10 ms of a busy 0.9 s fold
// that ran alone on one core after the fold (bench/README.md). The
// destructor waits for that thread. One fold per FoldTeardown.
class FoldTeardown {
 public:
  FoldTeardown() = default;
  FoldTeardown(const FoldTeardown&) = delete;
  FoldTeardown& operator=(const FoldTeardown&) = delete;
  ~FoldTeardown() {
    if (thread_.joinable()) thread_.join();
  }
  // Destroys `state` on the teardown thread (on this one if a thread cannot
  // be started, or one already ran).
  template <class T>
  void take(std::unique_ptr<T> state) {
    if (thread_.joinable()) return;  // state goes here, now
    try {
      thread_ = std::thread([s = std::move(state)]() mutable { s.reset(); });
    } catch (const std::system_error&) {
    }
  }

 private:
  std::thread thread_;
};

// Folds `path` ("-" = stdin, pipe mode). Throws fg::InputError on damaged
// input (unless options.partial) and fg::UsageError on options that do not
// fit the file (an unknown --event, --off-cpu without sched_switch).
// With `teardown`, the fold's state is taken down there, after the return.
FoldedProfile fold_perf_data(const std::string& path, const FoldOptions& options, FoldStats* stats = nullptr,
                             FoldTeardown* teardown = nullptr);

// "PERFILE2" at the start of a file.
bool looks_like_perf_data(std::string_view head);

// Lets load_profile() (and so `fgtool svg perf.data`, `fgtool report
// perf.data`, `fgtool diff a.data b.data`) read perf.data with default options.
void register_perf_data_loader();

}  // namespace fg
