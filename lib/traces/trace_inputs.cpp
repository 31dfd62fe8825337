#include "traces/trace_inputs.h"

#include <zlib.h>

#include <cstdio>
#include <set>

#include "diagnostics/input_error.h"
#include "diagnostics/terminal_text.h"
#include "folded/profile_loader.h"
#include "traces/chrome_trace.h"
#include "traces/onednn_verbose.h"

namespace fg {

std::string decompressed_head(std::string_view raw) {
  if (raw.size() < 2 || static_cast<unsigned char>(raw[0]) != 0x1f || static_cast<unsigned char>(raw[1]) != 0x8b)
    return std::string(raw);
  std::string out(4096, '\0');
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) return {};
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data()));
  z.avail_in = uInt(raw.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = uInt(out.size());
  inflate(&z, Z_SYNC_FLUSH);  // stops at the end of the input or the output, whichever first
  out.resize(out.size() - z.avail_out);
  inflateEnd(&z);
  return out;
}

TraceInputKind detect_trace_input_head(std::string_view raw_head) {
  std::string head = decompressed_head(raw_head);
  if (looks_like_chrome_trace(head)) return TraceInputKind::ChromeTrace;
  if (looks_like_onednn_verbose(head)) return TraceInputKind::OnednnVerbose;
  return TraceInputKind::None;
}

TraceInputKind detect_trace_input(const std::string& path) { return detect_trace_input_head(read_file_head(path)); }

namespace {

void fold_one(const std::string& path, TraceInputKind kind, const TraceFoldOptions& options, FoldedProfile& into,
              int64_t* rank, const std::function<void(const std::string&)>& warn) {
  std::vector<std::string> warnings;
  if (kind == TraceInputKind::OnednnVerbose) {
    OnednnVerboseStats st;
    OnednnVerboseOptions o;
    o.lenient = options.lenient;
    FoldedProfile p = fold_onednn_verbose(path, &st, o);
    into.merge(p);
    into.units = p.units;
    warnings = st.warnings();
  } else {
    ChromeTraceOptions o;
    o.lenient = options.lenient;
    o.progress = options.progress;
    o.view = options.gpu ? ChromeTraceOptions::View::Gpu : ChromeTraceOptions::View::Cpu;
    o.gpu_idle = options.gpu_idle;
    o.full_kernel_names = options.full_kernel_names;
    ChromeTraceStats st;
    fold_chrome_trace_into(path, into, o, &st);
    if (rank) *rank = st.rank;
    warnings = st.warnings();
    if (options.gpu) {
      if (st.gpu_activities == 0)
        warnings.push_back("no GPU activity (kernel, gpu_memcpy, gpu_memset events) in " + std::to_string(st.events) +
                           " events: the GPU view is empty");
    } else if (st.spans == 0) {
      warnings.push_back("no duration events (ph X, or B/E pairs) in " + std::to_string(st.events) + " events");
    }
  }
  for (const auto& w : warnings) {
    if (warn) warn(w);
    else std::fprintf(stderr, "fgtool: %s: %s\n", terminal_safe(path).c_str(), terminal_safe(w).c_str());
  }
}

}  // namespace

FoldedProfile fold_trace_input(const std::string& path, TraceInputKind kind, const TraceFoldOptions& options,
                               const std::function<void(const std::string&)>& warn) {
  FoldedProfile p;
  fold_one(path, kind, options, p, nullptr, warn);
  return p;
}

FoldedProfile fold_trace_inputs(const std::vector<std::string>& paths, const std::vector<TraceInputKind>& kinds,
                                const TraceFoldOptions& options,
                                const std::function<void(const std::string&, const std::string&)>& warn) {
  FoldedProfile out;
  std::set<std::string> used;
  for (size_t i = 0; i < paths.size(); ++i) {
    const std::string& path = paths[i];
    TraceInputKind kind = i < kinds.size() ? kinds[i] : TraceInputKind::None;
    if (kind == TraceInputKind::None) kind = path == "-" ? TraceInputKind::ChromeTrace : detect_trace_input(path);
    if (kind == TraceInputKind::None)
      throw InputError::at_offset(path, 0, "not a Chrome trace (JSON with traceEvents) or a oneDNN verbose log");
    auto w = [&](const std::string& text) { warn(path, text); };
    if (options.label.empty() || paths.size() == 1) {
      fold_one(path, kind, options, out, nullptr, w);
      continue;
    }
    FoldedProfile p;
    int64_t rank = -1;
    fold_one(path, kind, options, p, &rank, w);
    std::string label;
    if (options.label == "file") {
      size_t slash = path.find_last_of('/');
      label = slash == std::string::npos ? path : path.substr(slash + 1);
    } else {
      label = "rank " + std::to_string(rank >= 0 ? rank : int64_t(i));
      // Two traces claiming one rank (e.g. single-process jobs, all rank 0)
      // stay apart: the later one is named by its file too.
      if (!used.insert(label).second) {
        size_t slash = path.find_last_of('/');
        label += " (" + (slash == std::string::npos ? path : path.substr(slash + 1)) + ")";
      }
    }
    out.merge(p, label);
    out.units = p.units;
  }
  return out;
}

namespace {
ProfileLoader::Load trace_loader(TraceInputKind kind) {
  return [kind](const std::string& path, FoldedProfile& into, const ProfileLoadOptions& lo) {
    TraceFoldOptions o;
    o.lenient = lo.lenient;
    fold_one(path, kind, o, into, nullptr, [&](const std::string& w) {
      if (lo.warn) lo.warn(w);
      else std::fprintf(stderr, "fgtool: %s: %s\n", terminal_safe(path).c_str(), terminal_safe(w).c_str());
    });
  };
}
}  // namespace

void register_chrome_trace_loader() {
  register_profile_loader(ProfileLoader{
      "Chrome trace JSON",
      [](std::string_view h) { return detect_trace_input_head(h) == TraceInputKind::ChromeTrace; },
      trace_loader(TraceInputKind::ChromeTrace)});
}

void register_onednn_verbose_loader() {
  // Through detect_trace_input_head, as `fgtool fold` decides: gzip'ed logs
  // are recognised too, and a head is never both a Chrome trace and a log.
  register_profile_loader(ProfileLoader{
      "oneDNN verbose log",
      [](std::string_view h) { return detect_trace_input_head(h) == TraceInputKind::OnednnVerbose; },
      trace_loader(TraceInputKind::OnednnVerbose)});
}

}  // namespace fg
