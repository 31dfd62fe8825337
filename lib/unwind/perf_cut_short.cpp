// perf script's rule for its root-side "[unknown]" marker on DWARF stacks
// that ran past the copied user stack, re-evaluated from the frame's CFI:
// see perf_marks_cut_short. Part of DwarfUnwinder (same owning thread).
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include <cstdlib>
#include <cstring>
#include <memory>

#include "unwind/dwarf_unwinder_state.h"

namespace fg {

namespace {

enum class Eval { ok, error, unmodelled };

// A CFA or register rule's DWARF expression, evaluated as libunwind would:
// registers through `reg`, memory through `read_word` (perf_read_word).
// Only the ops x86_64 CFI uses; anything else is `unmodelled`.
template <class Reg, class ReadWord>
Eval evaluate_ops(const Dwarf_Op* ops, size_t nops, uint64_t cfa, Reg&& reg, ReadWord&& read_word, uint64_t* result,
                  bool* is_value) {
  uint64_t stack[16];
  size_t n = 0;
  *is_value = false;
  for (size_t i = 0; i < nops; ++i) {
    const Dwarf_Op& op = ops[i];
    uint8_t a = op.atom;
    if (n >= 15) return Eval::unmodelled;
    if (a >= DW_OP_breg0 && a <= DW_OP_breg31) {
      stack[n++] = reg(a - DW_OP_breg0) + op.number;
    } else if (a >= DW_OP_reg0 && a <= DW_OP_reg31) {
      stack[n++] = reg(a - DW_OP_reg0);
      *is_value = true;
    } else if (a >= DW_OP_lit0 && a <= DW_OP_lit31) {
      stack[n++] = a - DW_OP_lit0;
    } else {
      switch (a) {
        case DW_OP_bregx: stack[n++] = reg(static_cast<unsigned>(op.number)) + op.number2; break;
        case DW_OP_regx:
          stack[n++] = reg(static_cast<unsigned>(op.number));
          *is_value = true;
          break;
        case DW_OP_call_frame_cfa: stack[n++] = cfa; break;
        case DW_OP_const1u: case DW_OP_const1s: case DW_OP_const2u: case DW_OP_const2s:
        case DW_OP_const4u: case DW_OP_const4s: case DW_OP_const8u: case DW_OP_const8s:
        case DW_OP_constu: case DW_OP_consts:
          stack[n++] = op.number;
          break;
        case DW_OP_dup:
          if (n < 1) return Eval::unmodelled;
          stack[n] = stack[n - 1];
          ++n;
          break;
        case DW_OP_plus_uconst:
          if (n < 1) return Eval::unmodelled;
          stack[n - 1] += op.number;
          break;
        case DW_OP_deref: {
          if (n < 1) return Eval::unmodelled;
          uint64_t v = 0;
          if (!read_word(stack[n - 1], &v)) return Eval::error;
          stack[n - 1] = v;
          break;
        }
        case DW_OP_plus: case DW_OP_minus: case DW_OP_and: case DW_OP_or: case DW_OP_mul: {
          if (n < 2) return Eval::unmodelled;
          uint64_t b = stack[--n], x = stack[n - 1];
          stack[n - 1] = a == DW_OP_plus ? x + b : a == DW_OP_minus ? x - b : a == DW_OP_and ? (x & b)
                       : a == DW_OP_or ? (x | b) : x * b;
          break;
        }
        case DW_OP_stack_value: *is_value = true; break;
        default: return Eval::unmodelled;
      }
    }
  }
  if (n != 1) return Eval::unmodelled;
  *result = stack[0];
  return Eval::ok;
}

}  // namespace

// perf script's view of a word outside the register-relative copy. Debian's
// perf unwinds with libunwind (unwind-libunwind-local.c, access_mem): the copy
// is [sp, sp + size) but its last word already counts as outside; outside it
// the word is read from the file of the mapping holding it, and when a
// mapping holds it but nothing can be read there (the [stack], anonymous
// memory) the read *succeeds* with 0: access_dso_mem's positive error code,
// which libunwind takes for success. Only an address in no mapping (or one
// that wraps) is an error.
bool DwarfUnwinder::perf_read_word(ProcessState& ps, uint64_t address, uint64_t* out) {
  const UserStackSample* s = ps.sample;
  if (s == nullptr || address + sizeof(uint64_t) < address) return false;
  if (address >= ps.sp && address - ps.sp < s->stack_size &&
      s->stack_size - (address - ps.sp) > sizeof(uint64_t)) {
    std::memcpy(out, s->stack + (address - ps.sp), sizeof(uint64_t));
    return true;
  }
  const MapEntry* m = ps.maps->find(address);
  if (m == nullptr) return false;
  *out = 0;
  if (ElfFile* f = elf_for(*m)) {
    uint64_t v = 0;
    if (address + sizeof(uint64_t) <= m->end &&
        pread(f->fd, &v, sizeof v, static_cast<off_t>(m->file_offset(address))) == static_cast<ssize_t>(sizeof v))
      *out = v;
  }
  return true;
}

// Whether perf script marks a stack whose unwinding ran past the copied user
// stack with its root-side "ffffffffffffffff [unknown]" frame. libunwind (see
// perf_read_word) evaluates the caller's CFA and return address with 0 for
// memory it cannot read: when both can be computed the return address "reads"
// as 0 and perf prints pc 0 - 1, the marker; when computing them needs a word
// in no mapping or wraps (a CFA of 0 from a stack-realigning function's
// DW_OP_deref, minus 8), unw_step fails and the stack just ends; an undefined
// return address or %rbp ends it cleanly too. libdwfl instead stops without
// a frame in every case, so the rule is re-evaluated here from the CFI of
// cfi_pc (the pc libdwfl looked up) and the frame's registers. Anything this
// does not model (no CFI, an unusual DWARF op) keeps the marker.
bool DwarfUnwinder::perf_marks_cut_short(ProcessState& ps, uint64_t cfi_pc, const RegisterSource& regs) {
  Dwfl_Module* mod = dwfl_addrmodule(ps.dwfl, cfi_pc);
  if (mod == nullptr) return true;
  Dwarf_Frame* frame = nullptr;
  Dwarf_Addr bias = 0;
  Dwarf_CFI* cfi = dwfl_module_eh_cfi(mod, &bias);
  if (cfi == nullptr || dwarf_cfi_addrframe(cfi, cfi_pc - bias, &frame) != 0) {
    frame = nullptr;
    cfi = dwfl_module_dwarf_cfi(mod, &bias);
    if (cfi == nullptr || dwarf_cfi_addrframe(cfi, cfi_pc - bias, &frame) != 0) return true;
  }
  std::unique_ptr<Dwarf_Frame, void (*)(void*)> owned(frame, free);

  // A register libdwfl could not restore is one libunwind would read from a
  // mapped but unreadable slot: 0.
  auto reg = [&](unsigned r) {
    uint64_t v = 0;
    return regs.get(r, &v) ? v : 0;
  };
  auto read_word = [&](uint64_t address, uint64_t* out) { return perf_read_word(ps, address, out); };
  auto eval = [&](const Dwarf_Op* o, size_t no, uint64_t cfa_value, uint64_t* result, bool* is_value) {
    return evaluate_ops(o, no, cfa_value, reg, read_word, result, is_value);
  };

  Dwarf_Op* ops = nullptr;
  size_t nops = 0;
  if (dwarf_frame_cfa(frame, &ops, &nops) != 0) return true;
  uint64_t cfa = 0;
  bool is_value = false;
  Eval e = eval(ops, nops, 0, &cfa, &is_value);
  if (e != Eval::ok) return e == Eval::unmodelled;

  Dwarf_Op ops_mem[3];
  // libunwind ends the stack without a frame when %rbp's rule is undefined.
  if (dwarf_frame_register(frame, 6, ops_mem, &ops, &nops) == 0 && nops == 0 && ops == ops_mem) return false;
  int ra = dwarf_frame_info(frame, nullptr, nullptr, nullptr);
  if (ra < 0 || dwarf_frame_register(frame, ra, ops_mem, &ops, &nops) != 0) return true;
  if (nops == 0) return ops != ops_mem;  // undefined: the outermost frame, no marker
  uint64_t where = 0;
  e = eval(ops, nops, cfa, &where, &is_value);
  if (e != Eval::ok) return e == Eval::unmodelled;
  uint64_t return_address = where;
  if (!is_value && !perf_read_word(ps, where, &return_address)) return false;
  // 0 is the marker; anything else is a frame perf shows and libdwfl could
  // not read (a word it refuses): keep the marker, the closest fold.
  return true;
}

}  // namespace fg
