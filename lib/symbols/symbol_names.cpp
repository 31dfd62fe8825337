#include "symbols/symbol_names.h"

#include <cxxabi.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

namespace fg {
namespace {

bool is_ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$';
}

bool has_at(std::string_view s, size_t i, std::string_view what) {
  return i <= s.size() && s.substr(i, what.size()) == what;
}

// Demangler prefixes of special names (thunks, vtables, guards). libiberty prints
// their inner encoding with parameters even without DMGL_PARAMS, so they stay whole.
constexpr std::string_view kSpecialPrefixes[] = {
    "non-virtual thunk to ", "virtual thunk to ",   "covariant return thunk to ",
    "typeinfo for ",         "typeinfo name for ",  "typeinfo fn for ",
    "vtable for ",           "VTT for ",            "construction vtable for ",
    "guard variable for ",   "TLS init function for ", "TLS wrapper function for ",
    "reference temporary ",  "hidden alias for ",   "transaction clone for ",
    "non-transaction clone for ", "java Class for ", "java resource ",
};

// If an `operator` keyword starts at i (at an identifier boundary), returns the index
// just past the operator's own spelling so its brackets are not taken as nesting;
// otherwise returns i.
size_t skip_operator_name(std::string_view s, size_t i) {
  // Called at every character of every name shown: the first letter is
  // tested before the word (the word's memcmp call there was a tenth of
  // the symbol tables' building on a busy recording).
  if (i >= s.size() || s[i] != 'o') return i;
  if (!has_at(s, i, "operator") || (i > 0 && is_ident_char(s[i - 1]))) return i;
  size_t j = i + 8;
  if (j < s.size() && is_ident_char(s[j])) return i;  // e.g. "operators"
  if (has_at(s, j, "()") || has_at(s, j, "[]")) return j + 2;
  static constexpr std::string_view kPunct = "<>=!+-*/%^&|~,";
  if (j < s.size() && kPunct.find(s[j]) != std::string_view::npos) {
    // "operator->*", "operator<<=", "operator<=>"; a following template list is
    // printed after a space ("operator< <int>"), so the run ends there.
    while (j < s.size() && kPunct.find(s[j]) != std::string_view::npos) ++j;
    return j;
  }
  for (std::string_view word : {std::string_view(" new[]"), std::string_view(" delete[]"),
                                std::string_view(" new"), std::string_view(" delete")}) {
    if (has_at(s, j, word) && (j + word.size() == s.size() || !is_ident_char(s[j + word.size()])))
      return j + word.size();
  }
  return j;  // conversion operator or literal operator: the rest is scanned normally
}

// Strips trailing " [clone .x]" groups.
std::string_view drop_clone_suffixes(std::string_view s) {
  for (;;) {
    if (s.size() < 9 || s.back() != ']') return s;
    size_t open = s.rfind(" [clone ");
    if (open == std::string_view::npos || s.find(']', open) != s.size() - 1) return s;
    s = s.substr(0, open);
  }
}

std::string_view drop_function_qualifiers(std::string_view s) {
  static constexpr std::string_view kQualifiers[] = {" const", " volatile", " &&", " &",
                                                     " noexcept", " restrict", " transaction_safe"};
  for (bool changed = true; changed;) {
    changed = false;
    for (std::string_view q : kQualifiers) {
      if (s.size() > q.size() && s.substr(s.size() - q.size()) == q) {
        s.remove_suffix(q.size());
        changed = true;
      }
    }
  }
  return s;
}

struct FreeDeleter {
  void operator()(char* p) const { std::free(p); }
};

}  // namespace

std::string strip_params(std::string_view demangled) {
  for (std::string_view p : kSpecialPrefixes)
    if (has_at(demangled, 0, p)) return std::string(drop_clone_suffixes(demangled));

  std::string_view s = drop_function_qualifiers(drop_clone_suffixes(demangled));
  if (s.empty() || s.back() != ')') return std::string(s);

  // Forward scan: depth over (), <>, [], {} with operator spellings skipped; find
  // the depth-0 '(' whose group closes at the very end, and the depth-0 spaces
  // before it (the last one, before any `operator`, ends a return type).
  int depth = 0;
  size_t group_open = std::string_view::npos;
  size_t last_space = std::string_view::npos;
  bool seen_operator = false;
  for (size_t i = 0; i < s.size();) {
    size_t after = skip_operator_name(s, i);
    if (after != i) {
      if (depth == 0) seen_operator = true;
      i = after;
      continue;
    }
    char c = s[i];
    switch (c) {
      case '(':
        if (depth == 0) group_open = i;
        ++depth;
        break;
      case '<': case '[': case '{':
        ++depth;
        break;
      case ')': case '>': case ']': case '}':
        if (depth > 0) --depth;
        break;
      case ' ':
        if (depth == 0 && !seen_operator) last_space = i;
        break;
      default:
        break;
    }
    ++i;
  }
  if (depth != 0 || group_open == std::string_view::npos || group_open == 0)
    return std::string(s);
  if (s.substr(group_open) == "(anonymous namespace)") return std::string(s);
  std::string_view name = s.substr(0, group_open);
  if (last_space != std::string_view::npos && last_space < group_open)
    name = name.substr(last_space + 1);
  return std::string(name);
}

