// The record handler of a fold: wires the reader's records to the units
// that do the work (see docs/architecture.md for the threads):
//   EventSelection    which events are folded (event_selection.h)
//   ProcessTable      the processes' maps (lib/unwind)
//   SampleSelection   filters and root frames (sample_selection.h)
//   DwarfUnwindPool   DWARF unwinding, batched on several threads (dwarf_unwind_pool.h)
//   StackKeyBuilder   a sample's raw stack key (stack_key.h)
//   RawStackIndex     raw stack deduplication and weights (raw_stack_index.h)
//   StackSymboliser   names the frames of new raw stacks (stack_symboliser.h),
//                     on a SymbolisingThread (symbolising_thread.h) or inline
//   StackTreeBuilder  puts them into the profile tree (stack_tree_builder.h)
//   OffCpuTracker     sched_switch pairing (off_cpu_tracker.h)
// Long file: StackFolder is the one class that sees every record type,
// and most of it is that wiring, a few lines per hand-over, each beside the
// state it hands over; spread over files, a reader would follow a sample
// through several to see the order of the steps.
#include "fold/fold_perf_data.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <thread>
#include <unordered_map>

#include "diagnostics/input_error.h"
#include "fold/dwarf_unwind_pool.h"
#include "fold/event_selection.h"
#include "fold/raw_stack_index.h"
#include "fold/sample_selection.h"
#include "fold/stack_key.h"
#include "fold/stack_symboliser.h"
#include "fold/stack_tree_builder.h"
#include "fold/symbolising_thread.h"
#include "folded/profile_loader.h"
#include "perf/perf_data_reader.h"
#include "unwind/process_table.h"

namespace fg {

namespace {

SampleSelectionOptions selection_options(const FoldOptions& o) {
  SampleSelectionOptions s;
  s.root_with_pid = o.root_with_pid;
  s.root_with_tid = o.root_with_tid;
  // An observer gets raw stacks per thread: roots are kept apart by pid and
  // tid (the name, and so the folded output, stays the same).
  s.roots_per_thread = o.observer != nullptr;
  s.keep_root_comm = o.observer != nullptr;
  s.comms = o.comms;
  s.pids = o.pids;
  s.tids = o.tids;
  s.time_start = o.time_start;
  s.time_end = o.time_end;
  return s;
}

bool has_dwarf_samples(const PerfFileInfo& info) {
  for (const EventAttr& a : info.attrs)
    if (a.has(sample_bits::STACK_USER) && a.sample_regs_user) return true;
  return false;
}

class StackFolder final : public RecordHandler, private NewStackSink {
 public:
  StackFolder(const PerfDataReader& reader, const FoldOptions& options, FoldStats& stats)
      : reader_(reader), options_(options), stats_(stats), selection_(selection_options(options), table_),
        symboliser_(options, reader.info()), keys_(table_),
        raw_(*this, options.observer != nullptr, options.view == FoldView::on_cpu ? options.max_raw_stacks : 0),
        off_cpu_(OffCpuTracker::Options{}) {
    make_unwind_pool(1);
  }
  ~StackFolder() override {
    stop_symbolising_thread();
    // The maps (process table) are members: they go after this body.
    if (options_.observer && !observer_done_) options_.observer->on_fold_abandoned();
  }
  StackFolder(const StackFolder&) = delete;
  StackFolder& operator=(const StackFolder&) = delete;

  // Called once the attrs are known (file mode: at once; pipe mode: at the first sample).
  void prepare() {
    if (events_) return;
    events_.emplace(reader_.info(), reader_.path(), options_, stats_.warnings);
    if (options_.view != FoldView::on_cpu) {
      OffCpuTracker::Options o;
      o.fallback_to_next_record = !events_->has_switch_records();
      o.include_unfinished = options_.include_unfinished;
      o.min_block_ns = options_.min_block_us * 1000;
      o.states = options_.states;
      off_cpu_ = OffCpuTracker(o);
      stats_.off_cpu_fallback = !events_->has_switch_records();
    }
  }

