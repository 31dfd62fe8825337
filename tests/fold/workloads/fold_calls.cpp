// Test workload for the fold tests: a known call shape with templates, an
// anonymous namespace, a lambda, recursion, an inlined helper, a named worker
// thread, a qsort callback (libc has no frame pointers: DWARF unwinding must
// see through it), and optional naps so one recording holds on- and off-CPU.
#include <pthread.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace model {
template <typename T>
struct Layer {
  __attribute__((noinline)) static T forward(const std::vector<T>& a, int reps) {
    T s = 0;
    for (int r = 0; r < reps; r++)
      for (T x : a) s = s * T(0.999) + x;
    return s;
  }
};

namespace {
__attribute__((noinline)) double make_input(const std::vector<double>& a) {
  double s = 0;
  for (int r = 0; r < 300; r++)
    for (double x : a) s += x > 0.5 ? x : 0.0;
  return s;
}
}  // namespace

__attribute__((noinline)) double deep(const std::vector<double>& a, int depth) {
  if (depth == 0) return make_input(a);
  return deep(a, depth - 1) + 1.0;
}

volatile long compares = 0;
extern "C" __attribute__((noinline)) int compare_keys(const void* a, const void* b) {
  compares = compares + 1;
  double x = *static_cast<const double*>(a), y = *static_cast<const double*>(b);
  return (x > y) - (x < y);
}

__attribute__((noinline)) void sort_batch(std::vector<double>& keys) {
  for (size_t i = 0; i < keys.size(); i++) keys[i] = std::fmod(double(i) * 7919.0, 10007.0);
  std::qsort(keys.data(), keys.size(), sizeof(double), compare_keys);
}

__attribute__((noinline)) void nap(int ms) { usleep(ms * 1000); }
}  // namespace model

int main(int argc, char** argv) {
  int steps = argc > 1 ? std::atoi(argv[1]) : 40;
  const bool naps = argc > 2 && std::strcmp(argv[2], "naps") == 0;
  std::vector<double> v(20000, 0.75);
  std::vector<float> f(20000, 0.5f);
  std::vector<double> keys(200000);
  double total = 0;
  std::thread worker([&] {
    pthread_setname_np(pthread_self(), "layer worker");
    total += model::Layer<float>::forward(f, 100 * steps);
  });
  auto step = [&](int i) {
    total += model::deep(v, 4 + i % 3);
    model::sort_batch(keys);
    if (naps) model::nap(5);
  };
  for (int i = 0; i < steps; i++) step(i);
  worker.join();
  std::printf("%f %ld\n", total, long(model::compares));
  return 0;
}
