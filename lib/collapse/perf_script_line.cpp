#include "collapse/perf_script_line.h"

namespace fg {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!is_digit(c)) return false;
  return true;
}
bool all_hex(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!is_hex(c)) return false;
  return true;
}
bool signed_number(std::string_view s) {
  if (!s.empty() && s[0] == '-') s.remove_prefix(1);
  return all_digits(s);
}
// "1234", "1234/1235", "18066/-1"
bool pid_tid_token(std::string_view s, std::string_view& pid, std::string_view& tid) {
  size_t slash = s.find('/');
  if (slash == std::string_view::npos) {
    if (!signed_number(s)) return false;
    pid = {};
    tid = s;
    return true;
  }
  if (!signed_number(s.substr(0, slash)) || !signed_number(s.substr(slash + 1))) return false;
  pid = s.substr(0, slash);
  tid = s.substr(slash + 1);
  return true;
}
bool cpu_token(std::string_view s) { return s.size() >= 3 && s.front() == '[' && s.back() == ']' && all_digits(s.substr(1, s.size() - 2)); }
bool time_token(std::string_view s) {
  if (s.size() < 4 || s.back() != ':') return false;
  uint64_t ns;
  return parse_perf_script_time(s, ns);
}
bool event_token(std::string_view s) { return s.size() >= 2 && s.back() == ':'; }
bool sideband_token(std::string_view s) { return s.size() > 12 && s.substr(0, 12) == "PERF_RECORD_"; }

struct Token {
  size_t begin, end;
};

}  // namespace

bool parse_perf_script_time(std::string_view text, uint64_t& ns) {
  if (!text.empty() && text.back() == ':') text.remove_suffix(1);
  size_t dot = text.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot > 12) return false;
  std::string_view sec = text.substr(0, dot), frac = text.substr(dot + 1);
  if (!all_digits(sec) || !all_digits(frac) || frac.size() > 9) return false;
  uint64_t s = 0, f = 0;
  for (char c : sec) s = s * 10 + uint64_t(c - '0');
  for (char c : frac) f = f * 10 + uint64_t(c - '0');
  for (size_t i = frac.size(); i < 9; i++) f *= 10;
  ns = s * 1000000000ull + f;
  return true;
}

namespace {
// The header's fields after "comm [pid/]tid", from token `anchor` on: cpu,
// time, then either a sideband record's text or period, event and the rest.
void header_fields(std::string_view line, const Token* tok, size_t n, size_t anchor, PerfScriptHeader& out) {
  auto text = [&](size_t i) { return line.substr(tok[i].begin, tok[i].end - tok[i].begin); };
  size_t i = anchor;
  if (i < n && cpu_token(text(i))) {
    out.has_cpu = true;
    i++;
  }
  if (i < n && time_token(text(i))) {
    out.has_time = parse_perf_script_time(text(i), out.time_ns);
    i++;
  }
  if (i < n && sideband_token(text(i))) {
    out.sideband = text(i);
    i++;
    out.rest = i < n ? line.substr(tok[i].begin) : std::string_view();
    return;
  }
  // The period is a decimal before the event name. Without an event name it
  // is recognised when nothing follows it, or an address does.
  if (i < n && all_digits(text(i)) && text(i).size() <= 20) {
    bool is_period = i + 1 == n || event_token(text(i + 1)) || (i + 2 < n && all_hex(text(i + 1)));
    if (is_period) {
      uint64_t p = 0;
      for (char c : text(i)) p = p * 10 + uint64_t(c - '0');
      out.has_period = true;
      out.period = p;
      i++;
    }
  }
  if (i < n && event_token(text(i))) {
    std::string_view e = text(i);
    while (!e.empty() && e.back() == ':') e.remove_suffix(1);
    out.event = e;
    i++;
  }
  if (i < n) {
    std::string_view rest = line.substr(tok[i].begin);
    while (!rest.empty() && is_space(rest.back())) rest.remove_suffix(1);
    out.rest = rest;
  }
}
}  // namespace

