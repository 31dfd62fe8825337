#include "collapse/perf_script_collapser.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <sys/stat.h>
#include <thread>

#include "collapse/parallel_collapse.h"
#include "diagnostics/input_error.h"
#include "diagnostics/progress.h"
#include "diagnostics/terminal_text.h"
#include "folded/profile_loader.h"

namespace fg {

namespace {

// Text read at a time (a chunk still takes a whole line of up to 1 MiB):
// enough to amortise read() and, on several threads, each hand-over; small
// enough to stay in the caches between reading and parsing (256 KiB was
// 2-5% faster than 1 MiB on 1.5 GB of a busy machine's perf script text).
constexpr size_t kChunkBytes = size_t(1) << 18;

// Task state letters as the sched_switch print format writes them.
constexpr std::string_view kStateLetters = "RSDTtXZPIKWN";

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_sched_switch(std::string_view event) { return ends_with(event, "sched_switch"); }

// "cycles:u" -> "cycles"; "sched:sched_switch" unchanged (the part after the
// last ':' is only a modifier when it is made of modifier letters).
std::string_view without_modifiers(std::string_view event) {
  size_t colon = event.rfind(':');
  if (colon == std::string_view::npos || colon + 1 == event.size()) return event;
  for (char c : event.substr(colon + 1))
    if (!std::strchr("ukhpPGHSDIWeb", c)) return event;
  return event.substr(0, colon);
}

// "task-clock/period=100000/:u" -> "task-clock:u" (an event recorded with terms).
std::string without_terms(std::string_view event) {
  const size_t open = event.find('/'), close = event.rfind('/');
  if (open == std::string_view::npos || open == 0 || close == open) return std::string(event);
  return std::string(event.substr(0, open)).append(event.substr(close + 1));
}

bool parse_int(std::string_view s, int64_t& v) {
  bool neg = !s.empty() && s[0] == '-';
  if (neg) s.remove_prefix(1);
  if (s.empty() || s.size() > 18) return false;
  int64_t r = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    r = r * 10 + (c - '0');
  }
  v = neg ? -r : r;
  return true;
}

// Value of "key=" in tracepoint text, up to the next " name=" for prev_comm /
// next_comm (which may contain spaces) or the next space otherwise.
std::string_view trace_field(std::string_view text, std::string_view key, std::string_view next_key) {
  size_t k = 0;
  for (;;) {
    k = text.find(key, k);
    if (k == std::string_view::npos) return {};
    if (k == 0 || text[k - 1] == ' ') break;
    k += key.size();
  }
  size_t b = k + key.size();
  size_t e;
  if (!next_key.empty()) {
    e = text.find(next_key, b);
    if (e == std::string_view::npos) return {};
  } else {
    e = text.find(' ', b);
    if (e == std::string_view::npos) e = text.size();
  }
  return text.substr(b, e - b);
}

}  // namespace

uint32_t state_bit(std::string_view prev_state) {
  if (prev_state.empty()) return 0;
  size_t i = kStateLetters.find(prev_state[0]);
  return i == std::string_view::npos ? 0 : (1u << i);
}

uint32_t parse_state_filter(const std::string& text) {
  if (text == "voluntary") return ~0u & ~state_bit("R");
  if (text == "involuntary") return state_bit("R");
  uint32_t mask = 0;
  for (char c : text) {
    if (c == ',' || c == '|' || c == ' ' || c == '+') continue;
    uint32_t bit = state_bit(std::string_view(&c, 1));
    if (!bit)
      throw UsageError("--state: unknown task state '" + std::string(1, c) +
                       "' (use letters of R S D T t X Z P I, or voluntary / involuntary)");
    mask |= bit;
  }
  if (!mask) throw UsageError("--state: no task state given");
  return mask;
}

PerfScriptCollapser::PerfScriptCollapser(FoldedProfile& out, CollapseOptions options, std::string source)
    : out_(out), opt_(std::move(options)), source_(std::move(source)) {
  frames_.reserve(256);
  stack_.reserve(256);
}

