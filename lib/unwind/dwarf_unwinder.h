// Unwinds the user stack of `--call-graph dwarf` samples (REGS_USER + a copy
// of the user stack) with elfutils libdwfl, using one cached Dwfl per process
// whose modules are reported lazily from the ProcessTable's maps.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "unwind/process_table.h"

typedef struct Dwfl Dwfl;

namespace fg {

struct Sample;  // lib/perf/perf_records.h

// One unwound frame, leaf first. The first frame is the interrupted IP; every
// later frame with is_return_address set holds a return address, so symbolise
// pc - 1 for it (a call that ends a function would otherwise name the next one).
struct UnwindFrame {
  uint64_t pc = 0;
  bool is_return_address = false;
};

// Why an unwind ended. Everything but `complete` means the stack is partial
// (or empty) and the caller keeps what was produced.
enum class UnwindOutcome : uint8_t {
  complete,             // reached the outermost frame (CFI says no caller, or pc 0)
  no_regs,              // abi 0 (kernel thread) or IP/SP missing from REGS_USER
  unsupported_abi,      // abi 1 (32-bit task) or an unknown abi / architecture
  no_stack,             // no STACK_USER bytes: only the IP is known
  no_module,            // a pc in no file we could open (anon/JIT/missing ELF)
  no_cfi,               // the module has no CFI for the pc
  memory_outside_copy,  // CFI needed memory outside the copied stack (usual for deep stacks)
  // The same, where perf script ends the stack without its "[unknown]" marker:
  // its unwinder could not even compute where the caller's return address is
  // (see perf_marks_cut_short in dwarf_unwinder.cpp). The stack is partial all
  // the same; only the fold's root-side marker is left out, to match perf.
  memory_outside_copy_unmarked,
  depth_limit,          // max_frames reached
  no_progress,          // the same pc and SP twice: a loop in the CFI
  libdwfl_error,        // anything else; last_error() has libdwfl's message
};
constexpr size_t kUnwindOutcomeCount = static_cast<size_t>(UnwindOutcome::libdwfl_error) + 1;
const char* to_string(UnwindOutcome outcome);

// perf_sample_regs_abi
constexpr uint64_t kRegsAbiNone = 0, kRegsAbi32 = 1, kRegsAbi64 = 2;

// What the unwinder needs from one SAMPLE; views into the record's bytes.
struct UserStackSample {
  int32_t pid = 0;
  int32_t tid = 0;
  uint64_t abi = kRegsAbiNone;
  const uint64_t* regs = nullptr;  // compacted: only the registers set in regs_mask, in bit order
  uint64_t regs_mask = 0;          // attr.sample_regs_user
  const uint8_t* stack = nullptr;  // copy of the user stack starting at SP
  uint64_t stack_size = 0;         // valid bytes (dyn_size, clamped to the copy's size)

  // The value of perf register k, if it was sampled.
  bool reg(int k, uint64_t* value) const;
  static UserStackSample from(const Sample& s);
};

struct UnwindStats {
  uint64_t samples = 0;           // unwind() calls
  uint64_t by_outcome[kUnwindOutcomeCount] = {};
  uint64_t frames = 0;            // frames produced (including the leaf IP)
  uint64_t dwfl_created = 0;      // dwfl_begin calls
  uint64_t dwfl_invalidated = 0;  // recreated because the maps changed under reported modules
  uint64_t dwfl_evicted = 0;      // dropped to stay within max_cached_processes
  uint64_t dwfl_forgotten = 0;    // dropped at the process's exit (forget_process)
  uint64_t dwfl_live_peak = 0;    // most Dwfl instances alive at once (summed over a pool's unwinders)
  // Debug files not handed to libdwfl: without .debug_frame they add no CFI,
  // and libdw would decompress them once per process (find_debuginfo).
  uint64_t debug_files_skipped = 0;
  uint64_t modules_reported = 0;
  uint64_t module_report_failures = 0;
  uint64_t stack_reads = 0, file_reads = 0, refused_reads = 0;