std::string demangle_rust_legacy(std::string_view m) {
  // _ZN <len><ident>... 17h<16 hex> E [.suffix]
  if (!has_at(m, 0, "_ZN")) return {};
  size_t i = 3;
  std::vector<std::string_view> parts;
  while (i < m.size() && m[i] != 'E') {
    if (!std::isdigit(static_cast<unsigned char>(m[i]))) return {};
    size_t len = 0;
    while (i < m.size() && std::isdigit(static_cast<unsigned char>(m[i]))) {
      len = len * 10 + static_cast<size_t>(m[i] - '0');
      if (len > m.size()) return {};
      ++i;
    }
    if (len == 0 || i + len > m.size()) return {};
    parts.push_back(m.substr(i, len));
    i += len;
  }
  if (i >= m.size() || parts.size() < 2) return {};
  if (i + 1 != m.size() && m[i + 1] != '.') return {};
  std::string_view hash = parts.back();
  if (hash.size() != 17 || hash[0] != 'h') return {};
  for (char c : hash.substr(1))
    if (!std::isxdigit(static_cast<unsigned char>(c))) return {};
  parts.pop_back();

  static const struct { std::string_view code, text; } kEscapes[] = {
      {"$SP$", "@"}, {"$BP$", "*"}, {"$RF$", "&"}, {"$LT$", "<"}, {"$GT$", ">"},
      {"$LP$", "("}, {"$RP$", ")"}, {"$C$", ","}, {"$u7e$", "~"}, {"$u20$", " "},
      {"$u27$", "'"}, {"$u3d$", "="}, {"$u5b$", "["}, {"$u5d$", "]"}, {"$u7b$", "{"},
      {"$u7d$", "}"}, {"$u3b$", ";"}, {"$u2b$", "+"}, {"$u21$", "!"}, {"$u22$", "\""},
  };
  std::string out;
  for (size_t p = 0; p < parts.size(); ++p) {
    if (p) out += "::";
    std::string_view part = parts[p];
    if (has_at(part, 0, "_$")) part.remove_prefix(1);
    for (size_t k = 0; k < part.size();) {
      if (part[k] == '$') {
        bool matched = false;
        for (const auto& e : kEscapes) {
          if (has_at(part, k, e.code)) {
            out += e.text;
            k += e.code.size();
            matched = true;
            break;
          }
        }
        if (!matched) return {};  // not Rust after all
      } else if (has_at(part, k, "..")) {
        out += "::";
        k += 2;
      } else {
        out += part[k++];
      }
    }
  }
  return out;
}

std::string demangle_without_params(std::string_view mangled) {
  if (!has_at(mangled, 0, "_Z")) return std::string(mangled);
  std::string rust = demangle_rust_legacy(mangled);
  if (!rust.empty()) return rust;
  // A symbol version ("@@GLIBCXX_3.4") is not part of the mangling.
  std::string_view core = mangled.substr(0, mangled.find('@'));
  std::string buf(core);
  int status = 0;
  std::unique_ptr<char, FreeDeleter> full(abi::__cxa_demangle(buf.c_str(), nullptr, nullptr, &status));
  if (status != 0 || !full) return std::string(mangled);
  return strip_params(full.get());
}

// Whether two mangled names are variants of one constructor or destructor
// (C1/C2/C3, D0/D1/D2: the complete and base object ones share an address
// in most C++ libraries), which demangle to the same text: the same
// length and underscores, a full tie, the earlier kept. Demangling both of
// every such pair was 21 ms of a busy fold's first 110 ms (libtorch).
// The test: one differing digit 0-3, after the same C or D and before what
// ends a constructor's name (E, I or B), the rest equal; and no "SyS"
// anywhere (the tie rule's exception). A digit that is a name's length
// passes only if one of the two names is not a valid mangling.
bool ctor_dtor_variants(const char* a, const char* b) {
  if (a[0] != '_' || a[1] != 'Z' || b[0] != '_' || b[1] != 'Z') return false;
  size_t i = 2;
  while (a[i] && a[i] == b[i]) ++i;
  if (!a[i] || !b[i]) return false;  // equal, or one is a prefix of the other
  auto variant = [](char c) { return c >= '0' && c <= '3'; };
  if (!variant(a[i]) || !variant(b[i]) || (a[i - 1] != 'C' && a[i - 1] != 'D')) return false;
  if (a[i + 1] != 'E' && a[i + 1] != 'I' && a[i + 1] != 'B') return false;
  if (std::strcmp(a + i + 1, b + i + 1) != 0) return false;
  return !std::strstr(a, "SyS");
}

}  // namespace fg
