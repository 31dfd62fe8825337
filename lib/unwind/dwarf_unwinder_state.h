// The DWARF unwinder's internal state, shared by its translation units
// (dwarf_unwinder.cpp: libdwfl wiring and the unwind loop; perf_cut_short.cpp:
// perf's rule for its cut-short marker). Not a public header: owned, like the
// unwinder, by the thread that calls DwarfUnwinder::unwind.
#pragma once

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "unwind/dwarf_unwinder.h"

namespace fg {
namespace unwind_state {

// x86 perf register numbers (arch/x86/include/uapi/asm/perf_regs.h).
inline constexpr int kPerfRegSp = 7, kPerfRegIp = 8;
// x86_64 DWARF register i (0 rax, 1 rdx, 2 rcx, 3 rbx, 4 rsi, 5 rdi, 6 rbp,
// 7 rsp, 8-15 r8-r15, 16 return address = rip) is perf register kDwarfToPerf[i].
inline constexpr int kDwarfToPerf[17] = {0, 3, 2, 1, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23, 8};
inline constexpr uint64_t kKernelStart = 0xffff800000000000ull;  // x86_64 canonical upper half

// What find_debuginfo (libdwfl's callback) reads through a reported
// module's userdata: the unwinder's debuginfo path (null: libdwfl's
// default) and where it counts the debug files it did not hand over.
struct DebugLookup {
  const char* debuginfo_path = nullptr;
  uint64_t* skipped = nullptr;
  bool load_every_debug_file = false;  // DwarfUnwinderOptions'
};

}  // namespace unwind_state

struct DwarfUnwinder::CallbackTable {
  std::string debuginfo_path;
  char* debuginfo_path_ptr = nullptr;
  Dwfl_Callbacks callbacks{};
  unwind_state::DebugLookup lookup;  // every reported module's userdata
};

struct DwarfUnwinder::ElfFile {
  std::string path;
  int fd = -1;
  bool usable = false;
  uint16_t type = 0;     // ET_EXEC, ET_DYN
  uint16_t machine = 0;  // EM_X86_64, ...
  struct Load {
    uint64_t offset, vaddr, filesz, memsz, align;
  };
  std::vector<Load> loads;
  ~ElfFile() {
    if (fd >= 0) close(fd);
  }

  // Load bias of the module for `address` in mapping m: from the PT_LOAD that
  // holds the address's exact file offset (not start - pgoff, which is wrong
  // when p_vaddr != p_offset, as with lld and mold).
  bool bias_for(const MapEntry& m, uint64_t address, uint64_t* bias) const {
    if (type == ET_EXEC) {
      *bias = 0;
      return true;
    }
    uint64_t file_off = m.file_offset(address);
    for (const Load& l : loads) {
      if (file_off >= l.offset && file_off - l.offset < l.filesz) {
        *bias = address - (file_off - l.offset + l.vaddr);
        return true;
      }
    }
    // Not inside any segment's file bytes (a gap or bss): fall back to the
    // segment whose page-aligned range holds it.
    for (const Load& l : loads) {
      uint64_t align = l.align > 1 ? l.align : 4096;
      uint64_t off0 = l.offset & ~(align - 1);
      if (file_off >= off0 && file_off < l.offset + std::max(l.filesz, l.memsz)) {
        *bias = address - (file_off - l.offset + l.vaddr);
        return true;
      }
    }
    return false;
  }
};

struct DwarfUnwinder::ProcessState {
  DwarfUnwinder* owner = nullptr;
  int32_t pid = 0;
  Dwfl* dwfl = nullptr;
  bool attached = false;
  bool dirty = false;  // a module conflicted with the maps: rebuild before the next sample
  uint64_t incarnation = 0;
  uint64_t generation_seen = 0;
  uint64_t last_used = 0;
  const ProcessMaps* maps = nullptr;
  struct Reported {
    uint64_t low, high;
    const MapEntry* entry;  // the mapping it was reported for
  };
  std::vector<Reported> reported;  // sorted by low
  std::vector<const MapEntry*> failed;  // mappings whose ELF could not be reported

  // The sample being unwound.
  const UserStackSample* sample = nullptr;
  uint64_t sp = 0;
  std::vector<UnwindFrame>* frames = nullptr;
  UnwindOutcome stop = UnwindOutcome::complete;
  bool stopped = false;  // frame callback chose to stop (stop holds why)
  uint64_t last_pc = 0;
  uint64_t last_sp = 0;
  bool last_pc_has_module = true;
  bool last_is_return = false;
  bool memory_failed = false;    // a read was refused in the current step
  bool read_above_copy = false;  // ... at an address above the copied stack
  // Whether perf would print its "[unknown]" marker where the current step
  // failed, once known (perf_marks_cut_short); decided in the frame callback
  // while the frame's registers are still at hand.
  bool perf_verdict_known = false;
  bool perf_marks = true;

  ~ProcessState() {
    if (dwfl != nullptr) dwfl_end(dwfl);
  }

  const Reported* reported_at(uint64_t address) const {
    auto it = std::upper_bound(reported.begin(), reported.end(), address,
                               [](uint64_t a, const Reported& r) { return a < r.low; });
    if (it == reported.begin()) return nullptr;
    --it;
    return address < it->high ? &*it : nullptr;
  }
};

// Register values of the frame being unwound from: a libdwfl frame state, or
// the sample's own registers for the initial frame.
struct DwarfUnwinder::RegisterSource {
  Dwfl_Frame* frame = nullptr;
  const UserStackSample* sample = nullptr;
  bool get(unsigned dwarf_reg, uint64_t* value) const {
    if (frame != nullptr) {
      Dwarf_Word v = 0;
      if (dwfl_frame_reg(frame, dwarf_reg, &v) != 0) return false;
      *value = v;
      return true;
    }
    return sample != nullptr && dwarf_reg < 17 && sample->reg(unwind_state::kDwarfToPerf[dwarf_reg], value);
  }
};

}  // namespace fg
