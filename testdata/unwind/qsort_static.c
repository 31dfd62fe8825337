/* Fixture workload for the DWARF unwinder (see README.md): two threads sort
   with qsort from a static glibc (no frame pointers), so the hot frame
   compare_ints is reached as main/start_thread -> qsort -> msort -> callback. */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

__attribute__((noinline)) int compare_ints(const void* a, const void* b) {
  int x = *(const int*)a, y = *(const int*)b;
  return (x > y) - (x < y);
}

__attribute__((noinline)) static void sort_round(int* v, int n, unsigned* seed) {
  for (int i = 0; i < n; i++) {
    *seed = *seed * 1103515245u + 12345u;
    v[i] = (int)(*seed >> 8);
  }
  qsort(v, n, sizeof(int), compare_ints);
  __asm__ volatile("" ::: "memory"); /* keep qsort a call, not a tail call */
}

static void* worker(void* arg) {
  double end = *(double*)arg;
  static __thread int v[8192];
  unsigned seed = (unsigned)(size_t)&seed;
  while (now() < end) sort_round(v, 8192, &seed);
  return 0;
}

int main(int argc, char** argv) {
  double end = now() + (argc > 1 ? atof(argv[1]) : 0.3);
  pthread_t t;
  pthread_create(&t, 0, worker, &end);
  worker(&end);
  pthread_join(t, 0);
  return 0;
}
