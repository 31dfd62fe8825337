// Folds `perf script` text into a FoldedProfile, following the conventions of
// stackcollapse-perf.pl (comm root frame, frames root first, first event only,
// period weights) and, with off_cpu, pairs sched_switch samples with the next
// switch-in to sum off-CPU microseconds (text without switch lines: the
// task's next record, as fgtool fold does). Shares nothing with the native
// perf.data path, so each can check the other. Streams line by line: memory
// grows with unique stacks and live threads, not with the input.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "collapse/frame_tidy.h"
#include "collapse/perf_script_line.h"
#include "collapse/text_chunker.h"
#include "folded/folded_profile.h"
#include "folded/input_stream.h"

namespace fg {

struct CollapseOptions {
  enum class Root { Comm, CommPid, CommPidTid };
  Root root = Root::Comm;          // --pid: "comm-PID", --tid: "comm-PID/TID"
  bool count_samples = false;      // --count: weight 1 per sample even when a period is printed
  std::string event;               // --event: fold this event instead of the first one seen
  FrameTidyOptions tidy;           // --kernel, --jit, --addrs
  bool keep_inline = false;        // --inline: keep frames perf marks "(inlined)"
  bool off_cpu = false;            // --off-cpu: microseconds off CPU per switch-out stack
  uint32_t state_mask = 0;         // --state: prev_state letters to count (0 = all); see parse_state_filter
  double min_block_us = 0;         // --min-block: ignore shorter off-CPU intervals
  bool lenient = false;            // --lenient: skip malformed lines (and their sample) instead of failing
  bool progress = false;           // progress on stderr while reading a file
  // --threads: 0 = one per core. On-CPU text is cut at blank lines into
  // chunks folded on that many threads and merged (collapse_in_parallel);
  // off-CPU pairing follows the input's order and stays on one thread.
  unsigned threads = 1;
};

// "S,D", "SD", "voluntary" (all but R), "involuntary" (R and R+) -> mask for
// CollapseOptions::state_mask. Throws UsageError on unknown letters.
uint32_t parse_state_filter(const std::string& text);
// The mask bit of a printed prev_state ("S", "R+", "D|K"); 0 when unknown.
uint32_t state_bit(std::string_view prev_state);

struct CollapseStats {
  uint64_t lines = 0;
  uint64_t samples = 0;               // sample headers seen
  uint64_t samples_folded = 0;        // on-CPU: samples added to the profile
  uint64_t samples_other_event = 0;   // on-CPU: samples of events not folded
  std::string event;                  // on-CPU: the event folded
  uint64_t malformed_skipped = 0;     // --lenient: lines skipped
  std::string first_malformed;        // --lenient: "FILE:LINE: what" of the first
  uint64_t first_malformed_line = 0;  // --lenient: its line
  uint64_t truncated_stacks = 0;      // samples with more than kMaxStackDepth frames (leaf-most kept)
  uint64_t truncated_names = 0;       // frame names cut to kMaxFrameNameBytes
  // off-CPU
  uint64_t switch_outs = 0;           // sched_switch samples of a task (pid != 0)
  uint64_t switch_ins = 0;            // PERF_RECORD_SWITCH IN lines seen
  uint64_t intervals = 0;             // off-CPU intervals counted
  uint64_t repeated_switch_outs = 0;  // a switch-out while one was pending (switch-in missed)
  // Without PERF_RECORD_SWITCH lines, a block whose task shows up again (a
  // sample, its next switch-out) before any sched_switch names it as
  // next_pid ends there, as `fgtool fold` ends it without SWITCH records:
  // an upper bound. Counted in `intervals` too.
  uint64_t closed_by_next_record = 0;
  uint64_t next_record_dropped = 0;   // such blocks left out: the text had switch lines after all
  uint64_t pending_at_end = 0;        // still off-CPU when the input ended: not counted
  uint64_t filtered_state = 0;        // --state
  uint64_t filtered_short = 0;        // --min-block
};

// Adds `from` to `into` (the counts of two parts of one input; the first
// malformed line is the earlier one).
void add_collapse_stats(CollapseStats& into, const CollapseStats& from);

class PerfScriptCollapser {
 public:
  // Longer lines are malformed ("not perf script text") and not parsed.
  static constexpr size_t kMaxLineBytes = size_t(1) << 20;