void PerfScriptCollapser::malformed(const std::string& what, uint64_t line) {
  if (!opt_.lenient) throw InputError::at_line(source_, line, what);
  if (stats_.malformed_skipped++ == 0) {
    stats_.first_malformed = InputError::at_line(source_, line, what).what();
    stats_.first_malformed_line = line;
  }
  if (in_sample_) broken_ = true;
}

void PerfScriptCollapser::follow_event_of(const PerfScriptCollapser& first) {
  chose_event_ = first.chose_event_;
  stats_.event = first.stats_.event;
}

void add_collapse_stats(CollapseStats& into, const CollapseStats& from) {
  into.lines += from.lines;
  into.samples += from.samples;
  into.samples_folded += from.samples_folded;
  into.samples_other_event += from.samples_other_event;
  if (into.event.empty()) into.event = from.event;
  if (from.malformed_skipped &&
      (into.malformed_skipped == 0 || from.first_malformed_line < into.first_malformed_line)) {
    into.first_malformed = from.first_malformed;
    into.first_malformed_line = from.first_malformed_line;
  }
  into.malformed_skipped += from.malformed_skipped;
  into.truncated_stacks += from.truncated_stacks;
  into.truncated_names += from.truncated_names;
  into.switch_outs += from.switch_outs;
  into.switch_ins += from.switch_ins;
  into.intervals += from.intervals;
  into.repeated_switch_outs += from.repeated_switch_outs;
  into.closed_by_next_record += from.closed_by_next_record;
  into.next_record_dropped += from.next_record_dropped;
  into.pending_at_end += from.pending_at_end;
  into.filtered_state += from.filtered_state;
  into.filtered_short += from.filtered_short;
}

bool PerfScriptCollapser::wanted_on_cpu(std::string_view event) {
  if (!opt_.event.empty()) {
    if (event == opt_.event || without_modifiers(event) == opt_.event) {
      if (!chose_event_) stats_.event.assign(event.data(), event.size());  // for the units
      chose_event_ = true;
      return true;
    }
    // As the native fold: an event recorded with terms answers to its name
    // without them. Only the first such event seen is folded (the fold asks
    // for the full name where several share it).
    if (!chose_event_) {
      if (event.find('/') == std::string_view::npos) return false;
      const std::string base = without_terms(event);
      if (base == event || (base != opt_.event && without_modifiers(base) != opt_.event)) return false;
      chose_event_ = true;
      stats_.event.assign(event.data(), event.size());
    }
    return event == stats_.event;
  }
  // As the reference folding: the first sampling event that is not the
  // off-CPU tracepoint (a mixed recording folds its cpu-clock samples).
  if (!chose_event_) {
    if (is_sched_switch(event)) return false;
    chose_event_ = true;
    stats_.event.assign(event.data(), event.size());
  }
  return event == stats_.event;
}

void PerfScriptCollapser::begin_sample(const PerfScriptHeader& h) {
  in_sample_ = true;
  tentative_ = h.tentative;
  tentative_line_ = line_no_;
  broken_ = false;
  has_frames_ = false;
  truncated_ = false;
  frames_.clear();
  comm_.assign(h.comm.data(), h.comm.size());
  pid_.assign(h.pid.data(), h.pid.size());
  tid_.assign(h.tid.data(), h.tid.size());
  event_.assign(h.event.data(), h.event.size());
  rest_.assign(h.rest.data(), h.rest.size());
  has_time_ = h.has_time;
  time_ns_ = h.time_ns;
  has_period_ = h.has_period;
  period_ = h.period;
  stats_.samples++;
  if (opt_.off_cpu) {
    wanted_ = is_sched_switch(event_);
    // Any other sample of a blocked task: it is running, so without switch
    // lines its block ends here at the latest.
    int64_t tid = 0;
    if (!wanted_ && h.has_time && !pending_.empty() && parse_int(h.tid, tid)) task_seen(tid, h.time_ns);
  } else {
    if (is_sched_switch(event_)) sched_switch_samples_++;
    wanted_ = wanted_on_cpu(event_);
    if (!wanted_) stats_.samples_other_event++;
  }
}

