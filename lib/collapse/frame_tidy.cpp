#include "collapse/frame_tidy.h"

#include <array>

namespace fg {

namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
bool starts_with(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}
bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

std::string_view trim_right(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// "+0x1f" at the end of a symbol (perf's symoff).
std::string_view strip_offset(std::string_view s) {
  size_t plus = s.rfind('+');
  if (plus == std::string_view::npos || plus + 3 > s.size() || s[plus + 1] != '0' || s[plus + 2] != 'x') return s;
  for (size_t i = plus + 3; i < s.size(); i++)
    if (!is_hex(s[i])) return s;
  if (plus + 3 == s.size()) return s;
  return s.substr(0, plus);
}

std::string_view basename(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace

std::string_view strip_argument_list(std::string_view name) {
  std::string_view s = trim_right(name);
  // Qualifiers that follow a member function's argument list.
  static constexpr std::array<std::string_view, 6> kQualifiers = {" const", " volatile", " &&", " &", " noexcept",
                                                                  " [clone]"};
  bool again = true;
  while (again) {
    again = false;
    for (std::string_view q : kQualifiers) {
      if (ends_with(s, q)) {
        s = trim_right(s.substr(0, s.size() - q.size()));
        again = true;
      }
    }
  }
  if (s.empty() || s.back() != ')') return name;
  // Find the '(' that matches the final ')'; parentheses are balanced in a
  // demangled name, so counting them alone suffices.
  int depth = 0;
  size_t open = std::string_view::npos;
  for (size_t i = s.size(); i-- > 0;) {
    if (s[i] == ')') {
      depth++;
    } else if (s[i] == '(') {
      if (--depth == 0) {
        open = i;
        break;
      }
    }
  }
  if (open == std::string_view::npos || open == 0) return name;  // unbalanced, or "(...)" alone
  std::string_view before = trim_right(s.substr(0, open));
  // "operator()" with no argument list: the parentheses are the name.
  if (ends_with(before, "operator") && open + 2 == s.size()) return name;
  if (before.empty()) return name;
  return before;
}

bool is_kernel_frame(std::string_view dso, std::string_view address_hex) {
  if (starts_with(dso, "[kernel.") || ends_with(dso, "vmlinux") || ends_with(dso, ".ko") ||
      ends_with(dso, ".ko.xz") || ends_with(dso, ".ko.zst") || ends_with(dso, ".ko.gz"))
    return true;
  if (dso.empty() || dso == "[unknown]") {
    // Absolute addresses are printed for unknown frames: upper half = kernel.
    std::string_view a = address_hex;
    while (!a.empty() && a.front() == '0') a.remove_prefix(1);
    return a.size() == 16 && a.front() >= '8';
  }
  if (dso.size() > 2 && dso.front() == '[' && dso.back() == ']') {
    // perf names kernel modules "[name]"; these bracketed names are user space.
    static constexpr std::array<std::string_view, 9> kUser = {"[unknown]", "[vdso]", "[vsyscall]", "[heap]", "[stack]",
                                                              "[anon]",    "[uprobes]", "[vectors]", "[vvar]"};
    for (std::string_view u : kUser)
      if (dso == u) return false;
    if (starts_with(dso, "[anon") || starts_with(dso, "[stack")) return false;
    return true;
  }
  return false;
}

bool is_jit_frame(std::string_view dso) {
  std::string_view b = basename(dso);
  if (!starts_with(dso, "/tmp/perf-") || !starts_with(b, "perf-") || !ends_with(b, ".map")) return false;
  std::string_view pid = b.substr(5, b.size() - 9);
  if (pid.empty()) return false;
  for (char c : pid)
    if (c < '0' || c > '9') return false;
  return true;
}

void tidy_frame(std::string_view symbol, std::string_view dso, std::string_view address_hex,
                const FrameTidyOptions& options, std::string& out) {
  out.clear();
  std::string_view sym = strip_offset(trim_right(symbol));
  if (sym.empty() || sym == "[unknown]") {
    std::string_view base = (dso.empty() || dso == "[unknown]") ? std::string_view("unknown") : basename(dso);
    // As stackcollapse-perf.pl, a bracketed dso is bracketed again:
    // "[[kernel.kallsyms]]", "[[vdso]]"; folded files in the wild look so.
    out += '[';
    out += base;
    if (options.raw_addresses && !address_hex.empty()) {
      out += " <";
      out += address_hex;
      out += '>';
    }
    out += ']';
  } else {
    sym = strip_argument_list(sym);
    out.reserve(sym.size() + 4);
    for (char c : sym) {
      if (c == ';')
        out += ':';  // ';' separates frames in folded text
      else if (c == '"' || c == '\'')
        continue;  // as stackcollapse-perf.pl: quotes would break consumers
      else
        out += c;
    }
  }
  if (options.annotate_kernel && is_kernel_frame(dso, address_hex))
    out += "_[k]";
  else if (options.annotate_jit && is_jit_frame(dso))
    out += "_[j]";
}

}  // namespace fg