  // Adds to `out`; `source` names the input in error messages.
  PerfScriptCollapser(FoldedProfile& out, CollapseOptions options, std::string source = "-");
  // One line without its '\n'. Throws InputError("SOURCE:LINE: ...") on
  // malformed text unless options.lenient.
  void feed(std::string_view line);
  // Feeds a chunk's lines (TextChunker), numbered from chunk.first_line (or
  // on from the last line fed when it is 0).
  void feed_chunk(const TextChunk& chunk);
  // Ends the input: flushes the last sample, sets the profile's units.
  void finish();
  // Feeds a whole stream and finishes. `size` (0 if unknown) is for progress.
  void read(InputStream& in, uint64_t size = 0);
  const CollapseStats& stats() const { return stats_; }

  // For folding one input in parts: whether the event to fold is settled
  // (the sample that decides it was read), and settling it as `first` did,
  // for a part that comes after first's.
  bool event_chosen() const { return chose_event_; }
  void follow_event_of(const PerfScriptCollapser& first);

 private:
  void begin_sample(const PerfScriptHeader& h);
  void add_frame(const PerfScriptFrame& f);
  void add_frame_line(std::string_view line);
  void flush_sample();
  void malformed(const std::string& what, uint64_t line);
  bool wanted_on_cpu(std::string_view event);
  FrameId root_frame(std::string_view comm, std::string_view pid, std::string_view tid);
  void close_off_cpu(int64_t tid, uint64_t time_ns, bool by_next_record = false);
  // tid shows up again (a sample, a switch-out, its exit): without switch
  // lines, that ends its block.
  void task_seen(int64_t tid, uint64_t time_ns) {
    if (!saw_switch_lines_) close_off_cpu(tid, time_ns, true);
  }
  void handle_switch_sample();

  FoldedProfile& out_;
  CollapseOptions opt_;
  std::string source_;
  CollapseStats stats_;
  uint64_t line_no_ = 0;

  // The sample being read (strings reused, so steady state does not allocate).
  bool in_sample_ = false;
  bool tentative_ = false;    // header without cpu/time/event: a callchain must follow
  uint64_t tentative_line_ = 0;
  bool wanted_ = false;       // fold this sample's frames
  bool broken_ = false;       // --lenient: a line of this sample was malformed
  bool has_frames_ = false;
  bool truncated_ = false;    // this sample hit kMaxStackDepth
  std::string comm_, pid_, tid_, event_, rest_;
  bool has_time_ = false, has_period_ = false;
  uint64_t time_ns_ = 0, period_ = 0;
  std::vector<FrameId> frames_;  // leaf first, as printed
  std::vector<FrameId> stack_;   // root first
  std::string name_;             // scratch for frame names
  // Callchain lines repeat: the same "sym+off (dso)" text (the line after
  // its address) always gives the same frame, so its tidied, interned name
  // is kept per text and the parse, tidy and intern of a repeat are skipped.
  // frame_texts_ only interns the texts (its tree stays empty).
  struct FrameText {
    FrameId frame;         // kNoFrame until first added
    bool inlined;          // perf's "(inlined)" marker
    bool name_truncated;   // the name was cut to kMaxFrameNameBytes
    bool by_address;       // the name depends on the address: never cached
  };
  FoldedProfile frame_texts_;
  std::vector<FrameText> frame_text_info_;
  bool saw_period_ = false;
  bool chose_event_ = false;
  uint64_t sched_switch_samples_ = 0;

  struct Pending {
    uint64_t time_ns;
    uint32_t state;
    std::vector<FrameId> stack;
  };
  std::unordered_map<int64_t, Pending> pending_;
  // Whether a PERF_RECORD_SWITCH(_CPU_WIDE) line was seen: then only those
  // and sched_switch's next_pid end blocks.
  bool saw_switch_lines_ = false;
  // Blocks ended by the task's next record while no switch line had been
  // seen: added at finish() unless one was seen later (a switch line
  // accompanies the first context switch, so that is not expected).
  std::map<std::vector<FrameId>, double> next_record_us_;
};

// Whether the start of a file looks like perf script text (a sample header
// with a time or event name), for choosing a loader by content.
bool looks_like_perf_script(std::string_view head);
// The "perf script text" loader for fg::register_profile_loader's list, so
// `fgtool svg perf.txt` and friends read perf script text too
// (apps/fgtool/input_formats.cpp orders the loaders).
void register_perf_script_loader();

// A copy with each stack's weight rounded to a whole number, stacks that
// round to 0 dropped (off-CPU microseconds are summed unrounded first).
FoldedProfile with_rounded_weights(const FoldedProfile& profile);

// Reads PATH ("-" = stdin; gzip recognised) and folds it.
FoldedProfile collapse_perf_script(const std::string& path, const CollapseOptions& options,
                                   CollapseStats* stats = nullptr);

}  // namespace fg
