// A frame-pointer chain that leaves every mapping, made on purpose: while
// spinning, %rbp points at a fake chain of 60 frames whose return addresses
// (0x1000, 0x1010, ...) lie in no mapping, as happens when a frame-pointer
// walk enters code built without frame pointers. `perf record -g` then
// records 60 garbage caller addresses; perf script prints each as [unknown].
// Built with -O2 -fno-omit-frame-pointer; x86-64 only (the test skips elsewhere).
#include <cstdint>
#include <cstdio>
#include <cstdlib>

static uint64_t fake_chain[2 * 61];

__attribute__((noinline)) void spin_on_fake_chain(long iterations) {
  for (int i = 0; i < 60; ++i) {
    fake_chain[2 * i] = reinterpret_cast<uint64_t>(&fake_chain[2 * (i + 1)]);  // saved rbp: next frame
    fake_chain[2 * i + 1] = 0x1000 + 16 * uint64_t(i);                          // return address: unmapped
  }
  fake_chain[2 * 60] = 0;
  fake_chain[2 * 60 + 1] = 0;
#if defined(__x86_64__)
  asm volatile(
      "push %%rbp\n\t"
      "mov %1, %%rbp\n\t"
      "1:\n\t"
      "dec %0\n\t"
      "jnz 1b\n\t"
      "pop %%rbp\n\t"
      : "+r"(iterations)
      : "r"(&fake_chain[0])
      : "cc", "memory");
#endif
}

__attribute__((noinline)) void normal_work(long iterations) {
  volatile long x = 0;
  for (long i = 0; i < iterations; ++i) x = x + i;
}

int main(int argc, char** argv) {
  long n = argc > 1 ? std::atol(argv[1]) : 300000000L;
  spin_on_fake_chain(n);
  normal_work(n / 4);
  std::puts("done");
  return 0;
}
