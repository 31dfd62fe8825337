#include "fold/fold_perf_data.h"

#include <unistd.h>

#include <algorithm>
#include <stdexcept>
#include <array>
#include <cmath>
#include <cstring>
#include <exception>
#include <deque>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "diagnostics/input_error.h"
#include "fold/raw_stack_table.h"
#include "folded/profile_loader.h"
#include "perf/perf_data_reader.h"
#include "perf/tracing_data.h"
#include "unwind/process_table.h"

namespace fg {

namespace {

using namespace callchain_context;

constexpr uint64_t kKernelHalf = 0xffff800000000000ull;

// Tags in the high bits of a frame-cache key's first word.
enum class FrameKind : uint64_t { user = 1, kernel = 2, jit = 3, unknown = 4 };
// The address a DWARF stack cut short gets as its root-side frame: what perf
// prints there (a return address read as 0, minus 1). It lies in no mapping.
constexpr uint64_t kCutShortMarker = ~uint64_t(0);

struct FrameKey {
  uint64_t a, b;
  bool operator==(const FrameKey& o) const { return a == o.a && b == o.b; }
};

// Frame-cache value: a run of FrameIds in the frame arena.
struct FrameSpan {
  uint32_t start, count;
};

// Open-addressing (linear probing) map from FrameKey to FrameSpan. The frame
// cache is looked up for every frame of every new raw stack, so it must not
// chase a pointer per lookup as std::unordered_map does.
class FrameCache {
 public:
  // The cached span, or nullptr.
  const FrameSpan* find(const FrameKey& k) const {
    if (slots_.empty()) return nullptr;
    size_t mask = slots_.size() - 1;
    for (size_t i = hash(k) & mask;; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (!s.used) return nullptr;
      if (s.key == k) return &s.value;
    }
  }
  void prefetch(const FrameKey& k) const {
    if (!slots_.empty()) __builtin_prefetch(&slots_[hash(k) & (slots_.size() - 1)]);
  }
  const FrameSpan& insert(const FrameKey& k, FrameSpan v) {
    if ((size_ + 1) * 4 >= slots_.size() * 3) grow();
    ++size_;
    return place(k, v);
  }

