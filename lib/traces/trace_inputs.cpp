#include "traces/trace_inputs.h"

#include <cstdio>

#include "diagnostics/terminal_text.h"
#include "folded/profile_loader.h"
#include "traces/chrome_trace.h"
#include "traces/onednn_verbose.h"

namespace fg {

TraceInputKind detect_trace_input(const std::string& path) {
  std::string head = read_file_head(path);
  if (looks_like_chrome_trace(head)) return TraceInputKind::ChromeTrace;
  if (looks_like_onednn_verbose(head)) return TraceInputKind::OnednnVerbose;
  return TraceInputKind::None;
}

FoldedProfile fold_trace_input(const std::string& path, TraceInputKind kind, const TraceFoldOptions& options,
                               const std::function<void(const std::string&)>& warn) {
  std::vector<std::string> warnings;
  FoldedProfile p;
  if (kind == TraceInputKind::OnednnVerbose) {
    OnednnVerboseStats st;
    OnednnVerboseOptions o;
    o.lenient = options.lenient;
    p = fold_onednn_verbose(path, &st, o);
    warnings = st.warnings();
  } else {
    ChromeTraceOptions o;
    o.lenient = options.lenient;
    o.progress = options.progress;
    ChromeTraceStats st;
    p = fold_chrome_trace(path, o, &st);
    warnings = st.warnings();
    if (st.spans == 0) warnings.push_back("no duration events (ph X, or B/E pairs) in " + std::to_string(st.events) + " events");
  }
  for (const auto& w : warnings) {
    if (warn) warn(w);
    else std::fprintf(stderr, "fgtool: %s: %s\n", terminal_safe(path).c_str(), terminal_safe(w).c_str());
  }
  return p;
}

void register_trace_loaders() {
  static bool done = false;
  if (done) return;
  done = true;
  auto loader = [](TraceInputKind kind) {
    return [kind](const std::string& path, FoldedProfile& into, const ProfileLoadOptions& lo) {
      TraceFoldOptions o;
      o.lenient = lo.lenient;
      FoldedProfile p = fold_trace_input(path, kind, o, [&](const std::string& w) {
        if (lo.warn) lo.warn(w);
        else std::fprintf(stderr, "fgtool: %s: %s\n", terminal_safe(path).c_str(), terminal_safe(w).c_str());
      });
      into.merge(p);
      into.units = p.units;
    };
  };
  register_profile_loader(ProfileLoader{"Chrome trace JSON", [](std::string_view h) { return looks_like_chrome_trace(h); },
                                        loader(TraceInputKind::ChromeTrace)});
  register_profile_loader(ProfileLoader{"oneDNN verbose log",
                                        [](std::string_view h) { return looks_like_onednn_verbose(h); },
                                        loader(TraceInputKind::OnednnVerbose)});
}

}  // namespace fg
