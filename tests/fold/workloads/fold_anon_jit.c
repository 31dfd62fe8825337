// Test workload: code run from anonymous executable memory with no
// /tmp/perf-PID.map, as a JIT without perf support leaves it. perf names such
// frames by the dso /tmp/perf-PID.map; the fold must too.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

int main(int argc, char** argv) {
  long n = argc > 1 ? atol(argv[1]) : 400000000L;
  // x86-64: loop: dec %rdi; jnz loop; ret
  static const unsigned char code[] = {0x48, 0xff, 0xcf, 0x75, 0xfb, 0xc3};
  void* mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return 1;
  memcpy(mem, code, sizeof code);
  void (*spin)(long) = (void (*)(long))mem;
  for (int i = 0; i < 4; i++) spin(n);
  return 0;
}