  // DWARF files with two threads or more: samples are queued and unwound
  // in batches on two threads.
  void enable_parallel_unwinding(unsigned threads) {
    if (threads < 2 || !has_dwarf_samples(reader_.info())) return;
    queue_samples_ = true;
    make_unwind_pool(2);
  }

  // Symbolises new stacks on a second thread: for the on-CPU view of files
  // without DWARF samples (whose unwinders share the symbols).
  void enable_symbolising_thread(unsigned threads) {
    if (threads < 2 || options_.view != FoldView::on_cpu || queue_samples_ || symbolising_) return;
    if (has_dwarf_samples(reader_.info())) return;
    // Forgotten stacks seen again are looked up (KnownStacks) instead of
    // named again; with an observer only if it takes them (the pprof
    // export's, keyed by object offset: the earlier raw stack's locations).
    const bool observer_takes = !options_.observer || options_.observer->takes_known_stacks();
    const size_t known_slots = !observer_takes || !options_.max_raw_stacks ? 0 : kKnownStackSlots;
    symbolising_ = std::make_unique<SymbolisingThread>(symboliser_, tree_, options_.observer, known_slots);
    // A full raw-stack table is forgotten a table later, when its stacks are
    // named, instead of waiting for every queued stack (raw_stack_index.h).
    raw_.use_two_tables();
  }

  SymbolCache& symbols() { return symboliser_.symbols(); }
  bool has_symbolising_thread() const { return symbolising_ != nullptr; }

  void on_mmap(const MmapRecord& r) override {
    change_table(ProcessTable::is_kernel_mmap(r.pid, r.start) ? ProcessTable::kKernelPid : r.pid, r.tid,
                 r.file_offset, [&] { table_.apply(r); });
    note_time(r.time);
  }
  void on_comm(const CommRecord& r) override {
    change_table(r.pid, r.tid, r.file_offset, [&] { table_.apply(r); });
    note_time(r.time);
  }
  void on_fork(const TaskRecord& r) override {
    change_table(r.pid, r.tid, r.file_offset, [&] { table_.apply_fork(r); });
    note_time(r.time);
  }
  void on_exit(const TaskRecord& r) override {
    // An exit only marks the process exited (its maps stay for late
    // samples): nothing the symbolising thread reads changes.
    change_table(r.pid, r.tid, r.file_offset, [&] { table_.apply_exit(r); });
    // The process is gone: its Dwfl goes too (a late sample makes a new one).
    if (unwind_pool_ && r.pid == r.tid && r.pid > 0) unwind_pool_->forget_process(r.pid);
    note_time(r.time);
    if (options_.view != FoldView::on_cpu) off_cpu_.activity(r.tid, r.time, blocks_);
  }
  void on_switch(const SwitchRecord& r) override {
    flush_samples();
    note_time(r.time);
    if (options_.view == FoldView::on_cpu || r.out) return;
    off_cpu_.switch_in(r.tid, r.time, blocks_);
    drain_blocks();
  }
  void on_lost(const LostRecord& r) override {
    flush_samples();
    if (r.samples) stats_.lost_samples += r.lost;
    else stats_.lost_events += r.lost;
  }
  void on_ksymbol(const KsymbolRecord& r) override {
    flush_samples();
    drain_symbolising_thread();  // it reads the kernel symbols
    if (!(r.flags & 1)) symboliser_.symbols().add_kernel_symbol(r.addr, r.len, r.name);
  }
  void on_sample(const Sample& s) override {
    prepare();
    if (queue_samples_) {
      if (unwind_pool_->add(s, wants_unwinding(s))) flush_samples();
      return;
    }
    handle_sample(s, nullptr);
  }

  void finish(FoldedProfile& out) {
    prepare();
    flush_samples();
    drain_symbolising_thread();
    stop_symbolising_thread();  // idle after the drain; from here on one thread
    if (options_.view != FoldView::on_cpu) {
      off_cpu_.finish(last_time_, blocks_);
      drain_blocks();
      stats_.off_cpu = off_cpu_.stats();
    }
    const PerfFileInfo& info = reader_.info();
    const int fold_attr = events_->folded_attr();
    if (fold_attr >= 0 && size_t(fold_attr) < info.attrs.size()) stats_.event = info.attrs[fold_attr].name;
    const bool micro = options_.view != FoldView::on_cpu;
    FoldedProfile& profile = tree_.profile();
    profile.take_names(symboliser_.names());  // no stack is named after this
    if (options_.observer) report_weights(micro);
    add_weights(micro);
    if (options_.count) profile.units = "samples";
    else if (micro) profile.units = "us";
    else if (fold_attr >= 0 && is_clock_event(info.attrs[fold_attr])) profile.units = "ns";
    else profile.units = "events";
    collect_stats();
    out = std::move(profile);
  }

