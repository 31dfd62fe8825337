// Tiny workload for the perf.data reader fixtures: a fixed call tree
// (main -> outer -> middle -> leaf) burning CPU, optionally sleeping between
// bursts so that sched_switch / --switch-events have something to record.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

static volatile unsigned long sink;

__attribute__((noipa)) unsigned long leaf(unsigned long n) {
  unsigned long x = 0;
  for (unsigned long i = 0; i < n; ++i) x = x * 6364136223846793005ul + i;
  return x;
}
__attribute__((noipa)) unsigned long middle(unsigned long n) { return leaf(n) ^ leaf(n / 2); }
__attribute__((noipa)) unsigned long outer(unsigned long n) { return middle(n) + 1; }

int main(int argc, char** argv) {
  // argv[1]: total loop iterations; argv[2] == "sleep": 10 bursts with 5 ms sleeps.
  unsigned long n = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 100000000ul;
  bool sleep = argc > 2 && std::strcmp(argv[2], "sleep") == 0;
  int bursts = sleep ? 10 : 1;
  for (int b = 0; b < bursts; ++b) {
    sink = outer(n / bursts);
    if (sleep) usleep(5000);
  }
  std::printf("%lu\n", static_cast<unsigned long>(sink) & 1);
  return 0;
}