 private:
  struct Slot {
    FrameKey key{0, 0};
    FrameSpan value{0, 0};
    bool used = false;
  };
  static size_t hash(const FrameKey& k) {
    uint64_t h = k.a * 0x9e3779b97f4a7c15ull ^ (k.b + 0x632be59bd9b4e019ull + (k.a << 6));
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    return size_t(h ^ (h >> 32));
  }
  const FrameSpan& place(const FrameKey& k, FrameSpan v) {
    size_t mask = slots_.size() - 1;
    size_t i = hash(k) & mask;
    while (slots_[i].used) i = (i + 1) & mask;
    slots_[i] = Slot{k, v, true};
    return slots_[i].value;
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 4096 : old.size() * 2, Slot{});
    for (const Slot& s : old)
      if (s.used) place(s.key, s.value);
  }
  std::vector<Slot> slots_;
  size_t size_ = 0;
};

// One address of a sample's stack, leaf first.
struct StackAddress {
  uint64_t address;
  bool kernel;
  bool return_address;
};

std::string basename_of(std::string_view path) {
  size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

// perf's is_anon_memory (tools/perf/util/map.c): mappings perf names by the
// process's perf-PID.map.
bool is_perf_anon_path(std::string_view path) {
  return path == "//anon" || path.rfind("/dev/zero", 0) == 0 || path.rfind("/anon_hugepage", 0) == 0;
}

bool is_clock_event(const EventAttr& a) { return a.type == 1 && (a.config == 0 || a.config == 1); }

// "cpu-clock:u" names the same event as "cpu-clock".
bool event_name_matches(const std::string& attr_name, const std::string& wanted) {
  if (attr_name == wanted) return true;
  auto strip = [](const std::string& n) {
    size_t colon = n.rfind(':');
    if (colon == std::string::npos) return n;
    std::string mods = n.substr(colon + 1);
    bool all_mods = !mods.empty() && mods.find_first_not_of("ukhpPGHSD") == std::string::npos;
    return all_mods ? n.substr(0, colon) : n;
  };
  return strip(attr_name) == strip(wanted);
}

class StackFolder final : public RecordHandler {
 public:
  StackFolder(const PerfDataReader& reader, const FoldOptions& options, FoldStats& stats)
      : reader_(reader), options_(options), stats_(stats), symbols_(options.symbols),
        unwinder_(table_, options.unwind, [this](const MapEntry& m) { return elf_path_for(m); }),
        off_cpu_(OffCpuTracker::Options{}) {}
  ~StackFolder() override { stop_symbolizer(); }
  StackFolder(const StackFolder&) = delete;
  StackFolder& operator=(const StackFolder&) = delete;

  // Called once the attrs are known (file mode: at once; pipe mode: at the first sample).
  void prepare() {
    if (prepared_) return;
    prepared_ = true;
    const PerfFileInfo& info = reader_.info();
    if (!info.tracing_data.empty()) {
      try {
        tracing_ = TracingData::parse(info.tracing_data, reader_.path(), info.tracing_data_offset);
      } catch (const InputError& e) {
        if (options_.view != FoldView::on_cpu) throw;
        stats_.warnings.push_back(std::string("tracing data ignored: ") + e.what());
      }
    }
    bool switch_events = false;
    for (size_t i = 0; i < info.attrs.size(); ++i) {
      const EventAttr& a = info.attrs[i];
      if (a.context_switch()) switch_events = true;
      if (is_sched_switch(a)) sched_switch_attrs_.push_back(i);
    }
    if (!options_.event.empty()) {
      for (size_t i = 0; i < info.attrs.size(); ++i)
        if (event_name_matches(info.attrs[i].name, options_.event)) {
          fold_attr_ = int(i);
          break;
        }
      if (fold_attr_ < 0) {
        std::string names;
        for (const auto& a : info.attrs) names += (names.empty() ? "" : ", ") + a.name;
        throw UsageError("--event " + options_.event + ": no such event in " + reader_.path() + " (it has: " + names + ")");
      }
    }
    if (options_.view != FoldView::on_cpu) {
      if (sched_switch_attrs_.empty())
        throw UsageError(reader_.path() + ": no sched:sched_switch events; record with "
                         "'fgtool record --off-cpu' (perf record -e sched:sched_switch --switch-events -g)");
      const TracepointFormat* fmt = tracing_.find(info.attrs[sched_switch_attrs_[0]].config);
      if (!fmt) fmt = tracing_.find("sched", "sched_switch");
      if (!fmt) throw InputError(reader_.path() + ": sched_switch events but no usable tracing data (format of sched_switch missing)");
      prev_pid_ = fmt->field("prev_pid");
      prev_state_ = fmt->field("prev_state");
      prev_comm_ = fmt->field("prev_comm");
      next_pid_ = fmt->field("next_pid");
      if (!prev_pid_ || !prev_state_ || !next_pid_)
        throw InputError(reader_.path() + ": the sched_switch format lacks prev_pid/prev_state/next_pid");
      OffCpuTracker::Options o;
      o.fallback_to_next_record = !switch_events;
      o.include_unfinished = options_.include_unfinished;
      o.min_block_ns = options_.min_block_us * 1000;
      o.states = options_.states;
      off_cpu_ = OffCpuTracker(o);
      stats_.off_cpu_fallback = !switch_events;
    }
  }

  void on_mmap(const MmapRecord& r) override {
    before_table_change(r.pid);
    ++thread_epoch_;
    change_table(r.file_offset, [&] { table_.apply(r); });
    note_time(r.time);
  }
  void on_comm(const CommRecord& r) override {
    before_table_change(r.pid);
    ++thread_epoch_;
    change_table(r.file_offset, [&] { table_.apply(r); });
    note_time(r.time);
  }
  void on_fork(const TaskRecord& r) override {
    before_table_change(r.pid);
    ++thread_epoch_;
    change_table(r.file_offset, [&] { table_.apply_fork(r); });
    note_time(r.time);
  }
  // A change of the process table within the memory budget (the maps that
  // forked processes copy when they change theirs). Past it: an error at the
  // record, or with --partial a warning and the change left out.
  template <typename Change>
  void change_table(uint64_t file_offset, Change&& change) {
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
  void on_exit(const TaskRecord& r) override {
    // An exit only marks the process exited (its maps stay for late
    // samples): nothing the symbolising thread reads changes.
    flush_queue();
    ++thread_epoch_;
    table_.apply_exit(r);
    note_time(r.time);
    if (options_.view != FoldView::on_cpu) off_cpu_.activity(r.tid, r.time, blocks_);
  }
  void on_switch(const SwitchRecord& r) override {
    flush_queue();
    note_time(r.time);
    if (options_.view == FoldView::on_cpu || r.out) return;
    off_cpu_.switch_in(r.tid, r.time, blocks_);
    drain_blocks();
  }
  void on_lost(const LostRecord& r) override {
    flush_queue();
    if (r.samples) stats_.lost_samples += r.lost;
    else stats_.lost_events += r.lost;
  }
  void on_ksymbol(const KsymbolRecord& r) override {
    flush_queue();
    drain_jobs();  // the symbolising thread reads the kernel symbols
    if (!(r.flags & 1)) symbols_.add_kernel_symbol(r.addr, r.len, r.name);
  }

  void on_sample(const Sample& s) override {
    prepare();
    if (parallel_) {
      enqueue(s);
      return;
    }
    handle_sample(s);
  }

  void handle_sample(const Sample& s) {
    ++stats_.samples;
    note_time(s.time);
    if (s.attr == nullptr) return;
    const bool is_switch = is_switch_attr(s.attr_index);
    if (options_.view != FoldView::on_cpu) {
      if (is_switch) {
        on_switch_sample(s);
        return;
      }
      // Any other record of a blocked thread ends its block in fallback mode.
      off_cpu_.activity(s.tid, s.time, blocks_);
      drain_blocks();
      if (options_.view == FoldView::off_cpu) return;
    }
    if (is_switch) return;  // on-CPU and wall views fold the sampling event only
    if (fold_attr_ < 0) fold_attr_ = int(s.attr_index);
    if (s.attr_index != size_t(fold_attr_)) {
      ++stats_.other_event_samples;
      return;
    }
    ThreadSlot& thread = thread_slot(s.pid, s.tid);
    if (!selected(s.pid, s.tid, s.time, thread.comm)) {
      ++stats_.filtered_samples;
      return;
    }
    if (!wall_event_checked_) {
      // Wall clock converts periods to microseconds, which only clock events have.
      wall_event_checked_ = true;
      if (options_.view == FoldView::wall && !options_.count && !is_clock_event(*s.attr))
        throw UsageError("--wall needs a cpu-clock or task-clock sampling event (found " + s.attr->name + ")");
    }
    if (!thread.has_root) {
      thread.root = root_frame(thread.comm, s.pid, s.tid);
      thread.has_root = true;
    }
    queue_stack(s, thread.root, thread.pid, thread.proc, options_.count ? 1.0 : double(s.period));
    ++stats_.folded_samples;
  }

  void finish(FoldedProfile& out) {
    prepare();
    flush_queue();
    drain_jobs();
    stop_symbolizer();  // idle after the flush; from here on one thread
    if (options_.view != FoldView::on_cpu) {
      off_cpu_.finish(last_time_, blocks_);
      drain_blocks();
      stats_.off_cpu = off_cpu_.stats();
    }
    const PerfFileInfo& info = reader_.info();
    if (fold_attr_ >= 0 && size_t(fold_attr_) < info.attrs.size()) stats_.event = info.attrs[fold_attr_].name;
    const bool micro = options_.view != FoldView::on_cpu;
    if (options_.observer) report_weights(micro);
    if (!micro) {
      // Whole periods or counts: summing in the profile is exact (integers
      // in doubles).
      for (uint32_t i = 0; i < raw_.size(); ++i)
        if (double w = raw_.weight(i); w != 0) out_.add_self(stack_nodes_[i], w);
    } else {
      // Sum per folded stack (raw stacks that fold alike share a node) in
      // ns, then convert: rounding after summing keeps microseconds exact.
      std::unordered_map<NodeId, double> grouped;
      for (uint32_t i = 0; i < raw_.size(); ++i)
        if (double w = raw_.weight(i); w != 0) grouped[stack_nodes_[i]] += w;
      // In a fixed order, so that the tree is built the same way every run.
      std::vector<std::pair<uint64_t, uint64_t>> off(off_weights_.begin(), off_weights_.end());
      std::sort(off.begin(), off.end());
      for (const auto& kv : off) {
        NodeId node = stack_nodes_[uint32_t(kv.first >> 16)];
        uint64_t state = kv.first & 0xffff;
        if (options_.view == FoldView::wall) node = out_.child(node, out_.intern("[off-cpu: " + task_state_name(state) + "]"));
        grouped[node] += double(kv.second);
      }
      std::vector<std::pair<NodeId, double>> sums(grouped.begin(), grouped.end());
      std::sort(sums.begin(), sums.end());
      for (const auto& kv : sums) {
        // On-CPU periods of clock events and off-CPU blocks are both in ns.
        double w = options_.count ? kv.second : std::round(kv.second / 1000.0);
        if (w > 0) out_.add_self(kv.first, w);
      }
    }
    if (options_.count) out_.units = "samples";
    else if (micro) out_.units = "us";
    else if (fold_attr_ >= 0 && is_clock_event(info.attrs[fold_attr_])) out_.units = "ns";
    else out_.units = "events";
    stats_.unique_raw_stacks = raw_.size();
    stats_.unique_frames = out_.frame_count();
    stats_.unwind = unwinder_.stats();
    if (second_unwinder_) add_unwind_stats(stats_.unwind, second_unwinder_->stats());
    stats_.unwind_error = unwinder_.last_error();
    if (options_.object_statuses) stats_.objects = symbols_.object_statuses();
    stats_.kernel = symbols_.kernel_status();
    stats_.processes = table_.process_count();
    if (uint64_t dropped = table_.stats().dropped_maps)
      stats_.warnings.push_back(std::to_string(dropped) + " mappings ignored: they would have given a process more than " +
                                std::to_string(ProcessTable::kMaxMapsPerProcess) +
                                " maps (hostile input? samples in them stay unresolved)");
    out = std::move(out_);
  }

  SymbolCache& symbols() { return symbols_; }

  // Hands the observer every raw stack's weights (finish(), before the
  // profile moves out; nodes stay valid after the move).
  void report_weights(bool micro) {
    FoldObserver& o = *options_.observer;
    for (uint32_t i = 0; i < raw_.size(); ++i) {
      uint64_t samples = i < sample_counts_.size() ? sample_counts_[i] : 0;
      double w = raw_.weight(i);
      if (samples || w != 0) o.on_samples(i, samples, w, stack_nodes_[i]);
    }
    if (!micro) return;
    std::vector<std::pair<uint64_t, uint64_t>> off(off_weights_.begin(), off_weights_.end());
    std::sort(off.begin(), off.end());
    for (const auto& kv : off) {
      uint32_t idx = uint32_t(kv.first >> 16);
      uint64_t state = kv.first & 0xffff;
      NodeId node = stack_nodes_[idx];
      FrameId extra = FoldedProfile::kNoFrame;
      if (options_.view == FoldView::wall) {
        extra = out_.intern("[off-cpu: " + task_state_name(state) + "]");
        node = out_.child(node, extra);
      }
      o.on_off_cpu(idx, state, kv.second, extra, node);
    }
  }

  // Symbolises new stacks on a second thread: for the on-CPU view of files
  // without DWARF samples (whose unwinders share the symbols).
  void enable_symbolizer(unsigned threads) {
    if (threads < 2 || options_.view != FoldView::on_cpu || parallel_) return;
    for (const EventAttr& a : reader_.info().attrs)
      if (a.has(sample_bits::STACK_USER) && a.sample_regs_user) return;
    start_symbolizer();
  }

  // Turns on parallel unwinding when the file has DWARF samples.
  void enable_parallel(unsigned threads) {
    if (threads < 2) return;
    bool dwarf = false;
    for (const EventAttr& a : reader_.info().attrs)
      if (a.has(sample_bits::STACK_USER) && a.sample_regs_user) dwarf = true;
    if (!dwarf) return;
    parallel_ = true;
    second_unwinder_ = std::make_unique<DwarfUnwinder>(table_, options_.unwind,
                                                       [this](const MapEntry& m) { return elf_path_for(m); });
  }

 private:
  static constexpr size_t kQueueSamples = 512;
  static constexpr size_t kQueueBytes = 16u << 20;

  size_t copy_bytes(const void* data, size_t size) {
    size_t offset = queue_bytes_.size() * 8;
    if (size) {
      queue_bytes_.resize(queue_bytes_.size() + (size + 7) / 8);
      std::memcpy(reinterpret_cast<uint8_t*>(queue_bytes_.data()) + offset, data, size);
    }
    return offset;
  }

  void enqueue(const Sample& s) {
    // Unwind only what this view folds: switch samples for off-CPU, the others for on-CPU.
    const bool is_switch = is_switch_attr(s.attr_index);
    const bool wanted = options_.view == FoldView::wall || (options_.view == FoldView::off_cpu) == is_switch;
    QueuedSample q{s, 0, 0, 0, 0, wanted && s.regs_user_mask != 0 && s.stack_user != nullptr};
    q.callchain = copy_bytes(s.callchain, s.callchain_nr * 8);
    q.raw = copy_bytes(s.raw, s.raw_size);
    q.regs = copy_bytes(s.regs_user, size_t(__builtin_popcountll(s.regs_user_mask)) * (s.regs_user ? 8 : 0));
    uint64_t valid = std::min(s.stack_user_dyn_size, s.stack_user_size);
    q.stack = copy_bytes(s.stack_user, s.stack_user ? valid : 0);
    q.sample.stack_user_size = s.stack_user ? valid : 0;
    q.sample.stack_user_dyn_size = q.sample.stack_user_size;
    // Pointers of the copy are set at flush time (the byte buffer may move).
    q.sample.read_values = nullptr;
    q.sample.branch_entries = nullptr;
    q.sample.branch_counters = nullptr;
    q.sample.regs_intr = nullptr;
    q.sample.aux = nullptr;
    queue_.push_back(q);
    if (queue_.size() >= kQueueSamples || queue_bytes_.size() * 8 >= kQueueBytes) flush_queue();
  }

  void flush_queue() {
    if (queue_.empty()) {
      flush_pending();
      return;
    }
    const uint8_t* base = reinterpret_cast<const uint8_t*>(queue_bytes_.data());
    for (QueuedSample& q : queue_) {
      Sample& s = q.sample;
      s.callchain = s.callchain_nr ? reinterpret_cast<const uint64_t*>(base + q.callchain) : nullptr;
      s.raw = s.raw_size ? base + q.raw : nullptr;
      if (s.regs_user) s.regs_user = reinterpret_cast<const uint64_t*>(base + q.regs);
      if (s.stack_user) s.stack_user = base + q.stack;
    }
    if (queue_frames_.size() < queue_.size()) queue_frames_.resize(queue_.size());
    // Chunks of 16 samples alternate between the two unwinders.
    auto work = [this](DwarfUnwinder& u, size_t parity) {
      for (size_t i = 0; i < queue_.size(); ++i)
        if ((i / 16) % 2 == parity && queue_[i].dwarf) queue_[i].outcome = u.unwind(queue_[i].sample, queue_frames_[i]);
    };
    // An exception (std::bad_alloc) on either side must not end in
    // std::terminate: the helper's is carried over, and the helper is
    // joined before the calling thread's own propagates.
    std::exception_ptr helper_error;
    std::thread helper([&] {
      try {
        work(*second_unwinder_, 1);
      } catch (...) {
        helper_error = std::current_exception();
      }
    });
    try {
      work(unwinder_, 0);
    } catch (...) {
      helper.join();
      throw;
    }
    helper.join();
    if (helper_error) std::rethrow_exception(helper_error);
    for (size_t i = 0; i < queue_.size(); ++i) {
      precomputed_ = queue_[i].dwarf ? &queue_frames_[i] : nullptr;
      precomputed_outcome_ = queue_[i].outcome;
      handle_sample(queue_[i].sample);
    }
    precomputed_ = nullptr;
    queue_.clear();
    queue_bytes_.clear();
    flush_pending();
  }

  // Before the process table changes pid's process. The symbolising thread
  // reads no part of the table but the maps of the processes its stacks come
  // from (ProcessMaps and MapEntry objects, which stay where they are), so it
  // has to finish only when this process has stacks waiting: draining at
  // every mmap, comm, fork and exit cost a fifth of the fold's time.
  void before_table_change(int32_t pid) {
    flush_queue();
    if (!symbolizer_) return;
    const ProcessMaps* target = table_.process(pid);
    if (target && jobs_procs_.count(target)) drain_jobs();
  }

  static void add_unwind_stats(UnwindStats& into, const UnwindStats& s) {
    into.samples += s.samples;
    for (size_t i = 0; i < kUnwindOutcomeCount; ++i) into.by_outcome[i] += s.by_outcome[i];
    into.frames += s.frames;
    into.dwfl_created += s.dwfl_created;
    into.dwfl_invalidated += s.dwfl_invalidated;
    into.dwfl_evicted += s.dwfl_evicted;
    into.modules_reported += s.modules_reported;
    into.module_report_failures += s.module_report_failures;
    into.stack_reads += s.stack_reads;
    into.file_reads += s.file_reads;
    into.refused_reads += s.refused_reads;
  }

 public:

 private:
  bool is_switch_attr(size_t attr_index) const {
    return std::find(sched_switch_attrs_.begin(), sched_switch_attrs_.end(), attr_index) != sched_switch_attrs_.end();
  }

  bool is_sched_switch(const EventAttr& a) const {
    if (a.name == "sched:sched_switch") return true;
    if (a.type != 2) return false;
    const TracepointFormat* f = tracing_.find(a.config);
    return f && f->name == "sched_switch";
  }

  void note_time(uint64_t t) {
    if (t > last_time_) last_time_ = t;
  }

  // A root frame's name, and its id once interned (see root_frame).
  struct RootInfo {
    std::string name;
    FrameId frame = FoldedProfile::kNoFrame;
    std::string comm;  // as recorded (a copy: an off-CPU comm may point into a sample)
    int32_t pid = 0, tid = 0;
  };

  // What a sample needs of its thread, cached: consecutive samples mostly
  // come from a few threads, and three hash lookups per sample (comm, pid,
  // process) showed in profiles. Valid until the process table changes.
  struct ThreadSlot {
    int32_t sample_pid = 0, tid = 0;
    uint32_t epoch = 0;
    std::string_view comm;
    int32_t pid = -1;                    // sample_pid, or looked up by tid
    const ProcessMaps* proc = nullptr;
    RootInfo* root = nullptr;
    bool has_root = false;
  };
  ThreadSlot& thread_slot(int32_t pid, int32_t tid) {
    ThreadSlot& t = threads_[uint32_t(tid) % threads_.size()];
    if (t.epoch == thread_epoch_ && t.sample_pid == pid && t.tid == tid) return t;
    t = ThreadSlot{};
    t.sample_pid = pid;
    t.tid = tid;
    t.epoch = thread_epoch_;
    t.comm = comm_of(pid, tid);
    t.pid = pid > 0 ? pid : table_.pid_of(tid);
    t.proc = table_.process(t.pid);
    return t;
  }

  // perf names a thread it never saw a COMM for ":TID".
  std::string_view comm_of(int32_t pid, int32_t tid) {
    std::string_view c = table_.comm_of(pid, tid);
    if (!c.empty()) return c;
    auto it = unnamed_.find(tid);
    if (it == unnamed_.end()) it = unnamed_.emplace(tid, ":" + std::to_string(tid)).first;
    return it->second;
  }

  bool selected(int32_t pid, int32_t tid, uint64_t time, std::string_view comm) const {
    if (!options_.pids.empty() && std::find(options_.pids.begin(), options_.pids.end(), pid) == options_.pids.end()) return false;
    if (!options_.tids.empty() && std::find(options_.tids.begin(), options_.tids.end(), tid) == options_.tids.end()) return false;
    if (!options_.comms.empty() && std::find(options_.comms.begin(), options_.comms.end(), comm) == options_.comms.end()) return false;
    double secs = double(time) / 1e9;
    if (options_.time_start >= 0 && secs < options_.time_start) return false;
    if (options_.time_end >= 0 && secs > options_.time_end) return false;
    return true;
  }

  // The root frame: "comm", "comm-PID" or "comm-PID/TID", spaces as '_'.
  // Named here, interned into the profile by whoever symbolises the first
  // stack under it (the symbolising thread owns the profile).
  RootInfo* root_frame(std::string_view comm, int32_t pid, int32_t tid) {
    // An observer gets raw stacks per thread: key roots by pid and tid (the
    // name, and so the folded output, stays the same).
    const bool per_thread = options_.observer != nullptr;
    RootKey key{comm.data(), comm.size(), options_.pid || options_.tid || per_thread ? pid : 0,
                options_.tid || per_thread ? tid : 0};
    auto it = roots_.find(key);
    if (it != roots_.end()) return it->second;
    std::string name(comm);
    std::replace(name.begin(), name.end(), ' ', '_');
    std::replace(name.begin(), name.end(), ';', ':');
    if (options_.tid) name += "-" + std::to_string(pid) + "/" + std::to_string(tid);
    else if (options_.pid) name += "-" + std::to_string(pid);
    RootInfo* root = &root_store_.emplace_back();  // a deque: the address stays valid
    root->name = std::move(name);
    if (options_.observer) root->comm = std::string(comm);
    root->pid = pid;
    root->tid = tid;
    roots_.emplace(key, root);
    return root;
  }

  void on_switch_sample(const Sample& s) {
    int64_t prev_pid = -1, next_pid = -1;
    uint64_t prev_state = 0;
    if (!read_tracepoint_int(*prev_pid_, s.raw, s.raw_size, &prev_pid) ||
        !read_tracepoint_int(*next_pid_, s.raw, s.raw_size, &next_pid) ||
        !read_tracepoint_uint(*prev_state_, s.raw, s.raw_size, &prev_state)) {
      stats_.warnings.push_back("sched_switch sample at byte " + std::to_string(s.file_offset) +
                                " has a RAW payload too short for its format; skipped");
      return;
    }
    // The switched-in task's block ends here (system-wide recordings).
    off_cpu_.switch_in(int32_t(next_pid), s.time, blocks_);
    if (prev_pid <= 0) {
      drain_blocks();
      return;
    }
    int32_t tid = int32_t(prev_pid);
    // The sample's pid/tid can be -1 for a dying task: the RAW fields are the truth.
    int32_t pid = s.pid > 0 ? s.pid : table_.pid_of(tid);
    std::string_view comm;
    if (prev_comm_) comm = read_tracepoint_string(*prev_comm_, s.raw, s.raw_size);
    std::string_view known = table_.comm_of(pid, tid);
    if (!known.empty() || comm.empty()) comm = comm_of(pid, tid);
    if (!selected(pid, tid, s.time, comm)) {
      ++stats_.filtered_samples;
      drain_blocks();
      return;
    }
    uint32_t stack = stack_of(s, root_frame(comm, pid, tid));
    off_cpu_.switch_out(tid, s.time, stack, prev_state, blocks_);
    ++stats_.folded_samples;
    drain_blocks();
  }

  void drain_blocks() {
    for (const OffCpuBlock& b : blocks_) off_weights_[(uint64_t(b.stack) << 16) | (b.prev_state & 0xffff)] += b.nanoseconds;
    blocks_.clear();
  }


  // ---- building a sample's stack ----

  // A sample's addresses, leaf first, in a buffer of kMaxStackDepth sized
  // once: pushing is a store and a compare (a std::vector's push_back was not
  // inlined and showed in profiles). Addresses beyond the limit are dropped,
  // which keeps the leaf-most kMaxStackDepth.
  class AddressList {
   public:
    AddressList() : buf_(new StackAddress[kMaxStackDepth]) {}
    void clear() {
      n_ = 0;
      truncated_ = false;
    }
    void push(uint64_t address, bool kernel, bool return_address) {
      if (n_ < kMaxStackDepth) buf_[n_++] = StackAddress{address, kernel, return_address};
      else truncated_ = true;
    }
    size_t size() const { return n_; }
    bool empty() const { return n_ == 0; }
    bool truncated() const { return truncated_; }
    const StackAddress& operator[](size_t i) const { return buf_[i]; }
    const StackAddress* begin() const { return buf_.get(); }
    const StackAddress* end() const { return buf_.get() + n_; }

   private:
    std::unique_ptr<StackAddress[]> buf_;
    size_t n_ = 0;
    bool truncated_ = false;
  };

  // Collects the sample's addresses, leaf first: the kernel callchain, then
  // the user part from the callchain (frame pointers) or from DWARF unwinding.
  void collect_addresses(const Sample& s) {
    addresses_.clear();
    const bool dwarf = s.regs_user_mask != 0 && s.attr && s.attr->has(sample_bits::STACK_USER);
    if (s.callchain_nr > 0) {
      int context = s.cpumode() == 1 ? 1 : 2;  // 1 kernel, 2 user, 0 other (guest/hv)
      bool first = true;
      for (uint64_t i = 0; i < s.callchain_nr; ++i) {
        uint64_t v = s.callchain[i];
        if (v >= MAX) {
          if (v == KERNEL) context = 1;
          else if (v == USER) context = 2;
          else if (v == USER_DEFERRED) {
            context = 2;
            ++i;  // a cookie word, not an address
          } else context = 0;
          first = true;
          continue;
        }
        if (context == 0) continue;
        if (context == 2 && dwarf) continue;  // the unwinder provides the user part
        addresses_.push(v, context == 1, !first);
        first = false;
      }
    } else if (!dwarf) {
      bool kernel = s.cpumode() == 1 || s.ip >= kKernelHalf;
      addresses_.push(s.ip, kernel, false);
    }
    if (dwarf) {
      stats_.dwarf = true;
      const std::vector<UnwindFrame>* frames = precomputed_;
      UnwindOutcome outcome = precomputed_outcome_;
      if (!frames) {
        outcome = unwinder_.unwind(s, unwound_);
        frames = &unwound_;
      }
      for (const UnwindFrame& f : *frames) addresses_.push(f.pc, false, f.is_return_address);
      // A stack cut short because the copy of the user stack was too small
      // keeps a root-side marker, as perf script shows it: perf's unwinder
      // reads the missing return address as 0 and prints pc - 1
      // (ffffffffffffffff), which lies in no mapping and so folds to
      // "[unknown]". Without it the cut stack would pose as a whole one.
      if (outcome == UnwindOutcome::memory_outside_copy && !frames->empty()) {
        addresses_.push(kCutShortMarker, false, false);
        ++stats_.cut_short_samples;
      }
      if (frames->empty() && addresses_.empty()) {
        bool kernel = s.cpumode() == 1 || s.ip >= kKernelHalf;
        addresses_.push(s.ip, kernel, false);
      }
    }
    // A callchain can claim up to ~8190 entries in a 64 KiB record.
    if (addresses_.truncated()) ++stats_.truncated_stacks;
  }

  struct PendingStack {
    std::vector<uint64_t> words;  // the key (keeps its capacity across samples)
    uint64_t hash = 0;
    double weight = 0;
    int32_t pid = 0;
  };

  // A raw stack's key: [address count, the root (a RootInfo*), the process's
  // map generation (0 without user frames: kernel-only stacks do not depend
  // on the process), the kernel's, the addresses leaf first, then 2 flag bits
  // per address (return address, kernel), 32 to a word]. The key holds
  // everything needed to symbolise the stack later, so folding can be
  // batched (see queue_stack).
  void build_key(const Sample& s, RootInfo* root, const ProcessMaps* proc, std::vector<uint64_t>& key) {
    collect_addresses(s);
    bool user = false;
    for (const StackAddress& a : addresses_) user |= !a.kernel;
    if (!user) proc = nullptr;
    const size_t n = addresses_.size();
    const size_t at = key.size();
    key.resize(at + kKeyHeader + n + (n + 31) / 32);
    uint64_t* k = key.data() + at;
    k[0] = n;
    k[1] = reinterpret_cast<uintptr_t>(root);
    k[2] = proc ? proc->generation : 0;
    k[3] = table_.kernel().generation;
    uint64_t* flags = k + kKeyHeader + n;
    for (size_t i = 0; i < n; ++i) {
      const StackAddress& a = addresses_[i];
      k[kKeyHeader + i] = a.address;
      flags[i / 32] |= uint64_t(a_flag(a)) << (2 * (i % 32));
    }
  }
  static uint64_t a_flag(const StackAddress& a) { return (a.return_address ? 1u : 0u) | (a.kernel ? 2u : 0u); }

  int32_t pid_for(const Sample& s) const { return s.pid > 0 ? s.pid : table_.pid_of(s.tid); }

  // The raw stack of a sample, now (the off-CPU paths need the index at once).
  uint32_t stack_of(const Sample& s, RootInfo* root) {
    const int32_t pid = pid_for(s);
    key_.clear();
    build_key(s, root, table_.process(pid), key_);
    uint32_t n = uint32_t(key_.size());
    return resolve_stack(key_.data(), n, RawStackTable::hash_words(key_.data(), n), pid);
  }

  // On-CPU samples: the key is built now and its weight added a little later,
  // so that the table's cache misses of many samples overlap: the slot is
  // prefetched at once, the key kPrefetchKeyAfter samples later, and the
  // lookup happens when the sample leaves the kPendingStacks-long ring.
  // flush_pending() empties the ring before anything changes the process table.
  void queue_stack(const Sample& s, RootInfo* root, int32_t pid, const ProcessMaps* proc, double weight) {
    if (pending_count_ == kPendingStacks) resolve_oldest_pending();
    PendingStack& p = pending_[(pending_head_ + pending_count_) % kPendingStacks];
    p.words.clear();
    build_key(s, root, proc, p.words);
    p.hash = RawStackTable::hash_words(p.words.data(), uint32_t(p.words.size()));
    p.weight = weight;
    p.pid = pid;
    raw_.prefetch_slot(p.hash);
    ++pending_count_;
    if (pending_count_ > kPrefetchKeyAfter)
      prefetch_pending(pending_[(pending_head_ + pending_count_ - 1 - kPrefetchKeyAfter) % kPendingStacks]);
  }

  void prefetch_pending(const PendingStack& p) const { raw_.prefetch_key(p.hash); }

  void resolve_oldest_pending() {
    const PendingStack& p = pending_[pending_head_];
    uint64_t* entry = nullptr;
    uint32_t idx = resolve_stack(p.words.data(), uint32_t(p.words.size()), p.hash, p.pid, &entry);
    RawStackTable::add_weight(entry, p.weight);
    if (options_.observer) {
      if (sample_counts_.size() <= idx) sample_counts_.resize(size_t(idx) + 1 + sample_counts_.size() / 2);
      ++sample_counts_[idx];
    }
    pending_head_ = (pending_head_ + 1) % kPendingStacks;
    --pending_count_;
  }

  void flush_pending() {
    for (size_t i = pending_count_ > kPrefetchKeyAfter ? pending_count_ - kPrefetchKeyAfter : 0; i < pending_count_; ++i)
      prefetch_pending(pending_[(pending_head_ + i) % kPendingStacks]);
    while (pending_count_) resolve_oldest_pending();
  }

  // The index of a raw stack; a new one is symbolised (with the process
  // table as it is now: callers flush before the table changes), at once or,
  // with the symbolising thread, by it before the next flush.
  // *entry (if given) gets the table's entry, for RawStackTable::add_weight.
  uint32_t resolve_stack(const uint64_t* key, uint32_t count, uint64_t hash, int32_t pid, uint64_t** entry = nullptr) {
    uint32_t idx = raw_.find(key, count, hash, entry);
    if (idx != RawStackTable::kMissing) return idx;
    idx = raw_.insert(key, count, hash, entry);
    if (symbolizer_) {
      // The table's copy of the key never moves: the other thread reads it.
      uint32_t stored_count = 0;
      const ProcessMaps* proc = key[2] ? table_.process(pid) : nullptr;
      jobs_filling_.push_back(StackJob{idx, raw_.key(idx, &stored_count), pid, proc});
      if (proc && proc != last_job_proc_) {
        jobs_procs_.insert(proc);
        last_job_proc_ = proc;
      }
      if (jobs_filling_.size() >= kJobBatch) submit_jobs();
    } else {
      symbolise_stack(idx, key, pid, key[2] ? table_.process(pid) : nullptr);
    }
    return idx;
  }

  // Symbolises raw stack idx into the profile's tree: a raw stack is then
  // just the node its path ends at.
  void symbolise_stack(uint32_t idx, const uint64_t* key, int32_t pid, const ProcessMaps* proc) {
    const size_t n = size_t(key[0]);
    RootInfo* root = reinterpret_cast<RootInfo*>(uintptr_t(key[1]));
    const uint64_t* addr = key + kKeyHeader;
    const uint64_t* flags = key + kKeyHeader + n;
    if (root->frame == FoldedProfile::kNoFrame) root->frame = out_.intern(root->name);
    size_t used = n;
    bool user_seen = false;
    // First every frame's cache key, prefetching its slot, then the lookups:
    // the frame cache is too big for the CPU caches, and this way the misses
    // of one stack's frames overlap.
    if (frames_.size() < n) frames_.resize(n);
    for (size_t i = 0; i < n; ++i) {
      uint64_t f = flags[i / 32] >> (2 * (i % 32));
      StackFrame& fr = frames_[i];
      fr.address = StackAddress{addr[i], (f & 2) != 0, (f & 1) != 0};
      fr.key = frame_key(fr.address, pid, proc, &fr.map);
      frame_cache_.prefetch(fr.key);
      // A caller address in no executable mapping ends the walk: past it a
      // frame-pointer chain (through code built without frame pointers)
      // yields garbage, perf script prints each as "[unknown]", and a stack
      // of dozens of them hides the real ones. One "[unknown]" marks the cut
      // (also where DWARF unwinding was cut short, see kCutShortMarker).
      // The leaf-most user address may be unmapped JIT code: its callers count.
      if (!fr.address.kernel) {
        if (!fr.map && user_seen) {
          used = i + 1;
          break;
        }
        user_seen = true;
      }
    }
    // Root first: the addresses are leaf first.
    NodeId node = out_.child(0, root->frame);
    if (options_.observer) {
      node = observe_stack(idx, *root, used, pid, node);
    } else {
      for (size_t i = used; i-- > 0;) node = append_frames(frames_[i].key, frames_[i].address, frames_[i].map, pid, node);
    }
    if (stack_nodes_.size() <= idx) stack_nodes_.resize(idx + 1);
    stack_nodes_[idx] = node;
  }

  // symbolise_stack's loop when an observer watches: the same frames, and
  // what each address became handed to the observer.
  NodeId observe_stack(uint32_t idx, const RootInfo& root, size_t n, int32_t pid, NodeId node) {
    observed_.resize(n);
    for (size_t i = n; i-- > 0;) {
      const StackFrame& f = frames_[i];
      FrameSpan sp{0, 0};
      node = append_frames(f.key, f.address, f.map, pid, node, &sp);
      RawStackFrame& o = observed_[i];
      o.address = f.address.address;
      o.kernel = f.address.kernel;
      o.return_address = f.address.return_address;
      o.map = f.address.kernel ? nullptr : f.map;
      o.names_start = sp.start;
      o.name_count = sp.count;
    }
    RawStackRoot r;
    r.comm = root.comm;
    r.pid = root.pid;
    r.tid = root.tid;
    r.frame = root.frame;
    options_.observer->on_raw_stack(idx, r, observed_.data(), n, frame_arena_.data());
    return node;
  }

  // ---- the symbolising thread ----
  // With frame-pointer stacks the folding thread is the bottleneck and most
  // of its time goes to new raw stacks (one in six samples on a busy system).
  // For the on-CPU view they are handed, in batches, to a second thread that
  // owns the symbols, the frame cache and the profile; the folding thread
  // keeps the raw-stack table, the weights and the process table, and waits
  // for the symbolising thread (drain_jobs) before it changes the process
  // table or reads results, so both always see the same process state.
  struct StackJob {
    uint32_t idx;
    const uint64_t* key;
    int32_t pid;
    const ProcessMaps* proc;  // looked up by the folding thread
  };
  static constexpr size_t kJobBatch = 128, kMaxBacklog = 64 * 1024;

  void start_symbolizer() {
    symbolizer_ = std::make_unique<std::thread>([this] { symbolizer_loop(); });
  }

  void symbolizer_loop() {
    std::vector<StackJob> work;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(job_mutex_);
        job_cv_.wait(lock, [&] { return !jobs_ready_.empty() || stop_jobs_; });
        if (jobs_ready_.empty()) return;  // stop_jobs_
        work.swap(jobs_ready_);
      }
      if (!job_error_) {
        try {
          for (const StackJob& j : work) symbolise_stack(j.idx, j.key, j.pid, j.proc);
        } catch (...) {
          job_error_ = std::current_exception();  // rethrown by drain_jobs
        }
      }
      {
        std::lock_guard<std::mutex> lock(job_mutex_);
        jobs_done_ += work.size();
        job_cv_.notify_all();
      }
      work.clear();
    }
  }

  void submit_jobs() {
    if (jobs_filling_.empty()) return;
    std::unique_lock<std::mutex> lock(job_mutex_);
    // Bounded backlog: the folding thread waits rather than queue without end.
    job_cv_.wait(lock, [&] { return jobs_submitted_ - jobs_done_ < kMaxBacklog; });
    jobs_submitted_ += jobs_filling_.size();
    if (jobs_ready_.empty()) jobs_ready_.swap(jobs_filling_);
    else jobs_ready_.insert(jobs_ready_.end(), jobs_filling_.begin(), jobs_filling_.end());
    jobs_filling_.clear();
    job_cv_.notify_all();
  }

  // Waits until every new stack so far is symbolised.
  void drain_jobs() {
    if (!symbolizer_) return;
    submit_jobs();
    std::unique_lock<std::mutex> lock(job_mutex_);
    job_cv_.wait(lock, [&] { return jobs_done_ == jobs_submitted_; });
    jobs_procs_.clear();
    last_job_proc_ = nullptr;
    if (job_error_) std::rethrow_exception(job_error_);
  }

  void stop_symbolizer() {
    if (!symbolizer_) return;
    {
      std::lock_guard<std::mutex> lock(job_mutex_);
      stop_jobs_ = true;
      job_cv_.notify_all();
    }
    symbolizer_->join();
    symbolizer_.reset();
  }

  // Extends the path at node by the frames (outermost first, inlines
  // included) of one address; returns where it ends.
  NodeId append_frames(const FrameKey& key, const StackAddress& a, const MapEntry* map, int32_t pid, NodeId node,
                       FrameSpan* span_out = nullptr) {
    ++stats_.frames;
    if (a.kernel) ++stats_.kernel_frames;
    const FrameSpan* cached = frame_cache_.find(key);
    const FrameSpan& sp = cached ? *cached : frame_cache_.insert(key, symbolise(a, map, pid));
    for (uint32_t i = 0; i < sp.count; ++i) node = out_.child(node, frame_arena_[sp.start + i]);
    if (span_out) *span_out = sp;
    return node;
  }

  // The frame cache's key for an address: the kernel address, the object
  // and file offset, or the JIT process and address. *map_out gets the map.
  FrameKey frame_key(const StackAddress& a, int32_t pid, const ProcessMaps* proc, const MapEntry** map_out) {
    FrameKey key;
    const MapEntry* map = nullptr;
    if (a.kernel) {
      key = FrameKey{(uint64_t(FrameKind::kernel) << 60) | (a.return_address ? 1 : 0), a.address};
    } else {
      map = proc ? proc->find(a.address) : nullptr;
      if (!map) {
        key = FrameKey{uint64_t(FrameKind::unknown) << 60, 0};
      } else if (map->is_file_backed() || map->path == "[vdso]") {
        uint64_t handle = object_of(*map);
        key = FrameKey{(uint64_t(FrameKind::user) << 60) | (handle << 1) | (a.return_address ? 1 : 0),
                       map->file_offset(a.address)};
      } else {
        // Anonymous executable memory: JIT code, named per process by perf-PID.map.
        key = FrameKey{(uint64_t(FrameKind::jit) << 60) | (uint64_t(uint32_t(pid)) << 1), a.address};
      }
    }
    *map_out = map;
    return key;
  }

  uint64_t object_of(const MapEntry& m) {
    if (m.object_slot == MapEntry::kNoObject) {
      std::string_view bid(reinterpret_cast<const char*>(m.build_id.data()), m.build_id_size);
      if (bid.empty()) bid = build_id_from_feature(m.path);
      m.object_slot = symbols_.object(ObjectKey{m.path, bid});
    }
    return m.object_slot;
  }

  // The BUILD_ID feature's id for a path (the feature lists only some DSOs).
  std::string_view build_id_from_feature(std::string_view path) {
    if (!feature_ids_built_) {
      feature_ids_built_ = true;
      for (const auto& e : reader_.info().build_ids) feature_ids_.emplace(e.filename, e.build_id);
    }
    auto it = feature_ids_.find(std::string(path));
    return it == feature_ids_.end() ? std::string_view() : std::string_view(it->second);
  }

  // The unwinder needs the vdso image too (perf saves it in its build-id
  // cache); without it a sample whose leaf is in the vdso stops at one frame.
  std::string elf_path_for(const MapEntry& m) {
    if (!m.is_file_backed() && m.path != "[vdso]") return std::string();
    std::lock_guard<std::mutex> lock(resolve_mutex_);  // two unwinding threads share the SymbolCache
    return symbols_.resolved_elf_path(ObjectHandle(object_of(m)));
  }


  FrameSpan symbolise(const StackAddress& a, const MapEntry* map, int32_t pid) {
    resolved_.clear();
    std::string fallback;
    bool jit = false;
    if (a.kernel) {
      symbols_.symbolize_kernel(a.address, a.return_address, resolved_);
      fallback = "[kernel.kallsyms]";
    } else if (!map) {
      fallback = "[unknown]";
    } else if (map->is_file_backed() || map->path == "[vdso]") {
      uint64_t handle = object_of(*map);
      symbols_.symbolize(ObjectHandle(handle), map->file_offset(a.address), a.return_address, resolved_);
      // A "return address" whose pc-1 lies in no symbol is not a real one (a
      // frame-pointer walk through code built without them): name it by pc,
      // as perf does, rather than by nothing.
      if (a.return_address && !any_resolved()) {
        resolved_.clear();
        symbols_.symbolize(ObjectHandle(handle), map->file_offset(a.address), false, resolved_);
      }
      fallback = "[" + basename_of(map->path) + "]";
      if (options_.addrs) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "+0x%llx", (unsigned long long)map->file_offset(a.address));
        fallback.insert(fallback.size() - 1, buf);
      }
    } else {
      symbols_.symbolize_jit(pid, a.address, a.return_address, resolved_);
      jit = true;
      // perf's map__new gives anonymous memory ("//anon", /dev/zero,
      // /anon_hugepage) the dso /tmp/perf-PID.map, and perf script names an
      // unresolved frame there by it: keep that spelling (drop-in folds).
      if (!is_perf_anon_path(map->path))
        fallback = "[" + basename_of(map->path) + "]";
      else if (options_.merge_jit)
        fallback = "[JIT]";
      else
        fallback = "[perf-" + std::to_string(pid) + ".map]";
    }
    FrameSpan sp{uint32_t(frame_arena_.size()), 0};
    bool any = false;
    for (const SymbolizedFrame& f : resolved_) {
      if (!f.resolved) continue;
      any = true;
      push_frame(f.name, a.kernel, jit, map);
    }
    if (!any) {
      ++stats_.unknown_frames;
      if (options_.addrs && (a.kernel || !map)) {
        char buf[40];
        std::snprintf(buf, sizeof buf, "[unknown <%llx>]", (unsigned long long)a.address);
        fallback = buf;
      }
      push_frame(fallback, a.kernel, jit, map);
    }
    sp.count = uint32_t(frame_arena_.size()) - sp.start;
    return sp;
  }

  bool any_resolved() const {
    for (const SymbolizedFrame& f : resolved_)
      if (f.resolved) return true;
    return false;
  }

  void push_frame(std::string_view name, bool kernel, bool jit, const MapEntry* map) {
    if (name.size() > kMaxFrameNameBytes) {
      name = clamp_frame_name(name);
      ++stats_.truncated_names;
    }
    FrameId id;
    if ((kernel && options_.annotate_kernel) || (jit && options_.annotate_jit)) {
      id = out_.intern(std::string(name) + (kernel ? "_[k]" : "_[j]"));
    } else {
      id = out_.intern(name);
    }
    if (out_.frame_object(id).empty()) {
      if (kernel) out_.set_frame_object(id, "[kernel.kallsyms]");
      else if (map) out_.set_frame_object(id, map->path);
    }
    frame_arena_.push_back(id);
  }

  struct RootKey {
    const char* comm;
    size_t len;
    int32_t pid, tid;
    bool operator==(const RootKey& o) const { return comm == o.comm && len == o.len && pid == o.pid && tid == o.tid; }
  };
  struct RootKeyHash {
    size_t operator()(const RootKey& k) const {
      return std::hash<const void*>()(k.comm) ^ (size_t(k.len) << 1) ^ (size_t(uint32_t(k.pid)) << 20) ^ size_t(uint32_t(k.tid));
    }
  };

  const PerfDataReader& reader_;
  const FoldOptions& options_;
  FoldStats& stats_;
  ProcessTable table_;
  SymbolCache symbols_;
  DwarfUnwinder unwinder_;
  std::mutex resolve_mutex_;
  // Parallel DWARF unwinding: samples are queued (deep copies) between records
  // that change the process table, unwound on two threads while the table is
  // frozen, then folded in order, so the output does not depend on threads.
  bool parallel_ = false;
  std::unique_ptr<DwarfUnwinder> second_unwinder_;
  struct QueuedSample {
    Sample sample;
    size_t callchain, raw, regs, stack;  // byte offsets into queue_bytes_
    bool dwarf;
    UnwindOutcome outcome = UnwindOutcome::complete;
  };
  std::vector<QueuedSample> queue_;
  std::vector<uint64_t> queue_bytes_;  // 8-byte aligned copies of the samples' arrays
  std::vector<std::vector<UnwindFrame>> queue_frames_;
  const std::vector<UnwindFrame>* precomputed_ = nullptr;
  UnwindOutcome precomputed_outcome_ = UnwindOutcome::complete;
  TracingData tracing_;
  bool map_budget_warned_ = false;
  bool prepared_ = false;
  int fold_attr_ = -1;
  bool wall_event_checked_ = false;
  std::vector<size_t> sched_switch_attrs_;
  const TracepointField* prev_pid_ = nullptr;
  const TracepointField* prev_state_ = nullptr;
  const TracepointField* prev_comm_ = nullptr;
  const TracepointField* next_pid_ = nullptr;
  OffCpuTracker off_cpu_;
  std::vector<OffCpuBlock> blocks_;
  uint64_t last_time_ = 0;

  FoldedProfile out_;
  RawStackTable raw_;
  static constexpr size_t kPendingStacks = 32, kPrefetchKeyAfter = 16;
  std::array<PendingStack, kPendingStacks> pending_;
  size_t pending_head_ = 0, pending_count_ = 0;
  std::array<ThreadSlot, 256> threads_{};
  static constexpr size_t kKeyHeader = 4;  // see build_key
  // The symbolising thread (start_symbolizer) and its job queue.
  std::unique_ptr<std::thread> symbolizer_;
  std::mutex job_mutex_;
  std::condition_variable job_cv_;
  std::vector<StackJob> jobs_filling_;  // folding thread only
  std::vector<StackJob> jobs_ready_;    // under job_mutex_
  uint64_t jobs_submitted_ = 0, jobs_done_ = 0;  // under job_mutex_
  bool stop_jobs_ = false;
  std::exception_ptr job_error_;
  // Processes whose maps queued stacks will read (folding thread only).
  std::unordered_set<const ProcessMaps*> jobs_procs_;
  const ProcessMaps* last_job_proc_ = nullptr;
  uint32_t thread_epoch_ = 1;
  std::vector<NodeId> stack_nodes_;     // per raw stack: the node in out_ where its path ends
  std::unordered_map<uint64_t, uint64_t> off_weights_;  // (raw stack << 16 | state) -> ns
  FrameCache frame_cache_;
  std::vector<FrameId> frame_arena_;
  std::unordered_map<RootKey, RootInfo*, RootKeyHash> roots_;
  std::deque<RootInfo> root_store_;
  std::unordered_map<std::string, std::string> feature_ids_;
  std::unordered_map<int32_t, std::string> unnamed_;
  bool feature_ids_built_ = false;

  // Scratch buffers reused across samples (no allocation on the hot path).
  AddressList addresses_;
  // symbolise_stack's per-frame scratch.
  struct StackFrame {
    StackAddress address;
    FrameKey key;
    const MapEntry* map;
  };
  std::vector<StackFrame> frames_;
  std::vector<RawStackFrame> observed_;  // observe_stack's scratch
  std::vector<uint32_t> sample_counts_;  // per raw stack, kept only for an observer
  std::vector<UnwindFrame> unwound_;
  std::vector<uint64_t> key_;
  std::vector<SymbolizedFrame> resolved_;
};

}  // namespace