 private:
  void make_unwind_pool(unsigned unwinders) {
    unwind_pool_ = std::make_unique<DwarfUnwindPool>(
        table_, options_.unwind, [this](const MapEntry& m) { return symboliser_.elf_path_for(m); }, unwinders);
  }

  // A change of the process table within the memory budget (the maps that
  // forked processes copy when they change theirs). Past it: an error at the
  // record, or with --partial a warning and the change left out.
  template <typename Change>
  void change_table(int32_t pid, int32_t tid, uint64_t file_offset, Change&& change) {
    before_table_change(pid);
    selection_.table_changed(pid, tid);
    const PerfFileInfo& info = reader_.info();
    // A pipe's budget grows with the bytes read (reader stats are ours: pipes
    // are read on this thread); a file's is fixed by its size.
    table_.set_map_list_budget(
        ReadBudget::memory_limit(options_.max_memory, info.pipe_mode && info.file_size == 0 ? reader_.stats().bytes
                                                                                            : info.file_size));
    try {
      change();
    } catch (const std::length_error& e) {
      if (!options_.partial) throw InputError::at_offset(reader_.path(), file_offset, e.what());
      if (!map_budget_warned_)
        stats_.warnings.push_back("byte " + std::to_string(file_offset) + ": " + e.what() +
                                  "; this and later such map changes left out (--partial)");
      map_budget_warned_ = true;
    }
  }

  // Before the process table changes pid's process (kKernelPid: the
  // kernel's maps): the samples of that process waiting in the prefetch
  // ring must see the table as it was; the others' keys and maps do not
  // change. Samples queued for DWARF unwinding (any process) are all
  // unwound first. The symbolising thread need not finish: each queued
  // stack holds a snapshot of its process's map list (draining at every
  // mmap, comm, fork and exit of a process with queued stacks cost
  // busy.data 31 k waits and made the thread not pay).
  void before_table_change(int32_t pid) {
    if (!unwind_pool_->empty() || pid <= 0) return flush_samples();
    raw_.flush_process(pid);
  }

  // Unwind only what this view folds: switch samples for off-CPU, the others for on-CPU.
  bool wants_unwinding(const Sample& s) const {
    const bool is_switch = events_->is_switch(s.attr_index);
    return options_.view == FoldView::wall || (options_.view == FoldView::off_cpu) == is_switch;
  }

  // Folds every sample queued for parallel unwinding (in order), then
  // resolves the raw stacks waiting in the prefetch ring.
  void flush_samples() {
    if (!unwind_pool_->empty()) {
      unwind_pool_->unwind_batch();
      for (size_t i = 0; i < unwind_pool_->size(); ++i) {
        UnwoundUserStack unwound{unwind_pool_->frames(i), unwind_pool_->outcome(i)};
        handle_sample(unwind_pool_->sample(i), unwound.frames ? &unwound : nullptr);
      }
      unwind_pool_->clear();
    }
    raw_.flush();
  }

