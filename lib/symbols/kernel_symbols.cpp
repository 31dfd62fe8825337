#include "symbols/kernel_symbols.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <unordered_map>

#include "diagnostics/input_error.h"
#include "symbols/alias_choice.h"

namespace fg {
namespace {

struct Parsed {
  uint64_t start, end;
  std::string_view name, module;
  char type;
};

uint64_t page_roundup(uint64_t v) { return (v + 4095) & ~uint64_t(4095); }

// perf's choose_best_symbol (compare_aliases) for kallsyms entries: true if
// a beats b. On a full tie the later entry stays; symbols__fixup_end has
// already run, so of a group only the last is sized and it wins anyway, as
// in perf.
bool better(const KernelSymbol& a, char at, const KernelSymbol& b, char bt) {
  // kallsyms2elf_binding: only 'W' is weak; an upper-case type is global.
  auto facts = [](const KernelSymbol& s, char t) {
    const bool weak = t == 'W';
    return AliasFacts{s.end > s.start, weak, !weak && std::isupper(static_cast<unsigned char>(t)) != 0, s.name};
  };
  // perf compares the whole line tail, module included; same module within a group.
  return compare_aliases(facts(a, at), facts(b, bt)) > 0;
}

// One "ADDRESS TYPE NAME[\tMODULE]" line of kallsyms.
struct KallsymsLine {
  uint64_t addr;
  char type;
  std::string_view name, module;
};

// Throws InputError naming line `lineno` of `source_name` when malformed.
KallsymsLine parse_kallsyms_line(std::string_view line, size_t lineno, const std::string& source_name) {
  // addr
  size_t i = 0;
  uint64_t addr = 0;
  int digits = 0;
  while (i < line.size()) {
    // By hand rather than isxdigit (a locale-aware call per character,
    // visible when parsing the 120k lines of /proc/kallsyms).
    const char c = line[i];
    int v;
    if (c >= '0' && c <= '9') v = c - '0';
    else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f') v = (c | 0x20) - 'a' + 10;
    else break;
    if (digits >= 16) throw InputError::at_line(source_name, lineno, "kallsyms: address longer than 64 bits");
    addr = addr * 16 + static_cast<uint64_t>(v);
    ++digits;
    ++i;
  }
  if (digits == 0 || i + 3 > line.size() || line[i] != ' ' || line[i + 2] != ' ')
    throw InputError::at_line(source_name, lineno,
                              "kallsyms: expected 'ADDRESS TYPE NAME', got '" +
                                  std::string(line.substr(0, 80)) + "'");
  char type = line[i + 1];
  std::string_view rest = line.substr(i + 3);
  std::string_view name = rest, module;
  size_t tab = rest.find('\t');
  if (tab != std::string_view::npos) {
    name = rest.substr(0, tab);
    module = rest.substr(tab + 1);
    if (module.size() >= 2 && module.front() == '[' && module.back() == ']')
      module = module.substr(1, module.size() - 2);
  }
  if (name.empty()) throw InputError::at_line(source_name, lineno, "kallsyms: empty symbol name");
  return KallsymsLine{addr, type, name, module};
}

}  // namespace

KallsymsTable KallsymsTable::parse(std::string_view text, const std::string& source_name) {
  KallsymsTable t;
  std::vector<Parsed> parsed;
  parsed.reserve(text.size() / 40);  // about 45 bytes a line
  size_t lines = 0, nonzero = 0, total = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = text.substr(pos, eol - pos);
    pos = eol + 1;
    ++lines;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    KallsymsLine l = parse_kallsyms_line(line, lines, source_name);
    const uint64_t addr = l.addr;
    const char type = l.type;
    ++total;
    if (addr != 0) ++nonzero;
    char up = static_cast<char>(type & ~0x20);  // ASCII upper case: only letters matter below
    if (up != 'T' && up != 'W' && up != 'D' && up != 'B') continue;
    parsed.push_back({addr, addr, l.name, l.module, type});
  }
  if (total > 0 && nonzero == 0) {
    t.all_zero_ = true;
    return t;
  }
  // /proc/kallsyms is nearly sorted already; skip the sort when it is.
  auto by_start = [](const Parsed& a, const Parsed& b) { return a.start < b.start; };
  if (!std::is_sorted(parsed.begin(), parsed.end(), by_start))
    std::stable_sort(parsed.begin(), parsed.end(), by_start);
  // symbols__fixup_end(is_kallsyms = true), on the parsed entries in place
  // (one 120k-entry array fewer to allocate and fault in).
  for (size_t k = 0; k + 1 < parsed.size(); ++k) {
    bool a_mod = !parsed[k].module.empty(), b_mod = !parsed[k + 1].module.empty();
    parsed[k].end = a_mod != b_mod ? page_roundup(parsed[k].start + 4096) : parsed[k + 1].start;
  }
  if (!parsed.empty()) parsed.back().end = page_roundup(parsed.back().start) + 4096;
  // symbols__fixup_duplicate.
  t.symbols_.reserve(parsed.size());
  char kept_type = 0;
  for (const Parsed& p : parsed) {
    KernelSymbol sym{p.start, p.end, p.name, p.module};
    if (!t.symbols_.empty() && t.symbols_.back().start == p.start) {
      if (!better(t.symbols_.back(), kept_type, sym, p.type)) {
        t.symbols_.back() = sym;
        kept_type = p.type;
      }
      continue;
    }
    t.symbols_.push_back(sym);
    kept_type = p.type;
  }
  t.keep_names();
  return t;
}

// Copies the kept symbols' names (and each module once) out of the kallsyms
// text, which its caller frees after parse() returns: the text is 5-8 MB on this
// project's machines, the kept names 3 MB, and a fold's peak memory comes late.
void KallsymsTable::keep_names() {
  std::unordered_map<std::string_view, size_t> modules;
  size_t bytes = 0;
  for (const KernelSymbol& s : symbols_) {
    bytes += s.name.size();
    if (!s.module.empty() && modules.emplace(s.module, 0).second) bytes += s.module.size();
  }
  names_ = std::make_unique<char[]>(bytes ? bytes : 1);
  char* out = names_.get();
  auto copy = [&out](std::string_view v) {
    std::memcpy(out, v.data(), v.size());
    std::string_view kept(out, v.size());
    out += v.size();
    return kept;
  };
  for (auto& [module, offset] : modules) offset = size_t(copy(module).data() - names_.get());
  for (KernelSymbol& s : symbols_) {
    s.name = copy(s.name);
    if (!s.module.empty()) s.module = std::string_view(names_.get() + modules.at(s.module), s.module.size());
  }
}

const KernelSymbol* KallsymsTable::find(uint64_t address) const {
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), address,
                             [](uint64_t v, const KernelSymbol& s) { return v < s.start; });
  if (it == symbols_.begin()) return nullptr;
  const KernelSymbol& s = *(it - 1);
  if (address < s.end || address == s.start) return &s;
  return nullptr;
}

}  // namespace fg
