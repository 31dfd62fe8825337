#include "unwind/dwarf_unwinder.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>

#include "perf/perf_records.h"
#include "symbols/debuginfo_search.h"
#include "unwind/debug_file_cfi.h"
#include "unwind/dwarf_unwinder_state.h"

namespace fg {

using namespace unwind_state;

const char* to_string(UnwindOutcome outcome) {
  switch (outcome) {
    case UnwindOutcome::complete: return "complete";
    case UnwindOutcome::no_regs: return "no user registers";
    case UnwindOutcome::unsupported_abi: return "unsupported register ABI or architecture";
    case UnwindOutcome::no_stack: return "no user stack copy";
    case UnwindOutcome::no_module: return "pc outside any readable ELF";
    case UnwindOutcome::no_cfi: return "no CFI for pc";
    case UnwindOutcome::memory_outside_copy: return "needed memory outside the stack copy";
    case UnwindOutcome::memory_outside_copy_unmarked:
      return "needed memory outside the stack copy (no marker, as in perf script)";
    case UnwindOutcome::depth_limit: return "depth limit";
    case UnwindOutcome::no_progress: return "stack did not progress";
    case UnwindOutcome::libdwfl_error: return "libdwfl error";
  }
  return "?";
}

namespace {


// libdwfl's standard lookup (build-id dirs, .gnu_debuglink), then the perf
// build-id cache layout, where `debug` sits next to the cached `elf`. A
// debug file without .debug_frame (debug_file_cfi.h) is skipped: the
// standard lookup would hand it to libdwfl (it keeps the Elf it opened to
// check the build-id) whatever this callback returns. *userdata: the
// unwinder's DebugLookup, set when the module is reported.
int find_debuginfo(Dwfl_Module* mod, void** userdata, const char* modname, Dwarf_Addr base,
                   const char* file_name, const char* debuglink_file, GElf_Word debuglink_crc,
                   char** debuginfo_file_name) {
  const auto* lookup = userdata ? static_cast<const unwind_state::DebugLookup*>(*userdata) : nullptr;
  auto skip = [&] {
    if (lookup && lookup->skipped) ++*lookup->skipped;
    return -1;
  };
  const bool every = lookup && lookup->load_every_debug_file;
  const std::string by_id = every ? std::string() : build_id_debug_file(mod, lookup ? lookup->debuginfo_path : nullptr);
  if (!by_id.empty() && !debug_file_has_cfi(by_id)) return skip();
  int fd = find_local_debuginfo(mod, userdata, modname, base, file_name, debuglink_file, debuglink_crc,
                                debuginfo_file_name, lookup ? lookup->debuginfo_path : nullptr);
  if (fd >= 0 || file_name == nullptr) return fd;
  std::string f = file_name;
  size_t slash = f.rfind('/');
  if (slash == std::string::npos || f.compare(slash + 1, std::string::npos, "elf") != 0) return -1;
  std::string debug = f.substr(0, slash + 1) + "debug";
  if (!every && !debug_file_has_cfi(debug)) return skip();  // a missing file counts as having CFI
  fd = open(debug.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) *debuginfo_file_name = strdup(debug.c_str());
  return fd;
}

}  // namespace

bool UserStackSample::reg(int k, uint64_t* value) const {
  if (k < 0 || k >= 64 || regs == nullptr || !((regs_mask >> k) & 1)) return false;
  *value = regs[__builtin_popcountll(regs_mask & ((uint64_t{1} << k) - 1))];
  return true;
}

UserStackSample UserStackSample::from(const Sample& s) {
  UserStackSample u;
  u.pid = s.pid;
  u.tid = s.tid;
  u.abi = s.regs_abi;
  u.regs = s.regs_user;
  u.regs_mask = s.regs_user_mask;
  u.stack = s.stack_user;
  u.stack_size = std::min(s.stack_user_dyn_size, s.stack_user_size);
  if (u.stack == nullptr) u.stack_size = 0;
  return u;
}

// The libdwfl thread callbacks; dwfl_arg is the ProcessState.
struct UnwindCallbacks {
  static pid_t next_thread(Dwfl* dwfl, void* dwfl_arg, void** thread_argp) {
    if (*thread_argp != nullptr) return 0;
    *thread_argp = dwfl_arg;
    return dwfl_pid(dwfl);
  }