  // One sample, in order. `unwound`: its user stack when the pool unwound it.
  void handle_sample(const Sample& s, const UnwoundUserStack* unwound) {
    ++stats_.samples;
    note_time(s.time);
    if (s.attr == nullptr) return;
    const bool is_switch = events_->is_switch(s.attr_index);
    if (options_.view != FoldView::on_cpu) {
      if (is_switch) {
        fold_switch_sample(s, unwound);
        return;
      }
      // Any other record of a blocked thread ends its block in fallback mode.
      off_cpu_.activity(s.tid, s.time, blocks_);
      drain_blocks();
      if (options_.view == FoldView::off_cpu) return;
    }
    if (is_switch) return;  // on-CPU and wall views fold the sampling event only
    if (!events_->is_folded(s.attr_index)) {
      ++stats_.other_event_samples;
      return;
    }
    SampleSelection::CachedThread& thread = selection_.thread(s.pid, s.tid);
    if (!selection_.selected(s.pid, s.tid, s.time, thread.comm)) {
      ++stats_.filtered_samples;
      return;
    }
    if (!wall_event_checked_) {
      // Wall clock converts periods to microseconds, which only clock events have.
      wall_event_checked_ = true;
      if (options_.view == FoldView::wall && !options_.count && !is_clock_event(*s.attr))
        throw UsageError("--wall needs a cpu-clock or task-clock sampling event (found " + s.attr->name + ")");
    }
    ThreadRoot* root = selection_.root_of(thread);
    const UnwoundUserStack user = user_stack(s, unwound);
    keys_.append_key(s, root, thread.proc, user, raw_.next_key());
    raw_.commit(options_.count ? 1.0 : double(s.period), thread.pid, thread.proc);
    ++stats_.folded_samples;
  }

  // A DWARF sample's user frames: as the pool unwound them, else now.
  UnwoundUserStack user_stack(const Sample& s, const UnwoundUserStack* unwound) {
    if (!StackKeyBuilder::is_dwarf(s)) return UnwoundUserStack{};
    if (unwound) return *unwound;
    UnwindOutcome outcome = unwind_pool_->unwind_now(s, unwound_);
    return UnwoundUserStack{&unwound_, outcome};
  }

  void fold_switch_sample(const Sample& s, const UnwoundUserStack* unwound) {
    SchedSwitch sw;
    if (!events_->read_switch(s, &sw)) {
      stats_.warnings.push_back("sched_switch sample at byte " + std::to_string(s.file_offset) +
                                " has a RAW payload too short for its format; skipped");
      return;
    }
    // The switched-in task's block ends here (system-wide recordings).
    off_cpu_.switch_in(int32_t(sw.next_pid), s.time, blocks_);
    if (sw.prev_pid <= 0) {
      drain_blocks();
      return;
    }
    int32_t tid = int32_t(sw.prev_pid);
    // The sample's pid/tid can be -1 for a dying task: the RAW fields are the truth.
    int32_t pid = s.pid > 0 ? s.pid : table_.pid_of(tid);
    // The off-CPU view names the task as the tracepoint does (prev_comm), as
    // perf script's sched_switch line and `fgtool collapse --off-cpu` do. The
    // process table can differ: a kworker's COMM record, made from /proc at
    // record start, carries its workqueue ("kworker/0:1H-kb"), its task comm
    // does not. The wall view keeps the table's name, which its on-CPU
    // samples of the same thread have.
    std::string_view comm = sw.prev_comm;
    if (comm.empty() || (options_.view == FoldView::wall && !table_.comm_of(pid, tid).empty()))
      comm = selection_.comm_of(pid, tid);
    if (!selection_.selected(pid, tid, s.time, comm)) {
      ++stats_.filtered_samples;
      drain_blocks();
      return;
    }
    // The raw stack now: the off-CPU tracker needs its index at once.
    const int32_t sample_pid = s.pid > 0 ? s.pid : table_.pid_of(s.tid);
    key_.clear();
    const ProcessMaps* sample_proc = table_.process(sample_pid);
    keys_.append_key(s, selection_.root(comm, pid, tid), sample_proc, user_stack(s, unwound), key_);
    uint32_t stack = raw_.index_now(key_.data(), uint32_t(key_.size()), sample_pid, sample_proc);
    off_cpu_.switch_out(tid, s.time, stack, sw.prev_state, blocks_);
    ++stats_.folded_samples;
    drain_blocks();
  }

  void drain_blocks() {
    for (const OffCpuBlock& b : blocks_) off_weights_[(uint64_t(b.stack) << 16) | (b.prev_state & 0xffff)] += b.nanoseconds;
    blocks_.clear();
  }

  void note_time(uint64_t t) {
    if (t > last_time_) last_time_ = t;
  }

