// DWARF stacks cut short by the end of the user-stack copy, in the two ways
// perf script (Debian's perf, unwinding with libunwind) shows them. Both
// functions put 64 KiB of alloca'd, never-touched stack between the leaf and
// their own saved registers, so any copy (at most 65528 bytes) ends below
// them while the [stack] mapping still holds them:
//  - with_marker: CFA = %rbp + 16. libunwind reads the return address from
//    the mapped but uncopied slot as 0 and perf prints its root-side
//    "ffffffffffffffff [unknown]" frame.
//  - without_marker: a 64-byte aligned local makes GCC realign the stack
//    through a DRAP register, so the CFA is DW_OP_breg6 -8; DW_OP_deref. That
//    word reads as 0 too, the return address would lie at 0 - 8, the read
//    wraps and fails, and perf ends the stack without the marker (the
//    libtorch OpenMP outlined functions of issue 14 do the same).
// Built with -O2 -fno-omit-frame-pointer -fno-stack-clash-protection (probing
// would touch, and so copy, every page); x86-64 only (the test skips elsewhere).
// Usage: fold_cut_short [MILLISECONDS of CPU time, default 1500]
#include <alloca.h>
#include <stdlib.h>
#include <time.h>

#define GAP (64 * 1024)

volatile unsigned long sink;

__attribute__((noinline)) unsigned long spin(unsigned long n) {
  unsigned long s = 0;
  for (unsigned long i = 0; i < n; ++i) s += i * i ^ (s >> 3);
  return s;
}

__attribute__((noinline)) unsigned long with_marker(unsigned long n) {
  char* gap = alloca(GAP);
  gap[0] = 1;  // only the lowest bytes are touched
  __asm__ volatile("" : : "r"(gap) : "memory");
  return spin(n) + (unsigned long)gap[0];
}

__attribute__((noinline)) unsigned long without_marker(unsigned long n) {
  _Alignas(64) char aligned[64];
  char* gap = alloca(GAP);
  gap[0] = 1;
  aligned[0] = 2;
  __asm__ volatile("" : : "r"(gap), "r"(aligned) : "memory");
  return spin(n) + (unsigned long)gap[0] + (unsigned long)aligned[0];
}

static double cpu_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(int argc, char** argv) {
  double ms = argc > 1 ? atof(argv[1]) : 1500;
  double start = cpu_ms();
  while (cpu_ms() - start < ms) {
    sink += with_marker(200000);
    sink += without_marker(200000);
  }
  return 0;
}
