// Workload for the collapse fixtures: C++ names that stress frame tidying
// (templates with function-type arguments, an anonymous namespace, lambdas,
// std::function, operator()), one sleeping phase for off-CPU recordings.
// Build: g++ -O2 -g -fno-omit-frame-pointer -pthread workload.cpp -o workload
#include <unistd.h>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

namespace demo {
template <typename T>
struct Kernel {
  __attribute__((noinline)) static T gemm(const std::vector<T>& a, int reps) {
    T s = 0;
    for (int r = 0; r < reps; r++)
      for (T x : a) s = s * T(0.999) + x;
    return s;
  }
};

static inline double decode_inline(const std::vector<double>& a, int r) {
  double s = 0;
  for (double x : a) s += std::sqrt(x + r);
  return s;
}
__attribute__((noinline)) double run_callback(const std::function<void(int)>& cb, int n) {
  for (int i = 0; i < n; i++) cb(i);
  return 0;
}
}  // namespace demo

namespace {
__attribute__((noinline)) double make_input(const std::vector<double>& a, int reps) {
  double s = 0;
  for (int r = 0; r < reps; r++) s += demo::decode_inline(a, r);
  return s;
}
}  // namespace

int main(int argc, char** argv) {
  int scale = argc > 1 ? std::atoi(argv[1]) : 100;
  bool naps = argc > 2;
  std::vector<double> v(20000, 0.75);
  std::vector<float> f(20000, 0.5f);
  double total = 0;
  std::function<void(int)> step = [&](int i) {
    total += demo::Kernel<float>::gemm(f, 3);
    total += make_input(v, 1 + i % 2);
    if (naps) usleep(2000);
  };
  for (int k = 0; k < scale; k++) demo::run_callback(step, 4);
  std::printf("%g\n", total);
  return 0;
}