  // NewStackSink: a raw stack seen for the first time is symbolised with the
  // process table as it is now (callers flush before the table changes), at
  // once or by the symbolising thread before its next drain.
  void on_new_stack(uint32_t idx, const uint64_t* key, int32_t pid, const ProcessMaps* key_proc,
                    const StackFingerprint& fp) override {
    const ProcessMaps* proc = StackKeyView(key).has_user_frames() ? key_proc : nullptr;
    if (symbolising_ && ++window_stacks_ >= options_.symbolising_window) keep_symbolising_thread_or_not();
    if (!symbolising_) {
      symboliser_.symbolise(idx, key, pid, proc, named_);
      tree_.place(named_, options_.observer);
      named_.clear();
      return;
    }
    symbolising_->add(idx, key, pid, proc, fp);
  }

  // The symbolising thread pays only while the folding thread seldom waits
  // for it. It waited before every table change of a process with queued
  // stacks until stacks carried map snapshots (busy.data, bench/README.md:
  // 31 k waits, slower than one thread); now it waits only at KSYMBOL
  // records and when the raw-stack table forgets its keys. A new stack costs
  // well under a microsecond to symbolise once its frames are cached, a
  // wait two context switches, so after a window of new stacks
  // (FoldOptions::symbolising_window, 64 K) with more than one wait per
  // kMinStacksPerDrain the rest of the fold symbolises inline (same order,
  // same output): a guard against recordings full of KSYMBOL records.
  static constexpr uint64_t kMinStacksPerDrain = 128;
  // KnownStacks' bound: 2^19 slots of 20 bytes (10 MB), 262 K stacks.
  // busyp2.data: 507 K new stacks known (of 1.51 M); twice the slots took
  // 597 K, 10 MB more and no faster.
  static constexpr size_t kKnownStackSlots = size_t(1) << 19;
  void keep_symbolising_thread_or_not() {
    if (window_drains_ * kMinStacksPerDrain > window_stacks_) {
      drain_symbolising_thread();
      stop_symbolising_thread();
      stats_.symbolising_thread_stopped = true;
    }
    window_stacks_ = window_drains_ = 0;
  }

  // NewStackSink: the raw-stack table is full (FoldOptions::max_raw_stacks).
  // Each stack's weight goes to its node now, as add_weights() does at the
  // end: on-CPU weights are whole periods or counts, so summing them in
  // another order or in parts gives the same doubles.
  // An observer is told each stack's weights now (its indices go on from
  // the forgotten stacks' count; the symbolising thread is drained, so
  // observer calls still come one at a time).
  // With two tables (no observer), only the stacks added before this table
  // was retired must be in the tree: those of the other table may still be
  // queued, and their keys are in the other table.
  void forget_stacks(const RawStackTable& table, uint32_t first) override {
    auto add_weights = [&] {
      FoldedProfile& out = tree_.profile();
      for (uint32_t i = 0; i < table.size(); ++i)
        if (double w = table.weight(i); w != 0) out.add_self(tree_.node_of(first + i), w);
    };
    if (symbolising_ && retired_at_) {
      // They read keys in the table; the tree is the symbolising thread's
      // too meanwhile, so the weights go in under its placing lock.
      symbolising_->wait_for(*retired_at_, add_weights);
      ++window_drains_;  // a hand-over the thread is judged by, as a drain
      return;
    }
    drain_symbolising_thread();  // it still reads keys in the table; the drain places its last stacks
    if (options_.observer) report_samples(raw_.forgotten());
    add_weights();
    symboliser_.set_observer_base(raw_.forgotten() + table.size());
  }
  // NewStackSink, two tables: every stack added so far is the retired table's
  // or an older one's; forget_stacks waits for those only.
  void table_retired() override {
    retired_at_.reset();
    if (symbolising_) retired_at_ = symbolising_->stacks_added();
  }

  // Waits until every new stack so far is symbolised and in the tree.
  void drain_symbolising_thread() {
    if (!symbolising_) return;
    symbolising_->drain();
    ++window_drains_;
  }
  void stop_symbolising_thread() {
    if (!symbolising_) return;
    symbolising_->stop();
    stats_.placed_stacks += symbolising_->stacks_placed();
    stats_.placed_by_symbolising_thread += symbolising_->stacks_placed_by_symbolising_thread();
    stats_.known_stacks += symbolising_->known_stacks();
    symbolising_.reset();
  }