bool parse_perf_script_header(std::string_view line, PerfScriptHeader& out) {
  out = PerfScriptHeader{};
  // At most this many tokens matter: comm words, pid, cpu, time, period, event.
  constexpr size_t kMaxTokens = 24;
  Token tok[kMaxTokens];
  size_t n = 0, pos = 0;
  while (n < kMaxTokens) {
    while (pos < line.size() && is_space(line[pos])) pos++;
    if (pos >= line.size()) break;
    size_t b = pos;
    while (pos < line.size() && !is_space(line[pos])) pos++;
    tok[n++] = {b, pos};
  }
  if (n == 0) return false;
  auto text = [&](size_t i) { return line.substr(tok[i].begin, tok[i].end - tok[i].begin); };

  size_t anchor = n;
  for (size_t i = 1; i < n; i++) {
    std::string_view t = text(i);
    if (cpu_token(t) || time_token(t) || event_token(t) || sideband_token(t)) {
      anchor = i;
      break;
    }
  }
  size_t comm_end_tok;  // exclusive
  if (anchor == n) {
    out.tentative = true;
    // No cpu, time or event: "comm [pid/]tid" alone, callchain entries below.
    if (n >= 2 && pid_tid_token(text(n - 1), out.pid, out.tid))
      comm_end_tok = n - 1;
    else
      comm_end_tok = n;
    if (n == kMaxTokens) return false;
    out.comm = line.substr(tok[0].begin, tok[comm_end_tok - 1].end - tok[0].begin);
    return true;
  }
  // Without cpu and time (a recording without PERF_SAMPLE_TIME, or -F
  // without them) the period comes straight before the event:
  // "comm pid/tid period event:". The decimal before the event is then the
  // period where a pid/tid (or, with tid alone, another decimal) precedes
  // it; a comm must keep one word.
  size_t fields_from = anchor;
  if (anchor >= 3 && event_token(text(anchor)) && !time_token(text(anchor)) && all_digits(text(anchor - 1)) &&
      text(anchor - 1).size() <= 20 && pid_tid_token(text(anchor - 2), out.pid, out.tid))
    fields_from = anchor - 1;
  if (fields_from != anchor)
    comm_end_tok = anchor - 2;
  else if (anchor >= 2 && pid_tid_token(text(anchor - 1), out.pid, out.tid))
    comm_end_tok = anchor - 1;
  else
    comm_end_tok = anchor;
  out.comm = line.substr(tok[0].begin, tok[comm_end_tok - 1].end - tok[0].begin);

  header_fields(line, tok, n, fields_from, out);
  return true;
}

bool parse_perf_script_frame(std::string_view line, PerfScriptFrame& out) {
  out = PerfScriptFrame{};
  size_t pos = 0;
  while (pos < line.size() && is_space(line[pos])) pos++;
  size_t b = pos;
  while (pos < line.size() && is_hex(line[pos])) pos++;
  if (pos == b || pos - b > 16 || (pos < line.size() && !is_space(line[pos]))) return false;
  out.address = line.substr(b, pos - b);
  while (pos < line.size() && is_space(line[pos])) pos++;
  std::string_view rest = line.substr(pos);
  while (!rest.empty() && is_space(rest.back())) rest.remove_suffix(1);
  constexpr std::string_view kInlined = " (inlined)";
  if (rest.size() >= kInlined.size() && rest.substr(rest.size() - kInlined.size()) == kInlined) {
    out.inlined = true;
    rest.remove_suffix(kInlined.size());
  }
  if (!rest.empty() && rest.back() == ')') {
    // The dso is the final parenthesised group, preceded by a space (symbols
    // such as "operator()" end in ')' too, but without a space before '(').
    int depth = 0;
    for (size_t k = rest.size(); k-- > 0;) {
      if (rest[k] == ')') {
        depth++;
      } else if (rest[k] == '(' && --depth == 0) {
        if (k == 0 || rest[k - 1] == ' ') {
          out.dso = rest.substr(k + 1, rest.size() - k - 2);
          rest = rest.substr(0, k);
          while (!rest.empty() && is_space(rest.back())) rest.remove_suffix(1);
        }
        break;
      }
    }
  }
  out.symbol = rest;
  return true;
}

}  // namespace fg