void PerfScriptCollapser::add_frame(const PerfScriptFrame& f) {
  has_frames_ = true;
  if (!wanted_ || broken_) return;
  if (f.inlined && !opt_.keep_inline) return;
  // Like perf --max-stack: the leaf-most frames are kept (they are printed first).
  if (frames_.size() >= kMaxStackDepth) {
    if (!truncated_) ++stats_.truncated_stacks;
    truncated_ = true;
    return;
  }
  tidy_frame(f.symbol, f.dso, f.address, opt_.tidy, name_);
  if (name_.size() > kMaxFrameNameBytes) {
    name_.resize(clamp_frame_name(name_).size());
    ++stats_.truncated_names;
  }
  FrameId id = out_.intern(name_);
  if (!f.dso.empty() && out_.frame_object(id).empty()) out_.set_frame_object(id, f.dso);
  frames_.push_back(id);
}

namespace {
bool is_blank(char c) { return c == ' ' || c == '\t'; }
bool is_hex_digit(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
}  // namespace

void PerfScriptCollapser::add_frame_line(std::string_view line) {
  // The address, checked as parse_perf_script_frame does.
  size_t pos = 0;
  while (pos < line.size() && is_blank(line[pos])) pos++;
  size_t b = pos;
  while (pos < line.size() && is_hex_digit(line[pos])) pos++;
  if (pos == b || pos - b > 16 || (pos < line.size() && !is_blank(line[pos]))) {
    malformed("callchain line does not start with a hexadecimal address", line_no_);
    return;
  }
  if (!wanted_ || broken_) {
    has_frames_ = true;
    return;
  }
  while (pos < line.size() && is_blank(line[pos])) pos++;
  std::string_view text = line.substr(pos);
  FrameId key = frame_texts_.intern(text);
  if (key == frame_text_info_.size()) {
    // A new text: its name depends on the address only for unknown symbols
    // with --addrs, and for kernel detection of frames without a dso.
    PerfScriptFrame f;
    parse_perf_script_frame(line, f);  // cannot fail: the address was checked
    bool by_address = opt_.tidy.raw_addresses || (opt_.tidy.annotate_kernel && (f.dso.empty() || f.dso == "[unknown]"));
    frame_text_info_.push_back(FrameText{FoldedProfile::kNoFrame, f.inlined, false, by_address});
  }
  FrameText& t = frame_text_info_[key];
  has_frames_ = true;
  if (t.inlined && !opt_.keep_inline) return;
  if (t.frame == FoldedProfile::kNoFrame || t.by_address) {
    // First use (or an address-dependent name): the full path, remembered.
    PerfScriptFrame f;
    parse_perf_script_frame(line, f);
    size_t before = frames_.size();
    uint64_t truncated_names = stats_.truncated_names;
    add_frame(f);
    if (frames_.size() > before && !t.by_address) {
      t.frame = frames_.back();
      t.name_truncated = stats_.truncated_names != truncated_names;
    }
    return;
  }
  if (frames_.size() >= kMaxStackDepth) {
    if (!truncated_) ++stats_.truncated_stacks;
    truncated_ = true;
    return;
  }
  if (t.name_truncated) ++stats_.truncated_names;
  frames_.push_back(t.frame);
}

FrameId PerfScriptCollapser::root_frame(std::string_view comm, std::string_view pid, std::string_view tid) {
  name_.clear();
  for (char c : comm) name_ += c == ' ' || c == '\r' ? '_' : c == ';' ? ':' : c;
  if (opt_.root != CollapseOptions::Root::Comm) {
    name_ += '-';
    name_ += pid.empty() ? std::string_view("?") : pid;
    if (opt_.root == CollapseOptions::Root::CommPidTid) {
      name_ += '/';
      name_ += tid.empty() ? std::string_view("?") : tid;
    }
  }
  return out_.intern(name_);
}

void PerfScriptCollapser::flush_sample() {
  if (!in_sample_) return;
  in_sample_ = false;
  if (tentative_ && !has_frames_) {
    // A line with no time, cpu or event and no callchain below it.
    bool was_lenient_broken = broken_;
    broken_ = false;
    if (!was_lenient_broken) malformed("not a perf script sample header or callchain line", tentative_line_);
    return;
  }
  if (!wanted_ || broken_) return;
  if (!has_frames_ && !rest_.empty()) {
    // Without -g, perf prints "ip sym (dso)" on the header line.
    PerfScriptFrame f;
    if (parse_perf_script_frame(rest_, f) && f.address.size() >= 1 && !f.symbol.empty()) add_frame(f);
  }
  if (opt_.off_cpu) {
    handle_switch_sample();
    return;
  }
  stack_.clear();
  stack_.push_back(root_frame(comm_, pid_, tid_));
  stack_.insert(stack_.end(), frames_.rbegin(), frames_.rend());
  double weight = (!opt_.count_samples && has_period_) ? double(period_) : 1.0;
  if (has_period_) saw_period_ = true;
  out_.add(stack_, weight);
  stats_.samples_folded++;
}

void PerfScriptCollapser::close_off_cpu(int64_t tid, uint64_t time_ns, bool by_next_record) {
  auto it = pending_.find(tid);
  if (it == pending_.end()) return;
  Pending& p = it->second;
  if (time_ns >= p.time_ns) {
    double us = double(time_ns - p.time_ns) / 1000.0;
    if (opt_.state_mask && !(opt_.state_mask & p.state)) {
      stats_.filtered_state++;
    } else if (us < opt_.min_block_us) {
      stats_.filtered_short++;
    } else if (by_next_record) {
      next_record_us_[p.stack] += us;
      stats_.closed_by_next_record++;
    } else {
      out_.add(p.stack, us);
      stats_.intervals++;
    }
  }
  pending_.erase(it);
}

void PerfScriptCollapser::handle_switch_sample() {
  std::string_view trace = rest_;
  std::string_view prev_comm = trace_field(trace, "prev_comm=", " prev_pid=");
  std::string_view prev_pid_text = trace_field(trace, "prev_pid=", {});
  std::string_view prev_state = trace_field(trace, "prev_state=", {});
  std::string_view next_pid_text = trace_field(trace, "next_pid=", {});
  int64_t prev_pid = 0, next_pid = 0;
  if (!parse_int(prev_pid_text, prev_pid) || !parse_int(next_pid_text, next_pid)) {
    malformed("sched_switch sample without prev_pid=/next_pid= text (print it with perf script -F +trace)",
              tentative_line_);
    return;
  }
  if (!has_time_) {
    malformed("sched_switch sample without a time (print it with perf script -F +time)", tentative_line_);
    return;
  }
  // A task switching in ends its off-CPU interval (system-wide recordings).
  close_off_cpu(next_pid, time_ns_);
  if (prev_pid == 0) return;  // the idle task is never off-CPU time
  stats_.switch_outs++;
  // Switched out again with no switch-in seen: without switch lines the
  // block ends here (it ran in between), as in fgtool fold.
  task_seen(prev_pid, time_ns_);
  Pending& p = pending_[prev_pid];
  if (!p.stack.empty()) stats_.repeated_switch_outs++;  // its switch-in was missed
  p.time_ns = time_ns_;
  p.state = state_bit(prev_state);
  p.stack.clear();
  p.stack.push_back(root_frame(prev_comm, pid_, prev_pid_text));
  p.stack.insert(p.stack.end(), frames_.rbegin(), frames_.rend());
}

void PerfScriptCollapser::feed(std::string_view line) {
  line_no_++;
  stats_.lines++;
  if (line.find('\0') != std::string_view::npos) {
    malformed("NUL byte: this is not perf script text (for perf.data use 'fgtool fold')", line_no_);
    return;
  }
  if (line.empty() || line.find_first_not_of(" \t\r") == std::string_view::npos) {
    flush_sample();
    return;
  }
  if (line[0] == '#') return;  // perf's header comments
  if (line[0] == '\t') {
    if (!in_sample_) {
      malformed("callchain line outside a sample (is a sample header missing?)", line_no_);
      return;
    }
    add_frame_line(line);
    return;
  }
  if (in_sample_ && has_frames_ && line[0] == ' ') return;  // "  file.c:12" from -F +srcline
  flush_sample();
  PerfScriptHeader h;
  if (!parse_perf_script_header(line, h)) {
    malformed("not a perf script sample header", line_no_);
    return;
  }
  if (!h.sideband.empty()) {
    const bool switch_line = h.sideband == "PERF_RECORD_SWITCH" || h.sideband == "PERF_RECORD_SWITCH_CPU_WIDE";
    if (switch_line) saw_switch_lines_ = true;
    // A task's exit (perf script --show-task-events) is its last record: as
    // in fgtool fold, it ends a block that no switch line ended.
    int64_t exiting = 0;
    if (opt_.off_cpu && h.sideband.rfind("PERF_RECORD_EXIT", 0) == 0 && h.has_time && parse_int(h.tid, exiting))
      task_seen(exiting, h.time_ns);
    if (opt_.off_cpu && switch_line && h.rest.substr(0, 2) == "IN" && (h.rest.size() == 2 || h.rest[2] == ' ')) {
      stats_.switch_ins++;
      int64_t tid = 0;
      if (!h.has_time || !parse_int(h.tid, tid)) {
        malformed("PERF_RECORD_SWITCH line without a thread id and time (use -F tid,time)", line_no_);
        return;
      }
      close_off_cpu(tid, h.time_ns);
    }
    return;
  }
  begin_sample(h);
}

void PerfScriptCollapser::finish() {
  flush_sample();
  if (opt_.off_cpu) {
    stats_.pending_at_end = pending_.size();
    pending_.clear();
    if (saw_switch_lines_) {
      stats_.next_record_dropped = stats_.closed_by_next_record;
      stats_.closed_by_next_record = 0;
    } else {
      for (const auto& [stack, us] : next_record_us_) out_.add(stack, us);
      stats_.intervals += stats_.closed_by_next_record;
    }
    next_record_us_.clear();
    out_.units = "us";
  } else if (saw_period_ && !opt_.count_samples) {
    const std::string base = without_terms(stats_.event);
    std::string_view ev = without_modifiers(base);
    out_.units = (ev == "cpu-clock" || ev == "task-clock") ? "ns" : "period";
  } else {
    out_.units = "samples";
  }
}

void PerfScriptCollapser::feed_chunk(const TextChunk& chunk) {
  if (chunk.first_line) line_no_ = chunk.first_line - 1;
  const char* p = chunk.data.get();
  const char* const end = p + chunk.size;
  while (p < end) {
    const char* nl = static_cast<const char*>(std::memchr(p, '\n', size_t(end - p)));
    if (!nl) nl = end;  // (chunks end in '\n')
    std::string_view line(p, size_t(nl - p));
    p = nl + 1;
    if (line.size() > kMaxLineBytes) {
      line_no_++;
      stats_.lines++;
      malformed("line longer than 1 MiB: this is not perf script text", line_no_);
      continue;
    }
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    feed(line);
  }
}

void PerfScriptCollapser::read(InputStream& in, uint64_t size) {
  TextChunker chunker(in, kChunkBytes, kMaxLineBytes, /*number_lines=*/false);
  Progress progress("collapse " + source_, size, opt_.progress);
  TextChunk chunk;
  while (chunker.next(chunk)) {
    feed_chunk(chunk);
    progress.update(chunker.bytes_read());
  }
  finish();
  progress.finish();
}

FoldedProfile collapse_perf_script(const std::string& path, const CollapseOptions& options, CollapseStats* stats) {
  FoldedProfile profile;
  InputStream in(path);
  uint64_t size = 0;
  struct stat st;
  if (path != "-" && !in.gzip() && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) size = uint64_t(st.st_size);
  unsigned threads = options.threads ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  if (threads > 1 && !options.off_cpu)
    return collapse_in_parallel(in, size, options, threads, kChunkBytes, stats);
  PerfScriptCollapser collapser(profile, options, in.name());
  collapser.read(in, size);
  if (stats) *stats = collapser.stats();
  return profile;
}

}  // namespace fg