  // Adds each raw stack's weight (and off-CPU time) to the node it folded to.
  void add_weights(bool micro) {
    FoldedProfile& out = tree_.profile();
    if (!micro) {
      // Whole periods or counts: summing in the profile is exact (integers
      // in doubles).
      raw_.for_each_weight([&](uint32_t i, double w) {
        if (w != 0) out.add_self(tree_.node_of(i), w);
      });
      return;
    }
    // Sum per folded stack (raw stacks that fold alike share a node) in
    // ns, then convert: rounding after summing keeps microseconds exact.
    std::unordered_map<NodeId, double> grouped;
    raw_.for_each_weight([&](uint32_t i, double w) {
      if (w != 0) grouped[tree_.node_of(i)] += w;
    });
    // In a fixed order, so that the tree is built the same way every run.
    for (const auto& kv : sorted_off_weights()) {
      NodeId node = tree_.node_of(uint32_t(kv.first >> 16));
      uint64_t state = kv.first & 0xffff;
      if (options_.view == FoldView::wall) node = out.child(node, out.intern("[off-cpu: " + task_state_name(state) + "]"));
      grouped[node] += double(kv.second);
    }
    std::vector<std::pair<NodeId, double>> sums(grouped.begin(), grouped.end());
    std::sort(sums.begin(), sums.end());
    for (const auto& kv : sums) {
      // On-CPU periods of clock events and off-CPU blocks are both in ns.
      double w = options_.count ? kv.second : std::round(kv.second / 1000.0);
      if (w > 0) out.add_self(kv.first, w);
    }
  }

  std::vector<std::pair<uint64_t, uint64_t>> sorted_off_weights() const {
    std::vector<std::pair<uint64_t, uint64_t>> off(off_weights_.begin(), off_weights_.end());
    std::sort(off.begin(), off.end());
    return off;
  }

  // Hands the observer every raw stack's weights (finish(), before the
  // profile moves out; nodes stay valid after the move).
  // The observer's on_samples for every stack in the raw-stack table, whose
  // index 0 is the observer's `base`.
  void report_samples(uint64_t base) {
    for (uint32_t i = 0; i < raw_.size(); ++i) {
      uint64_t samples = raw_.sample_count(i);
      double w = raw_.weight(i);
      if (samples || w != 0) options_.observer->on_samples(uint32_t(base + i), samples, w, tree_.node_of(i));
    }
  }

  void report_weights(bool micro) {
    FoldObserver& o = *options_.observer;
    FoldedProfile& out = tree_.profile();
    observer_done_ = true;
    o.on_raw_stacks_done();
    report_samples(raw_.forgotten());
    if (!micro) return;
    for (const auto& kv : sorted_off_weights()) {
      uint32_t idx = uint32_t(kv.first >> 16);
      uint64_t state = kv.first & 0xffff;
      NodeId node = tree_.node_of(idx);
      FrameId extra = FoldedProfile::kNoFrame;
      if (options_.view == FoldView::wall) {
        extra = out.intern("[off-cpu: " + task_state_name(state) + "]");
        node = out.child(node, extra);
      }
      o.on_off_cpu(idx, state, kv.second, extra, node);
    }
  }