  static bool memory_read(Dwfl*, Dwarf_Addr addr, Dwarf_Word* result, void* dwfl_arg) {
    auto* ps = static_cast<DwarfUnwinder::ProcessState*>(dwfl_arg);
    UnwindStats& stats = ps->owner->stats_;
    const UserStackSample* s = ps->sample;
    if (s == nullptr || addr >= kKernelStart || addr + sizeof(Dwarf_Word) < addr) {
      ++stats.refused_reads;
      ps->memory_failed = true;
      return false;
    }
    // The copy's last word counts as outside it, as in perf's readers
    // (access_mem and memory_read test addr + 8 >= end): a return address
    // there is where perf script cuts the stack, and so does the fold.
    if (addr >= ps->sp && addr - ps->sp < s->stack_size &&
        s->stack_size - (addr - ps->sp) > sizeof(Dwarf_Word)) {
      std::memcpy(result, s->stack + (addr - ps->sp), sizeof(Dwarf_Word));
      ++stats.stack_reads;
      return true;
    }
    uint64_t v;
    if (ps->owner->read_file_word(*ps, addr, &v)) {
      *result = v;
      ++stats.file_reads;
      return true;
    }
    ++stats.refused_reads;
    ps->memory_failed = true;
    // A read above the copy is what running out of copied stack looks like;
    // reads just below SP are stale save slots of a prologue/epilogue.
    if (addr >= ps->sp && addr - ps->sp + sizeof(Dwarf_Word) >= s->stack_size) ps->read_above_copy = true;
    return false;
  }

  static bool set_initial_registers(Dwfl_Thread* thread, void* thread_arg) {
    auto* ps = static_cast<DwarfUnwinder::ProcessState*>(thread_arg);
    const UserStackSample* s = ps->sample;
    Dwarf_Word regs[17];
    bool have[17];
    for (int i = 0; i < 17; ++i) have[i] = s->reg(kDwarfToPerf[i], &regs[i]);
    // Set runs of sampled registers; an unsampled one stays undefined rather
    // than a made-up 0.
    for (int i = 0; i < 17;) {
      if (!have[i]) {
        ++i;
        continue;
      }
      int j = i;
      while (j < 17 && have[j]) ++j;
      if (!dwfl_thread_state_registers(thread, i, j - i, regs + i)) return false;
      i = j;
    }
    dwfl_thread_state_register_pc(thread, regs[16]);
    return true;
  }

