// A call that is its function's last instruction: caller_fn calls the
// noreturn spin_forever, so the return address in caller_fn's frame is the
// first byte after caller_fn (padding, or the next function). perf script
// names that frame by the return address; fgtool fold --call-sites by the
// call. Usage: fold_noreturn [ITERATIONS]
#include <stdlib.h>

volatile unsigned long sink;

__attribute__((noreturn, noinline)) void spin_forever(unsigned long n) {
  for (unsigned long i = 0; i < n; ++i) sink += i;
  exit(0);
}

__attribute__((noinline)) void caller_fn(unsigned long n) {
  sink = 1;
  spin_forever(n);
}

__attribute__((noinline)) void next_fn(void) { sink = 2; }

int main(int argc, char** argv) {
  unsigned long n = argc > 1 ? strtoul(argv[1], 0, 10) : 300000000;
  if (n == 7) next_fn();
  caller_fn(n);
}
