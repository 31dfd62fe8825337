/* Workload for testdata/pprof/lines.data (testdata/pprof/README.md): a few
 * functions at known source lines, one inlined into its caller, so that
 * `fgtool export -f pprof` has file names, start lines and line numbers to
 * write from DWARF. Plain C: only libc is linked. */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

/* Called by the work functions so that they are not leaves: GCC 12 sets up
 * no frame pointer in a leaf, and a frame-pointer unwind then skips its caller. */
__attribute__((noinline)) void note(unsigned long x) { sink += x; }

/* Always inlined into mix_rows: its lines appear as an inline frame. */
static inline __attribute__((always_inline)) unsigned long mix_step(unsigned long x) {
  x ^= x >> 13;
  x *= 0x9e3779b97f4a7c15ul;
  return x ^ (x >> 29);
}

__attribute__((noinline)) unsigned long mix_rows(unsigned long seed, int n) {
  unsigned long x = seed;
  for (int i = 0; i < n; ++i) x = mix_step(x + (unsigned long)i);
  note(x);
  return x;
}

__attribute__((noinline)) unsigned long sum_squares(int n) {
  unsigned long s = 0;
  for (int i = 0; i < n; ++i) s += (unsigned long)i * (unsigned long)i;
  note(s);
  return s;
}

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char** argv) {
  double run = argc > 1 ? atof(argv[1]) : 1.0;
  double start = seconds();
  unsigned long seed = 1;
  while (seconds() - start < run) {
    seed = mix_rows(seed, 200000);
    sink += sum_squares(100000);
  }
  sink += seed;
  return 0;
}