  static int frame(Dwfl_Frame* state, void* arg) {
    auto* ps = static_cast<DwarfUnwinder::ProcessState*>(arg);
    Dwarf_Addr pc;
    if (!dwfl_frame_pc(state, &pc, nullptr)) return DWARF_CB_ABORT;
    // Reads made from here on belong to unwinding this frame's caller.
    ps->memory_failed = false;
    ps->read_above_copy = false;
    ps->perf_verdict_known = false;
    if (pc == 0) {  // the outermost frame of some runtimes, or a zero return address
      // perf's unwinder keeps this frame (it prints pc - 1, ffffffffffffffff,
      // "[unknown]"): keep it too, so folds stay drop-in for perf script's.
      // It lies in no mapping, so the fold names it "[unknown]".
      if (!ps->frames->empty()) ps->frames->push_back({0, true});
      ps->stop = UnwindOutcome::complete;
      ps->stopped = true;
      return DWARF_CB_ABORT;
    }
    // Report the module first: dwfl_frame_pc's isactivation unwinds one
    // more step, which needs the CFI of this pc.
    ps->last_pc_has_module = ps->owner->ensure_module(*ps, pc);
    bool isact = true;
    if (!dwfl_frame_pc(state, &pc, &isact)) return DWARF_CB_ABORT;
    // For a frame that is not the first (nor a signal frame's caller),
    // dwfl_frame_pc just unwound its caller: if that ran past the copy, decide
    // now, while this frame's registers exist, whether perf marks the cut.
    if (!isact && ps->read_above_copy) {
      DwarfUnwinder::RegisterSource regs;
      regs.frame = state;
      ps->perf_marks = ps->owner->perf_marks_cut_short(*ps, pc - 1, regs);
      ps->perf_verdict_known = true;
    }
    Dwarf_Word sp = 0;
    bool have_sp = dwfl_frame_reg(state, 7, &sp) == 0;
    auto& frames = *ps->frames;
    if (!frames.empty() && have_sp && pc == ps->last_pc && sp == ps->last_sp) {
      ps->stop = UnwindOutcome::no_progress;
      ps->stopped = true;
      return DWARF_CB_ABORT;
    }
    frames.push_back({pc, !isact});
    ps->last_pc = pc;
    ps->last_sp = have_sp ? sp : 0;
    ps->last_is_return = !isact;
    if (frames.size() >= ps->owner->options_.max_frames) {
      ps->stop = UnwindOutcome::depth_limit;
      ps->stopped = true;
      return DWARF_CB_ABORT;
    }
    return DWARF_CB_OK;
  }
};

namespace {
const Dwfl_Thread_Callbacks kThreadCallbacks = {
    UnwindCallbacks::next_thread, nullptr, UnwindCallbacks::memory_read,
    UnwindCallbacks::set_initial_registers, nullptr, nullptr};
}  // namespace

DwarfUnwinder::DwarfUnwinder(const ProcessTable& table, DwarfUnwinderOptions options,
                             ElfPathResolver resolve_elf_path)
    : table_(table),
      options_(std::move(options)),
      resolve_elf_path_(std::move(resolve_elf_path)),
      callbacks_(std::make_unique<CallbackTable>()) {
  if (options_.max_frames == 0) options_.max_frames = 1;
  if (options_.max_cached_processes == 0) options_.max_cached_processes = 1;
  if (!resolve_elf_path_) {
    resolve_elf_path_ = [](const MapEntry& m) -> std::string {
      if (!m.is_file_backed()) return {};
      std::string p(m.path);
      struct stat st;
      return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) ? p : std::string();
    };
  }
  callbacks_->debuginfo_path = options_.debuginfo_path;
  callbacks_->debuginfo_path_ptr =
      callbacks_->debuginfo_path.empty() ? nullptr : callbacks_->debuginfo_path.data();
  callbacks_->callbacks.find_elf = dwfl_build_id_find_elf;
  callbacks_->callbacks.find_debuginfo = find_debuginfo;
  callbacks_->callbacks.section_address = dwfl_offline_section_address;
  callbacks_->callbacks.debuginfo_path = &callbacks_->debuginfo_path_ptr;
  callbacks_->lookup = unwind_state::DebugLookup{callbacks_->debuginfo_path_ptr, &stats_.debug_files_skipped,
                                                 options_.load_every_debug_file};
  elf_version(EV_CURRENT);
}

DwarfUnwinder::~DwarfUnwinder() = default;

Dwfl* DwarfUnwinder::cached_dwfl(int32_t pid) const {
  auto it = processes_.find(pid);
  return it != processes_.end() ? it->second->dwfl : nullptr;
}

Dwfl* DwarfUnwinder::dwfl_with_module(int32_t pid, uint64_t address) {
  const ProcessMaps* maps = table_.process(pid);
  if (maps == nullptr) return nullptr;
  ProcessState* ps = state_for(*maps);
  if (ps == nullptr) return nullptr;
  ensure_module(*ps, address);
  return ps->dwfl;
}

void DwarfUnwinder::forget_process(int32_t pid) { stats_.dwfl_forgotten += processes_.erase(pid); }

void DwarfUnwinder::reset_dwfl(ProcessState& ps) {
  if (ps.dwfl != nullptr) dwfl_end(ps.dwfl);
  ps.dwfl = dwfl_begin(&callbacks_->callbacks);
  ++stats_.dwfl_created;
  ps.attached = false;
  ps.dirty = false;
  ps.reported.clear();
  ps.failed.clear();
}

void DwarfUnwinder::evict_if_needed() {
  while (processes_.size() > options_.max_cached_processes) {
    auto victim = processes_.begin();
    for (auto it = processes_.begin(); it != processes_.end(); ++it)
      if (it->second->last_used < victim->second->last_used) victim = it;
    processes_.erase(victim);
    ++stats_.dwfl_evicted;
  }
}