  uint64_t complete() const { return by_outcome[0]; }
  uint64_t truncated() const { return samples - complete(); }
};

struct DwarfUnwinderOptions {
  unsigned max_frames = 127;           // like kernel.perf_event_max_stack
  size_t max_cached_processes = 1024;  // Dwfl instances kept (least recently used dropped)
  // libdwfl's debuginfo search path; empty means ":.debug:/usr/lib/debug".
  std::string debuginfo_path;
  // Unwinding takes a separate debug file only for its .debug_frame (and
  // skips those without one: debug_file_cfi.h). True hands libdwfl every
  // debug file, so that names looked up through cached_dwfl() include its
  // symbol table (the unwinding tests' harness).
  bool load_every_debug_file = false;
};

// Not thread-safe; use one instance per worker thread (each has its own Dwfl
// caches). Several instances may share one ProcessTable while it is not
// being modified.
class DwarfUnwinder {
 public:
  // The file to open for a mapping (build-id cache, --symfs, ...); "" if
  // none. The default uses the recorded path when it exists.
  using ElfPathResolver = std::function<std::string(const MapEntry&)>;

  explicit DwarfUnwinder(const ProcessTable& table, DwarfUnwinderOptions options = {},
                         ElfPathResolver resolve_elf_path = {});
  ~DwarfUnwinder();
  DwarfUnwinder(const DwarfUnwinder&) = delete;
  DwarfUnwinder& operator=(const DwarfUnwinder&) = delete;

  // Unwinds one sample into frames (cleared first; reuse the vector to avoid
  // allocations). Returns why it stopped; frames holds what was found.
  UnwindOutcome unwind(const UserStackSample& sample, std::vector<UnwindFrame>& frames);
  UnwindOutcome unwind(const Sample& sample, std::vector<UnwindFrame>& frames);

  // libdwfl's message for the last libdwfl_error outcome.
  const std::string& last_error() const { return last_error_; }
  const UnwindStats& stats() const { return stats_; }

  // The cached Dwfl of pid (modules reported so far), or nullptr; valid until
  // the next unwind(). For symbolising in tests and diagnostics (with
  // DwarfUnwinderOptions::load_every_debug_file for debug files' symbols).
  Dwfl* cached_dwfl(int32_t pid) const;
  // Makes sure a module is reported for address in pid's Dwfl and returns it.
  Dwfl* dwfl_with_module(int32_t pid, uint64_t address);
  // Drops pid's Dwfl (e.g. after its EXIT) to free memory.
  void forget_process(int32_t pid);

  struct ProcessState;  // one per pid: the Dwfl and what was reported to it
  struct ElfFile;       // one per resolved path: fd and program headers

 private:
  friend struct UnwindCallbacks;
  ProcessState* state_for(const ProcessMaps& maps);
  void reset_dwfl(ProcessState& ps);
  bool ensure_module(ProcessState& ps, uint64_t pc);
  ElfFile* elf_for(const MapEntry& m);
  bool read_file_word(ProcessState& ps, uint64_t address, uint64_t* out);
  UnwindOutcome classify_failure(ProcessState& ps);
  struct RegisterSource;
  bool perf_marks_cut_short(ProcessState& ps, uint64_t cfi_pc, const RegisterSource& regs);
  bool perf_read_word(ProcessState& ps, uint64_t address, uint64_t* out);
  void evict_if_needed();

  const ProcessTable& table_;
  DwarfUnwinderOptions options_;
  ElfPathResolver resolve_elf_path_;
  struct CallbackTable;  // Dwfl_Callbacks + the debuginfo path it points at
  std::unique_ptr<CallbackTable> callbacks_;
  std::unordered_map<int32_t, std::unique_ptr<ProcessState>> processes_;
  std::unordered_map<std::string, std::unique_ptr<ElfFile>> files_;
  std::unordered_map<const MapEntry*, ElfFile*> file_of_entry_;
  uint64_t tick_ = 0;
  std::string last_error_;
  UnwindStats stats_;
};

}  // namespace fg
