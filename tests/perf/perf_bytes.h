// Little-endian byte helpers for the perf tests that build or damage
// perf.data images in a std::string: read a field, overwrite one, append one.
#pragma once

#include <cstddef>
#include <cstring>
#include <string>

namespace fg::test {

template <typename T>
T get(const std::string& s, size_t off) {
  T v;
  std::memcpy(&v, s.data() + off, sizeof v);
  return v;
}
template <typename T>
void set(std::string& s, size_t off, T v) {
  std::memcpy(&s[off], &v, sizeof v);
}
template <typename T>
void put(std::string& s, T v) {
  s.append(reinterpret_cast<const char*>(&v), sizeof v);
}

}  // namespace fg::test