  void collect_stats() {
    const StackKeyStats& ks = keys_.stats();
    stats_.dwarf = ks.dwarf;
    stats_.cut_short_samples = ks.cut_short_samples;
    stats_.truncated_stacks = ks.truncated_stacks;
    const SymboliserStats& ss = symboliser_.stats();
    stats_.frames = ss.frames;
    stats_.kernel_frames = ss.kernel_frames;
    stats_.unknown_frames = ss.unknown_frames;
    stats_.truncated_names = ss.truncated_names;
    stats_.memo_frames = ss.memo_frames;
    stats_.named_addresses = ss.named_addresses;
    stats_.alike_frames = ss.alike_frames;
    stats_.preloaded_objects = symboliser_.symbols().preloaded_objects();
    stats_.unique_raw_stacks = raw_.stacks_added();
    stats_.unique_frames = tree_.profile().frame_count();
    stats_.unwind = unwind_pool_->stats();
    stats_.unwind_error = unwind_pool_->last_error();
    if (options_.object_statuses) stats_.objects = symboliser_.symbols().object_statuses();
    stats_.kernel = symboliser_.symbols().kernel_status();
    stats_.processes = table_.process_count();
    if (uint64_t dropped = table_.stats().dropped_maps)
      stats_.warnings.push_back(std::to_string(dropped) + " mappings ignored: they would have given a process more than " +
                                std::to_string(ProcessTable::kMaxMapsPerProcess) +
                                " maps (hostile input? samples in them stay unresolved)");
  }

