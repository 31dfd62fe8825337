// FGTOOL_FUZZ_TARGET(name, data, size) { body } defines one fuzz entry point.
// In the libFuzzer build it becomes LLVMFuzzerTestOneInput; compiled into
// tests/fuzz_regressions (FGTOOL_FUZZ_REGISTRY defined) it registers the body
// by name, so saved crash inputs replay through exactly the code that found them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

namespace fg::fuzz {

using TargetFn = void (*)(const uint8_t* data, size_t size);

inline std::map<std::string, TargetFn>& targets() {
  static std::map<std::string, TargetFn> all;
  return all;
}

struct TargetRegistration {
  TargetRegistration(const char* name, TargetFn fn) { targets()[name] = fn; }
};

}  // namespace fg::fuzz

#ifdef FGTOOL_FUZZ_REGISTRY
#define FGTOOL_FUZZ_TARGET(name, data, size)                                             \
  static void fuzz_##name(const uint8_t* data, size_t size);                             \
  static const fg::fuzz::TargetRegistration fuzz_registration_##name{#name, fuzz_##name}; \
  static void fuzz_##name(const uint8_t* data, size_t size)
#else
#define FGTOOL_FUZZ_TARGET(name, data, size)                          \
  static void fuzz_##name(const uint8_t* data, size_t size);          \
  extern "C" int LLVMFuzzerTestOneInput(const uint8_t* d, size_t n) { \
    fuzz_##name(d, n);                                                \
    return 0;                                                         \
  }                                                                   \
  static void fuzz_##name(const uint8_t* data, size_t size)
#endif