namespace fg {

bool looks_like_perf_script(std::string_view head) {
  if (head.find('\0') != std::string_view::npos) return false;
  size_t pos = 0;
  while (pos < head.size()) {
    size_t nl = head.find('\n', pos);
    if (nl == std::string_view::npos) return false;  // need one whole line
    std::string_view line = head.substr(pos, nl - pos);
    pos = nl + 1;
    if (line.empty() || line[0] == '#' || line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    // A folded line ("a;b;c 12") is not a header, even when its first frame
    // has colons that read like "time: event:" (Kineto process names such as
    // "pyper:trainer:0:0").
    size_t last_space = line.find_last_of(' ');
    if (last_space != std::string_view::npos && line.find(';') < last_space &&
        line.find_first_not_of("0123456789.\r", last_space + 1) == std::string_view::npos && last_space + 1 < line.size())
      return false;
    PerfScriptHeader h;
    if (line[0] == '\t' || !parse_perf_script_header(line, h) || h.tentative) return false;
    return h.has_time || !h.event.empty();
  }
  return false;
}

FoldedProfile with_rounded_weights(const FoldedProfile& profile) {
  FoldedProfile rounded;
  std::vector<FrameId> ids;
  profile.for_each_stack([&](const std::vector<FrameId>& frames, double w) {
    double r = std::round(w);
    if (r <= 0) return;
    ids.clear();
    for (FrameId f : frames) {
      FrameId id = rounded.intern(profile.frame_name(f));
      if (rounded.frame_object(id).empty() && !profile.frame_object(f).empty())
        rounded.set_frame_object(id, profile.frame_object(f));
      ids.push_back(id);
    }
    rounded.add(ids, r);
  });
  rounded.units = profile.units;
  return rounded;
}

void register_perf_script_loader() {
  register_profile_loader(ProfileLoader{
      "perf script text", [](std::string_view head) { return looks_like_perf_script(head); },
      [](const std::string& path, FoldedProfile& into, const ProfileLoadOptions& o) {
        CollapseOptions opt;
        opt.lenient = o.lenient;
        opt.threads = 0;  // one per core, as `fgtool collapse`
        CollapseStats st;
        FoldedProfile p = collapse_perf_script(path, opt, &st);
        auto warn = [&](const std::string& w) {
          if (o.warn) o.warn(w);
          else std::cerr << "fgtool: " << terminal_safe(path) << ": " << terminal_safe(w) << "\n";
        };
        if (st.truncated_stacks)
          warn(std::to_string(st.truncated_stacks) + " samples deeper than " + std::to_string(kMaxStackDepth) +
               " frames cut to their leaf-most " + std::to_string(kMaxStackDepth));
        if (st.truncated_names)
          warn(std::to_string(st.truncated_names) + " frame names longer than " + std::to_string(kMaxFrameNameBytes) +
               " bytes truncated");
        into.merge(p);
        into.units = p.units;
      }});
}

}  // namespace fg