  const PerfDataReader& reader_;
  const FoldOptions& options_;
  FoldStats& stats_;
  std::optional<EventSelection> events_;  // from prepare()
  ProcessTable table_;
  SampleSelection selection_;
  StackSymboliser symboliser_;  // owned by the symbolising thread while it runs
  StackTreeBuilder tree_;
  std::unique_ptr<DwarfUnwindPool> unwind_pool_;
  bool queue_samples_ = false;  // samples go through unwind_pool_'s queue
  StackKeyBuilder keys_;
  RawStackIndex raw_;
  OffCpuTracker off_cpu_;
  std::vector<OffCpuBlock> blocks_;
  std::unordered_map<uint64_t, uint64_t> off_weights_;  // (raw stack << 16 | state) -> ns
  uint64_t last_time_ = 0;
  bool map_budget_warned_ = false;
  bool wall_event_checked_ = false;
  bool observer_done_ = false;  // told on_raw_stacks_done (else, at the end, on_fold_abandoned)
  std::unique_ptr<SymbolisingThread> symbolising_;  // enable_symbolising_thread
  uint64_t window_stacks_ = 0, window_drains_ = 0;  // keep_symbolising_thread_or_not
  // Two raw-stack tables: the symbolising thread's stack count when the
  // table to be forgotten next was retired.
  std::optional<uint64_t> retired_at_;
  // Scratch reused across samples (no allocation on the hot path).
  std::vector<UnwindFrame> unwound_;
  KeyWords key_;
  NamedStacks named_;  // a stack symbolised inline, for tree_
};

}  // namespace

bool looks_like_perf_data(std::string_view head) { return head.size() >= 8 && head.substr(0, 8) == "PERFILE2"; }

namespace {

// Where the fold's kernel symbols come from, unless the options name a
// kallsyms file: /proc/kallsyms describes this machine's kernel, so it is
// used only for a recording made on this machine's running kernel; and the
// recording's kernel build-id.
void choose_kernel_symbols(const PerfFileInfo& info, SymbolOptions& symbols) {
  if (symbols.kallsyms_path.empty()) {
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    std::string release;
    if (FILE* f = std::fopen("/proc/sys/kernel/osrelease", "r")) {
      char buf[256] = {};
      if (std::fgets(buf, sizeof buf, f)) release = buf;
      std::fclose(f);
      while (!release.empty() && (release.back() == '\n' || release.back() == ' ')) release.pop_back();
    }
    // Pipe mode learns the host only while reading; trust it when unknown.
    bool unknown = info.hostname.empty() && info.os_release.empty();
    symbols.use_proc_kallsyms = unknown || (info.hostname == host && info.os_release == release);
  }
  for (const auto& e : info.build_ids)
    if (e.filename == "[kernel.kallsyms]" && symbols.kernel_build_id.empty()) symbols.kernel_build_id = e.build_id;
}

}  // namespace

FoldedProfile fold_perf_data(const std::string& path, const FoldOptions& options, FoldStats* stats_out,
                             FoldTeardown* teardown) {
  FoldStats local;
  FoldStats& stats = stats_out ? *stats_out : local;
  ReadOptions ro;
  ro.partial = options.partial;
  ro.progress = options.progress;
  ro.max_memory = options.max_memory;
  // On the heap, to be taken down by `teardown` after the return: the
  // folder refers to the reader and the options.
  struct State {
    State(const std::string& path, const ReadOptions& ro, const FoldOptions& options)
        : reader(path, ro), effective(options) {}
    PerfDataReader reader;
    FoldOptions effective;
    std::unique_ptr<StackFolder> folder;  // first to go
  };
  auto state = std::make_unique<State>(path, ro, options);
  PerfDataReader& reader = state->reader;
  FoldOptions& effective = state->effective;
  choose_kernel_symbols(reader.info(), effective.symbols);
  state->folder = std::make_unique<StackFolder>(reader, effective, stats);
  StackFolder& folder = *state->folder;
  const unsigned threads =
      options.threads ? options.threads : std::min(2u, std::max(1u, std::thread::hardware_concurrency()));
  if (!reader.info().pipe_mode) {
    folder.prepare();
    folder.enable_parallel_unwinding(threads);
    folder.enable_symbolising_thread(threads);
  }
  // Reading overlaps folding on a second core (output identical either way),
  // unless the second core symbolises: that thread is the slower one on
  // busy recordings, the reading and folding threads together need less than
  // it, and a reading thread's queued rounds cost memory (busy.data: 15 MB
  // of a 160 MB peak, no time). Loading the kernel's symbols overlaps too,
  // unless no event sees the kernel (exclude_kernel is bit 5 of the attr flags).
  ro.reading_thread = threads >= 2 && !folder.has_symbolising_thread();
  bool kernel_events = reader.info().pipe_mode;
  for (const EventAttr& a : reader.info().attrs) kernel_events |= !a.flag(5);
  if (threads >= 2 && kernel_events) folder.symbols().start_loading_kernel_symbols();
  // On a cold page cache, the symbol tables of the binaries the recording
  // names are read ahead meanwhile (busy2.data: cold 1.70x -> 1.33x warm, bench/README.md).
  // And, when every sample is folded, those binaries are opened ahead on a
  // third thread: opening them is most of the symbolising thread's work in a
  // fold's first fifth, while the folding thread waits for it.
  if (threads >= 2) {
    std::vector<ObjectKey> objects;
    for (const auto& e : reader.info().build_ids) objects.push_back(ObjectKey{e.filename, e.build_id});
    folder.symbols().start_reading_ahead(objects);
    if (selection_options(options).selects_every_sample()) folder.symbols().start_preloading(objects);
  }
  reader.read(folder, ro);
  const ReadStats& rs = reader.stats();
  for (const auto& w : rs.warnings) stats.warnings.push_back(w);
  FoldedProfile profile;
  folder.finish(profile);
  if (stats.truncated_stacks)
    stats.warnings.push_back(std::to_string(stats.truncated_stacks) + " stacks deeper than " +
                             std::to_string(kMaxStackDepth) + " frames cut to their leaf-most " +
                             std::to_string(kMaxStackDepth));
  if (stats.truncated_names)
    stats.warnings.push_back(std::to_string(stats.truncated_names) + " symbol names longer than " +
                             std::to_string(kMaxFrameNameBytes) + " bytes truncated");
  stats.file = reader.info();
  stats.read = rs;
  if (stats.lost_events == 0) stats.lost_events = rs.lost_events;
  if (stats.lost_samples == 0) stats.lost_samples = rs.lost_samples;
  if (teardown) teardown->take(std::move(state));
  return profile;
}

void register_perf_data_loader() {
  static bool done = false;
  if (done) return;
  done = true;
  register_profile_loader(ProfileLoader{
      "perf.data", [](std::string_view head) { return looks_like_perf_data(head); },
      [](const std::string& path, FoldedProfile& into, const ProfileLoadOptions& lo) {
        FoldOptions fo;
        fo.partial = lo.lenient;
        FoldStats st;
        FoldedProfile p = fold_perf_data(path, fo, &st);
        for (const auto& w : st.warnings) {
          if (lo.warn) lo.warn(w);
          else std::fprintf(stderr, "fgtool: %s: %s\n", path.c_str(), w.c_str());
        }
        into.units = p.units;
        into.merge(p);
      }});
}

}  // namespace fg