DwarfUnwinder::ProcessState* DwarfUnwinder::state_for(const ProcessMaps& maps) {
  auto& slot = processes_[maps.pid];
  if (!slot) {
    slot = std::make_unique<ProcessState>();
    slot->owner = this;
    slot->pid = maps.pid;
    slot->incarnation = maps.incarnation;
    slot->generation_seen = maps.generation;
    reset_dwfl(*slot);
    slot->last_used = ++tick_;
    ProcessState* ps = slot.get();
    evict_if_needed();  // never evicts ps: it was used last
    stats_.dwfl_live_peak = std::max<uint64_t>(stats_.dwfl_live_peak, processes_.size());
    ps->maps = &maps;
    return ps->dwfl != nullptr ? ps : nullptr;
  }
  ProcessState& ps = *slot;
  ps.last_used = ++tick_;
  ps.maps = &maps;
  bool stale = ps.dirty || ps.incarnation != maps.incarnation;
  if (!stale && ps.generation_seen != maps.generation) {
    // The maps changed: the Dwfl is still right if every mapping we reported
    // a module for is still there (new mappings elsewhere are reported lazily).
    for (const auto& r : ps.reported)
      if (!maps.has(r.entry)) {
        stale = true;
        break;
      }
    if (!stale && !ps.failed.empty()) ps.failed.clear();  // retry: maybe a file appeared
  }
  if (stale) {
    reset_dwfl(ps);
    ++stats_.dwfl_invalidated;
    ps.incarnation = maps.incarnation;
  }
  ps.generation_seen = maps.generation;
  return ps.dwfl != nullptr ? &ps : nullptr;
}

DwarfUnwinder::ElfFile* DwarfUnwinder::elf_for(const MapEntry& m) {
  auto cached = file_of_entry_.find(&m);
  if (cached != file_of_entry_.end()) return cached->second;
  ElfFile* result = nullptr;
  // Only a file or the vdso (from perf's build-id cache) has an ELF image;
  // the resolver decides which file and whether it is there.
  if (m.is_file_backed() || m.path == "[vdso]") {
    std::string path = resolve_elf_path_(m);
    if (!path.empty()) {
      auto& f = files_[path];
      if (!f) {
        f = std::make_unique<ElfFile>();
        f->path = path;
        f->fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (f->fd >= 0) {
          if (Elf* elf = elf_begin(f->fd, ELF_C_READ_MMAP, nullptr)) {
            GElf_Ehdr ehdr;
            size_t phnum = 0;
            if (gelf_getehdr(elf, &ehdr) != nullptr && elf_getphdrnum(elf, &phnum) == 0) {
              f->type = ehdr.e_type;
              f->machine = ehdr.e_machine;
              for (size_t i = 0; i < phnum; ++i) {
                GElf_Phdr ph;
                if (gelf_getphdr(elf, static_cast<int>(i), &ph) != nullptr && ph.p_type == PT_LOAD)
                  f->loads.push_back({ph.p_offset, ph.p_vaddr, ph.p_filesz, ph.p_memsz, ph.p_align});
              }
              f->usable = !f->loads.empty() && (f->type == ET_EXEC || f->type == ET_DYN);
            }
            elf_end(elf);
          }
        }
      }
      if (f->usable) result = f.get();
    }
  }
  file_of_entry_.emplace(&m, result);
  return result;
}

