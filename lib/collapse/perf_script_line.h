// Parsing of single `perf script` text lines: sample headers in any -F field
// subset ("comm pid/tid [cpu] time: period event: trace"), side-band lines
// (PERF_RECORD_SWITCH ...) and callchain entries ("\taddr sym+off (dso)").
// Views into the line only; nothing allocates.
#pragma once

#include <cstdint>
#include <string_view>

namespace fg {

struct PerfScriptHeader {
  std::string_view comm;
  std::string_view pid;   // empty when not printed
  std::string_view tid;   // empty when not printed; a lone number is the tid
  bool has_cpu = false;
  bool has_time = false;
  uint64_t time_ns = 0;
  bool has_period = false;
  uint64_t period = 0;
  std::string_view event;     // without the trailing ':'; empty when not printed
  std::string_view sideband;  // "PERF_RECORD_SWITCH" etc. for side-band lines
  std::string_view rest;      // trace text, side-band details, or "ip sym (dso)" without -g
  // True when none of cpu, time, event or side-band marker was found: then the
  // line is only a header if callchain entries follow it.
  bool tentative = false;
};

// Parses a line that is not a callchain entry. Returns false when it cannot be
// a header (empty comm).
bool parse_perf_script_header(std::string_view line, PerfScriptHeader& out);

struct PerfScriptFrame {
  std::string_view address;  // hex text as printed
  std::string_view symbol;   // may be empty or "[unknown]", may carry "+0x.."
  std::string_view dso;      // without parentheses, empty when not printed
  bool inlined = false;      // perf's " (inlined)" marker
};

// Parses "\t    addr sym+off (dso)" (leading whitespace optional). Returns
// false when the line does not start with a hexadecimal address.
bool parse_perf_script_frame(std::string_view line, PerfScriptFrame& out);

// Parses "S.FFFFFF" / "S.FFFFFFFFF" (optionally with a trailing ':') into ns.
bool parse_perf_script_time(std::string_view text, uint64_t& ns);

}  // namespace fg
