// Folds a perf.data recording into a FoldedProfile: on-CPU samples weighted by
// their period, off-CPU time from sched_switch pairing, or both (wall clock).
// This is where the reader, the process table, the unwinder and the symbol
// cache meet; names follow `perf script --no-inline | stackcollapse-perf.pl`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fold/off_cpu_tracker.h"
#include "folded/folded_profile.h"
#include "perf/perf_data_reader.h"
#include "symbols/symbol_cache.h"
#include "unwind/dwarf_unwinder.h"

namespace fg {

enum class FoldView { on_cpu, off_cpu, wall };

struct FoldOptions {
  FoldView view = FoldView::on_cpu;
  // Root frame: "comm" (default), "comm-PID" (pid) or "comm-PID/TID" (tid).
  bool pid = false, tid = false;
  bool annotate_kernel = false;  // "_[k]" on kernel frames
  bool annotate_jit = false;     // "_[j]" on JIT frames (perf-PID.map)
  bool addrs = false;            // "[dso+0xOFFSET]" instead of "[dso]" for unknown frames
  bool count = false;            // weight 1 per sample instead of the period
  std::string event;             // fold this event; empty = the first sampling event
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
};

struct FoldStats {
  uint64_t samples = 0;           // SAMPLE records read
  uint64_t folded_samples = 0;    // samples that contributed weight
  uint64_t filtered_samples = 0;  // dropped by --pid/--tid/--comm/--time
  uint64_t other_event_samples = 0;
  std::string event;              // the event that was folded
  uint64_t lost_events = 0, lost_samples = 0;
  uint64_t unique_raw_stacks = 0, unique_frames = 0;
  uint64_t kernel_frames = 0, unknown_frames = 0, frames = 0;
  bool dwarf = false;
  UnwindStats unwind;
  std::string unwind_error;       // last libdwfl message, if any
  bool off_cpu_fallback = false;  // no switch-in source: times are upper bounds
  OffCpuStats off_cpu;
  uint64_t truncated_stacks = 0;  // stacks over kMaxStackDepth frames (leaf-most kept, like perf --max-stack)
  uint64_t truncated_names = 0;   // symbol names cut to kMaxFrameNameBytes
  std::vector<std::string> warnings;
  // What `fgtool info` shows: the header, per-record counts, and what could
  // (not) be symbolised and why.
  PerfFileInfo file;
  ReadStats read;
  std::vector<ObjectStatus> objects;
  KernelSymbolStatus kernel;
  size_t processes = 0;
};

// Folds `path` ("-" = stdin, pipe mode). Throws fg::InputError on damaged
// input (unless options.partial) and fg::UsageError on options that do not
// fit the file (an unknown --event, --off-cpu without sched_switch).
FoldedProfile fold_perf_data(const std::string& path, const FoldOptions& options, FoldStats* stats = nullptr);

// "PERFILE2" at the start of a file.
bool looks_like_perf_data(std::string_view head);

// Lets load_profile() (and so `fgtool svg perf.data`, `fgtool report
// perf.data`, `fgtool diff a.data b.data`) read perf.data with default options.
void register_perf_data_loader();

}  // namespace fg
