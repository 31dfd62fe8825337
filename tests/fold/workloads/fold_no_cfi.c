/* Built without CFI (no .eh_frame entries for its code, no -g) and with
   frame pointers: only a frame-pointer walk unwinds it, and the recursion
   (150 frames of about 80 bytes) outgrows a 4 KiB user-stack copy, so the
   walk runs past the copy as perf's does (fold_live_test.cpp). */
#include <stdlib.h>
volatile unsigned long sink;
__attribute__((noinline)) unsigned long spin(unsigned long n) { unsigned long s = 0; for (unsigned long i = 0; i < n; i++) s += i * i; return s; }
__attribute__((noinline)) unsigned long dive(int depth, unsigned long n) {
  volatile char pad[48];
  pad[0] = (char)depth;
  if (depth == 0) return spin(n) + pad[0];
  return dive(depth - 1, n) + pad[0];
}
int main(int argc, char** argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 300;
  for (int r = 0; r < reps; r++) sink += dive(150, 200000);
  return 0;
}