bool looks_like_perf_data(std::string_view head) { return head.size() >= 8 && head.substr(0, 8) == "PERFILE2"; }

FoldedProfile fold_perf_data(const std::string& path, const FoldOptions& options, FoldStats* stats_out) {
  FoldStats local;
  FoldStats& stats = stats_out ? *stats_out : local;
  ReadOptions ro;
  ro.partial = options.partial;
  ro.progress = options.progress;
  ro.max_memory = options.max_memory;
  PerfDataReader reader(path, ro);
  FoldOptions effective = options;
  // /proc/kallsyms describes this machine's kernel: use it only for a
  // recording made on this machine's running kernel.
  if (effective.symbols.kallsyms_path.empty()) {
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    std::string release;
    if (FILE* f = std::fopen("/proc/sys/kernel/osrelease", "r")) {
      char buf[256] = {};
      if (std::fgets(buf, sizeof buf, f)) release = buf;
      std::fclose(f);
      while (!release.empty() && (release.back() == '\n' || release.back() == ' ')) release.pop_back();
    }
    const PerfFileInfo& info = reader.info();
    // Pipe mode learns the host only while reading; trust it when unknown.
    bool unknown = info.hostname.empty() && info.os_release.empty();
    effective.symbols.use_proc_kallsyms = unknown || (info.hostname == host && info.os_release == release);
  }
  for (const auto& e : reader.info().build_ids)
    if (e.filename == "[kernel.kallsyms]" && effective.symbols.kernel_build_id.empty()) effective.symbols.kernel_build_id = e.build_id;
  StackFolder folder(reader, effective, stats);
  const unsigned threads =
      options.threads ? options.threads : std::min(2u, std::max(1u, std::thread::hardware_concurrency()));
  if (!reader.info().pipe_mode) {
    folder.prepare();
    folder.enable_parallel(threads);
    folder.enable_symbolizer(threads);
  }
  // Reading overlaps folding on a second core (output identical either way),
  // and so does loading the kernel's symbols unless no event sees the kernel
  // (exclude_kernel is bit 5 of the attr flags).
  ro.reading_thread = threads >= 2;
  bool kernel_events = reader.info().pipe_mode;
  for (const EventAttr& a : reader.info().attrs) kernel_events |= !a.flag(5);
  if (threads >= 2 && kernel_events) folder.symbols().start_loading_kernel_symbols();
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
