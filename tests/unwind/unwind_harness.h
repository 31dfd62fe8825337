// Shared by the DWARF unwinding tests: reads a perf.data with lib/perf, keeps
// a ProcessTable, unwinds every REGS_USER+STACK_USER sample, and symbolises
// the frames with libdwfl on the unwinder's own Dwfl; plus a parser for the
// `perf script` oracle, whose user frames are compared address by address.
#pragma once

#include <elfutils/libdwfl.h>

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "perf/perf_data_reader.h"
#include "unwind/dwarf_unwinder.h"
#include "unwind/process_table.h"

namespace fg::test {

struct UnwoundFrame {
  uint64_t pc = 0;
  bool is_return_address = false;
  std::string dso;       // the mapping's recorded path
  uint64_t offset = 0;   // file offset of pc (what perf script prints for user DSOs)
  std::string symbol;    // libdwfl's name for pc (pc - 1 for return addresses), or ""
};

struct UnwoundSample {
  int32_t pid = 0, tid = 0;
  uint64_t time = 0;
  UnwindOutcome outcome = UnwindOutcome::complete;
  std::vector<UnwoundFrame> frames;

  bool has_symbol_containing(const std::string& part) const {
    for (const auto& f : frames)
      if (f.symbol.find(part) != std::string::npos) return true;
    return false;
  }
  // Index of the first frame whose symbol contains part, or -1.
  int index_of(const std::string& part) const {
    for (size_t i = 0; i < frames.size(); ++i)
      if (frames[i].symbol.find(part) != std::string::npos) return static_cast<int>(i);
    return -1;
  }
};

class UnwindingCollector : public RecordHandler {
 public:
  // Frames are named through the unwinder's Dwfl, so it loads every debug
  // file (their symbol tables name libc's local functions).
  explicit UnwindingCollector(DwarfUnwinderOptions options = {},
                              DwarfUnwinder::ElfPathResolver resolve = {})
      : unwinder(table, with_every_debug_file(std::move(options)), std::move(resolve)) {}

  // libdwfl's addrname scans the whole symtab per call: too slow for big
  // DSOs (libtorch), so tools that only compare addresses can turn it off.
  bool symbolise = true;

  void on_mmap(const MmapRecord& r) override { table.apply(r); }
  void on_comm(const CommRecord& r) override { table.apply(r); }
  void on_fork(const TaskRecord& r) override { table.apply_fork(r); }
  void on_exit(const TaskRecord& r) override { table.apply_exit(r); }
  void on_sample(const Sample& s) override {
    if (!s.attr || !s.attr->has(sample_bits::REGS_USER)) return;
    pids.insert(s.pid);
    UnwoundSample u;
    u.pid = s.pid;
    u.tid = s.tid;
    u.time = s.time;
    u.outcome = unwinder.unwind(s, frames_);
    for (const UnwindFrame& f : frames_) {
      UnwoundFrame o;
      o.pc = f.pc;
      o.is_return_address = f.is_return_address;
      if (const MapEntry* m = table.find(s.pid, f.pc)) {
        o.dso = std::string(m->path);
        o.offset = m->file_offset(f.pc);
      }
      uint64_t lookup = f.is_return_address ? f.pc - 1 : f.pc;
      if (!symbolise) {
        u.frames.push_back(std::move(o));
        continue;
      }
      if (Dwfl* d = unwinder.dwfl_with_module(s.pid, lookup)) {
        if (Dwfl_Module* mod = dwfl_addrmodule(d, lookup)) {
          if (const char* name = dwfl_module_addrname(mod, lookup)) o.symbol = name;
        }
      }
      u.frames.push_back(std::move(o));
    }
    samples.push_back(std::move(u));
  }

  static DwarfUnwinderOptions with_every_debug_file(DwarfUnwinderOptions o) {
    o.load_every_debug_file = true;
    return o;
  }

  ProcessTable table;
  DwarfUnwinder unwinder;
  std::vector<UnwoundSample> samples;
  std::set<int32_t> pids;