bool DwarfUnwinder::ensure_module(ProcessState& ps, uint64_t pc) {
  const MapEntry* m = ps.maps->find(pc);
  if (const ProcessState::Reported* r = ps.reported_at(pc)) {
    // A reported module covers pc. Trust it only if pc's mapping is of the
    // same file: modules' address spans can overlap other mappings (ld.so).
    if (m == nullptr || m == r->entry || m->path == r->entry->path) return true;
    // Another file now lies there: the Dwfl must be rebuilt for the next
    // sample (libdwfl cannot drop a single module).
    ps.dirty = true;
    return false;
  }
  if (m == nullptr) return false;
  if (std::find(ps.failed.begin(), ps.failed.end(), m) != ps.failed.end()) return false;
  ElfFile* f = elf_for(*m);
  uint64_t bias = 0;
  if (f == nullptr || !f->bias_for(*m, pc, &bias)) {
    ps.failed.push_back(m);
    return false;
  }
  if (f->machine != EM_X86_64) {
    ps.failed.push_back(m);
    return false;
  }
  std::string name(m->path);
  dwfl_report_begin_add(ps.dwfl);
  Dwfl_Module* mod = dwfl_report_elf(ps.dwfl, name.c_str(), f->path.c_str(), -1, bias, true);
  dwfl_report_end(ps.dwfl, nullptr, nullptr);
  if (mod == nullptr) {
    ++stats_.module_report_failures;
    ps.failed.push_back(m);
    return false;
  }
  void** userdata = nullptr;
  dwfl_module_info(mod, &userdata, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
  if (userdata) *userdata = &callbacks_->lookup;  // for find_debuginfo
  ++stats_.modules_reported;
  Dwarf_Addr low = 0, high = 0;
  dwfl_module_info(mod, nullptr, &low, &high, nullptr, nullptr, nullptr, nullptr);
  if (!(pc >= low && pc < high)) {
    // The ELF does not cover pc with this bias (a stale or wrong file).
    ps.failed.push_back(m);
    return false;
  }
  ProcessState::Reported rep{low, high, m};
  auto pos = std::upper_bound(ps.reported.begin(), ps.reported.end(), low,
                              [](uint64_t a, const ProcessState::Reported& r) { return a < r.low; });
  ps.reported.insert(pos, rep);
  return true;
}

bool DwarfUnwinder::read_file_word(ProcessState& ps, uint64_t address, uint64_t* out) {
  const MapEntry* m = ps.maps->find(address);
  if (m == nullptr || address + sizeof(uint64_t) > m->end) return false;
  // Only read-only mappings: a writable one's contents differ from the file.
  if ((m->prot & (PROT_READ | PROT_EXEC)) == 0 || (m->prot & PROT_WRITE) != 0) return false;
  ElfFile* f = elf_for(*m);
  if (f == nullptr) return false;
  return pread(f->fd, out, sizeof(uint64_t), static_cast<off_t>(m->file_offset(address))) ==
         static_cast<ssize_t>(sizeof(uint64_t));
}

UnwindOutcome DwarfUnwinder::classify_failure(ProcessState& ps) {
  if (!ps.last_pc_has_module) return UnwindOutcome::no_module;
  // Does the module have CFI for the last pc (the call site for a return address)?
  uint64_t pc = ps.last_is_return ? ps.last_pc - 1 : ps.last_pc;
  bool have_cfi = false;
  if (Dwfl_Module* mod = dwfl_addrmodule(ps.dwfl, pc)) {
    Dwarf_Addr bias = 0;
    Dwarf_Frame* frame = nullptr;
    if (Dwarf_CFI* cfi = dwfl_module_eh_cfi(mod, &bias)) {
      if (dwarf_cfi_addrframe(cfi, pc - bias, &frame) == 0) have_cfi = true;
      free(frame);
      frame = nullptr;
    }
    if (!have_cfi) {
      if (Dwarf_CFI* cfi = dwfl_module_dwarf_cfi(mod, &bias)) {
        if (dwarf_cfi_addrframe(cfi, pc - bias, &frame) == 0) have_cfi = true;
        free(frame);
      }
    }
  }
  if (!have_cfi) {
    // An ELF entry point (ld.so's _start has no CFI) is where the stack
    // starts: the walk is complete, not truncated.
    if (Dwfl_Module* mod = dwfl_addrmodule(ps.dwfl, pc)) {
      Dwarf_Addr bias = 0;
      GElf_Ehdr ehdr;
      if (Elf* elf = dwfl_module_getelf(mod, &bias))
        if (gelf_getehdr(elf, &ehdr) != nullptr && ehdr.e_entry != 0 && pc - bias >= ehdr.e_entry &&
            pc - bias < ehdr.e_entry + 64)
          return UnwindOutcome::complete;
    }
    // Without CFI libdwfl walks the frame-pointer chain, as perf's unwinder
    // does; where that walk ran past the copied stack, the copy's size cut
    // the stack, and perf script shows its root-side marker there
    // (chromium's stripped code in a busy recording: 6.3 K samples).
    if (ps.read_above_copy) return UnwindOutcome::memory_outside_copy;
    return UnwindOutcome::no_cfi;
  }
  if (ps.memory_failed) return UnwindOutcome::memory_outside_copy;
  return UnwindOutcome::libdwfl_error;
}

UnwindOutcome DwarfUnwinder::unwind(const Sample& sample, std::vector<UnwindFrame>& frames) {
  UserStackSample u = UserStackSample::from(sample);
  return unwind(u, frames);
}

UnwindOutcome DwarfUnwinder::unwind(const UserStackSample& s, std::vector<UnwindFrame>& frames) {
  frames.clear();
  ++stats_.samples;
  auto finish = [&](UnwindOutcome o) {
    ++stats_.by_outcome[static_cast<size_t>(o)];
    stats_.frames += frames.size();
    return o;
  };
  if (s.abi == kRegsAbiNone) return finish(UnwindOutcome::no_regs);
  if (s.abi != kRegsAbi64) return finish(UnwindOutcome::unsupported_abi);
  uint64_t ip = 0, sp = 0;
  if (!s.reg(kPerfRegIp, &ip) || !s.reg(kPerfRegSp, &sp)) return finish(UnwindOutcome::no_regs);
  frames.push_back({ip, false});
  if (s.stack == nullptr || s.stack_size == 0) return finish(UnwindOutcome::no_stack);
  const ProcessMaps* maps = table_.process(s.pid);
  if (maps == nullptr || maps->find(ip) == nullptr) return finish(UnwindOutcome::no_module);
  ProcessState* ps = state_for(*maps);
  if (ps == nullptr) {
    last_error_ = dwfl_errmsg(-1);
    return finish(UnwindOutcome::libdwfl_error);
  }
  if (!ensure_module(*ps, ip)) {
    ElfFile* f = elf_for(*maps->find(ip));
    if (f != nullptr && f->machine != EM_X86_64) return finish(UnwindOutcome::unsupported_abi);
    return finish(UnwindOutcome::no_module);
  }
  ps->sample = &s;
  ps->sp = sp;
  if (!ps->attached) {
    // The architecture comes from the modules reported so far (x86_64 only).
    if (!dwfl_attach_state(ps->dwfl, nullptr, s.pid > 0 ? s.pid : 1, &kThreadCallbacks, ps)) {
      last_error_ = dwfl_errmsg(-1);
      ps->sample = nullptr;
      return finish(UnwindOutcome::libdwfl_error);
    }
    ps->attached = true;
  }
  frames.clear();
  ps->frames = &frames;
  ps->stopped = false;
  ps->stop = UnwindOutcome::complete;
  ps->last_pc = 0;
  ps->last_sp = 0;
  ps->last_pc_has_module = true;
  ps->last_is_return = false;
  ps->memory_failed = false;
  ps->read_above_copy = false;
  ps->perf_verdict_known = false;
  int rc = dwfl_getthread_frames(ps->dwfl, dwfl_pid(ps->dwfl), UnwindCallbacks::frame, ps);
  ps->frames = nullptr;
  UnwindOutcome outcome;
  if (ps->stopped) {
    outcome = ps->stop;
  } else if (rc == 0) {
    // libdwfl ends the stack "normally" when the return address cannot be
    // read, so a refused read above the copy in the last step means the copy
    // was too short, not that the outermost frame was reached.
    outcome = ps->read_above_copy ? UnwindOutcome::memory_outside_copy : UnwindOutcome::complete;
    if (outcome == UnwindOutcome::memory_outside_copy) {
      // Only the sample's own frame is known: its caller was unwound after
      // the frame callback, from the sample's registers.
      if (!ps->perf_verdict_known && frames.size() == 1) {
        RegisterSource regs;
        regs.sample = &s;
        ps->perf_marks = perf_marks_cut_short(*ps, ip, regs);
        ps->perf_verdict_known = true;
      }
      if (ps->perf_verdict_known && !ps->perf_marks) outcome = UnwindOutcome::memory_outside_copy_unmarked;
    }
  } else {
    if (frames.empty()) frames.push_back({ip, false});
    std::string message = dwfl_errmsg(-1);  // before classify_failure's own libdw calls
    outcome = classify_failure(*ps);
    if (outcome == UnwindOutcome::libdwfl_error) last_error_ = std::move(message);
  }
  ps->sample = nullptr;
  return finish(outcome);
}

}  // namespace fg
