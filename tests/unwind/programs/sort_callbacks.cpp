// Test workload for the DWARF unwinder: its hot frames are callbacks reached
// through library code built without frame pointers: qsort in libc calls
// compare_ints, and a std::thread (started by libstdc++) runs std::sort with
// less_by_value. Usage: sort_callbacks [seconds=0.3]: each thread runs for
// that much of its own CPU time, so a loaded machine still yields the same
// number of cpu-clock samples (it just takes longer).
#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <thread>
#include <vector>

namespace {

double thread_cpu_seconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

void fill(std::vector<int>& v, unsigned& seed) {
  for (int& x : v) {
    seed = seed * 1103515245u + 12345u;
    x = static_cast<int>(seed >> 8);
  }
}

}  // namespace

extern "C" __attribute__((noinline)) int compare_ints(const void* a, const void* b) {
  int x = *static_cast<const int*>(a), y = *static_cast<const int*>(b);
  return (x > y) - (x < y);
}

__attribute__((noinline)) bool less_by_value(int a, int b) { return a < b; }

__attribute__((noinline)) void sort_with_qsort(std::vector<int>& v, unsigned& seed) {
  fill(v, seed);
  qsort(v.data(), v.size(), sizeof(int), compare_ints);
}

__attribute__((noinline)) void sort_with_std_sort(std::vector<int>& v, unsigned& seed) {
  fill(v, seed);
  bool (*cmp)(int, int) = less_by_value;
  std::sort(v.begin(), v.end(), cmp);
}

__attribute__((noinline)) void std_sort_worker(double seconds) {
  std::vector<int> v(20000);
  unsigned seed = 7;
  while (thread_cpu_seconds() < seconds) sort_with_std_sort(v, seed);
}

int main(int argc, char** argv) {
  double seconds = argc > 1 ? std::atof(argv[1]) : 0.3;
  std::thread worker(std_sort_worker, seconds);
  std::vector<int> v(20000);
  unsigned seed = 1;
  while (thread_cpu_seconds() < seconds) sort_with_qsort(v, seed);
  worker.join();
  return 0;
}