 private:
  std::vector<UnwindFrame> frames_;
};

// One sample of `perf script -F tid,time,ip,sym,dso --ns --no-inline`, user
// frames only.
struct OracleFrame {
  uint64_t address = 0;  // map-relative (file offset) for user DSOs
  std::string symbol, dso;
};
using OracleKey = std::pair<int32_t, uint64_t>;  // tid, time in ns

// Header lines start at column 0 ("13723   813.981367302: "), frames with a tab.
inline std::map<OracleKey, std::vector<OracleFrame>> parse_perf_script(const std::string& text) {
  std::map<OracleKey, std::vector<OracleFrame>> out;
  std::istringstream in(text);
  std::string line;
  std::vector<OracleFrame>* current = nullptr;
  while (std::getline(in, line)) {
    if (line.empty()) {
      current = nullptr;
      continue;
    }
    if (line[0] != '\t') {
      std::istringstream h(line);
      int32_t tid = 0;
      std::string t;
      if (!(h >> tid >> t)) continue;
      size_t dot = t.find('.');
      if (dot == std::string::npos) continue;
      uint64_t ns = std::stoull(t.substr(0, dot)) * 1000000000ull +
                    std::stoull(t.substr(dot + 1, 9));
      current = &out[{tid, ns}];
      continue;
    }
    if (current == nullptr) continue;
    size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos) continue;
    std::string rest = line.substr(first);
    size_t sp = rest.find(' ');
    if (sp == std::string::npos) continue;
    OracleFrame f;
    f.address = std::stoull(rest.substr(0, sp), nullptr, 16);
    size_t open = rest.rfind(" (");
    f.symbol = rest.substr(sp + 1, open == std::string::npos ? std::string::npos : open - sp - 1);
    if (open != std::string::npos && rest.back() == ')')
      f.dso = rest.substr(open + 2, rest.size() - open - 3);
    if (f.dso == "[kernel.kallsyms]" || f.address >= 0xffff800000000000ull) continue;
    current->push_back(std::move(f));
  }
  return out;
}

struct Agreement {
  uint64_t compared_samples = 0;
  uint64_t oracle_frames = 0;  // user frames perf script printed for matched samples
  uint64_t matching = 0;       // of those, frames with our file offset at the same position
  std::vector<std::string> first_mismatches;
  double ratio() const { return oracle_frames ? double(matching) / double(oracle_frames) : 0; }
};

// Frame-by-frame comparison by (position, file offset, dso basename).
inline Agreement compare_with_oracle(const std::vector<UnwoundSample>& ours,
                                     const std::map<OracleKey, std::vector<OracleFrame>>& oracle) {
  Agreement a;
  auto base = [](const std::string& p) {
    size_t s = p.rfind('/');
    return s == std::string::npos ? p : p.substr(s + 1);
  };
  for (const UnwoundSample& s : ours) {
    auto it = oracle.find({s.tid, s.time});
    if (it == oracle.end()) continue;
    ++a.compared_samples;
    const auto& want = it->second;
    a.oracle_frames += want.size();
    bool reported = false;
    for (size_t i = 0; i < want.size(); ++i) {
      // perf's unwinders (libunwind and libdw alike) print pc - 1 for return
      // addresses; ours keeps the pc and flags it.
      bool ok = i < s.frames.size() &&
                s.frames[i].offset - (s.frames[i].is_return_address ? 1 : 0) == want[i].address &&
                base(s.frames[i].dso) == base(want[i].dso);
      if (ok) {
        ++a.matching;
      } else if (!reported && a.first_mismatches.size() < 5) {
        reported = true;
        std::ostringstream m;
        m << "tid " << s.tid << " time " << s.time << " frame " << i << ": perf " << std::hex
          << want[i].address << " " << want[i].symbol << " (" << want[i].dso << "), ours ";
        if (i < s.frames.size())
          m << s.frames[i].offset << " " << s.frames[i].symbol << " (" << s.frames[i].dso << ")";
        else
          m << "nothing (" << to_string(s.outcome) << ")";
        a.first_mismatches.push_back(m.str());
      }
    }
  }
  return a;
}

}  // namespace fg::test
