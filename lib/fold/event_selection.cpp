#include "fold/event_selection.h"

#include <algorithm>

#include "diagnostics/input_error.h"

namespace fg {

bool is_clock_event(const EventAttr& a) { return a.type == 1 && (a.config == 0 || a.config == 1); }

bool event_name_matches(const std::string& attr_name, const std::string& wanted) {
  if (attr_name == wanted) return true;
  auto strip = [](const std::string& n) {
    size_t colon = n.rfind(':');
    if (colon == std::string::npos) return n;
    std::string mods = n.substr(colon + 1);
    bool all_mods = !mods.empty() && mods.find_first_not_of("ukhpPGHSDIWeb") == std::string::npos;
    return all_mods ? n.substr(0, colon) : n;
  };
  return strip(attr_name) == strip(wanted);
}

std::string event_name_without_terms(const std::string& name) {
  // NAME/terms/ or NAME/terms/:modifiers; a PMU's "cpu/cycles/" too, whose
  // base "cpu" is then ambiguous where it has several events.
  const size_t open = name.find('/');
  const size_t close = name.rfind('/');
  if (open == std::string::npos || open == 0 || close == open) return name;
  return name.substr(0, open) + name.substr(close + 1);
}

EventSelection::EventSelection(const PerfFileInfo& info, const std::string& path, const FoldOptions& options,
                               std::vector<std::string>& warnings) {
  if (!info.tracing_data.empty()) {
    try {
      tracing_ = TracingData::parse(info.tracing_data, path, info.tracing_data_offset);
    } catch (const InputError& e) {
      if (options.view != FoldView::on_cpu) throw;
      warnings.push_back(std::string("tracing data ignored: ") + e.what());
    }
  }
  for (size_t i = 0; i < info.attrs.size(); ++i) {
    const EventAttr& a = info.attrs[i];
    if (a.context_switch()) switch_records_ = true;
    if (is_sched_switch(a)) sched_switch_attrs_.push_back(i);
  }
  if (!options.event.empty()) select_event(info, path, options.event);
  if (options.view == FoldView::on_cpu) return;
  if (sched_switch_attrs_.empty())
    throw UsageError(path + ": no sched:sched_switch events; record with "
                            "'fgtool record --off-cpu' (perf record -e sched:sched_switch --switch-events -g)");
  const TracepointFormat* fmt = tracing_.find(info.attrs[sched_switch_attrs_[0]].config);
  if (!fmt) fmt = tracing_.find("sched", "sched_switch");
  if (!fmt) throw InputError(path + ": sched_switch events but no usable tracing data (format of sched_switch missing)");
  prev_pid_ = fmt->field("prev_pid");
  prev_state_ = fmt->field("prev_state");
  prev_comm_ = fmt->field("prev_comm");
  next_pid_ = fmt->field("next_pid");
  if (!prev_pid_ || !prev_state_ || !next_pid_)
    throw InputError(path + ": the sched_switch format lacks prev_pid/prev_state/next_pid");
}

// The first event of that name; else the one event whose name without its
// terms is that name (`-e task-clock/period=100000/` is named so in the file,
// and perf script prints it so).
void EventSelection::select_event(const PerfFileInfo& info, const std::string& path, const std::string& wanted) {
  std::vector<size_t> by_base;
  for (size_t i = 0; i < info.attrs.size() && fold_attr_ < 0; ++i) {
    if (event_name_matches(info.attrs[i].name, wanted)) fold_attr_ = int(i);
    else if (event_name_matches(event_name_without_terms(info.attrs[i].name), wanted)) by_base.push_back(i);
  }
  if (fold_attr_ >= 0) return;
  std::string names;
  for (const auto& a : info.attrs) names += (names.empty() ? "" : ", ") + a.name;
  if (by_base.size() == 1) {
    fold_attr_ = int(by_base[0]);
    return;
  }
  if (by_base.size() > 1)
    throw UsageError("--event " + wanted + ": several events of that name in " + path + "; name one in full (it has: " +
                     names + ")");
  throw UsageError("--event " + wanted + ": no such event in " + path + " (it has: " + names + ")");
}

bool EventSelection::is_switch(size_t attr_index) const {
  return std::find(sched_switch_attrs_.begin(), sched_switch_attrs_.end(), attr_index) != sched_switch_attrs_.end();
}

bool EventSelection::is_sched_switch(const EventAttr& a) const {
  if (a.name == "sched:sched_switch") return true;
  if (a.type != 2) return false;
  const TracepointFormat* f = tracing_.find(a.config);
  return f && f->name == "sched_switch";
}

bool EventSelection::read_switch(const Sample& s, SchedSwitch* out) const {
  int64_t prev_pid = -1, next_pid = -1;
  uint64_t prev_state = 0;
  if (!prev_pid_ || !read_tracepoint_int(*prev_pid_, s.raw, s.raw_size, &prev_pid) ||
      !read_tracepoint_int(*next_pid_, s.raw, s.raw_size, &next_pid) ||
      !read_tracepoint_uint(*prev_state_, s.raw, s.raw_size, &prev_state))
    return false;
  out->prev_pid = prev_pid;
  out->next_pid = next_pid;
  out->prev_state = prev_state;
  out->prev_comm = prev_comm_ ? read_tracepoint_string(*prev_comm_, s.raw, s.raw_size) : std::string_view();
  return true;
}

}  // namespace fg
