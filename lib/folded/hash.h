// The project's one family of fast hashes, for the hot paths' OpenTable
// (open_table.h): interning frame names, finding a node's child, keying raw
// stacks and frame caches, where std::hash and std::unordered_map cost more
// than the parsing itself. Not for anything security-relevant.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace fg::detail {

inline uint64_t mix64(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

inline uint64_t hash_bytes(const char* p, size_t n) {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ (n * 0x100000001b3ull);
  while (n >= 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    h = (h ^ v) * 0xbf58476d1ce4e5b9ull;
    h ^= h >> 29;
    p += 8;
    n -= 8;
  }
  if (n) {
    uint64_t v = 0;
    std::memcpy(&v, p, n);
    h = (h ^ v) * 0x94d049bb133111ebull;
    h ^= h >> 31;
  }
  return mix64(h);
}

// Two words (an address and a map generation, a parent and a frame).
inline uint64_t hash_pair(uint64_t a, uint64_t b) { return mix64(a * 0x9e3779b97f4a7c15ull ^ mix64(b + 0x632be59bd9b4e019ull)); }

// A run of words (a raw stack). Four independent multiply lanes, mixed at the
// end: a single chain of dependent multiplies cost ~7 cycles per word, on
// every sample. WordLanes: those lanes, 256 bits of state.
struct WordLanes {
  uint64_t a, b, c, d;
};
inline WordLanes word_lanes(const uint64_t* words, uint32_t count) {
  constexpr uint64_t k0 = 0x9e3779b97f4a7c15ull, k1 = 0xc2b2ae3d27d4eb4full, k2 = 0x165667b19e3779f9ull,
                     k3 = 0xff51afd7ed558ccdull;
  uint64_t a = k0 ^ count, b = k1, c = k2, d = k3;
  uint32_t i = 0;
  for (; i + 4 <= count; i += 4) {
    a = (a ^ words[i]) * k3;
    b = (b ^ words[i + 1]) * k0;
    c = (c ^ words[i + 2]) * k1;
    d = (d ^ words[i + 3]) * k2;
    a ^= a >> 29;
    b ^= b >> 31;
    c ^= c >> 27;
    d ^= d >> 33;
  }
  for (; i < count; ++i) {
    a = (a ^ words[i]) * k3;
    a ^= a >> 29;
    uint64_t t = a;  // spread the tail over the lanes too
    a = b;
    b = t;
  }
  return WordLanes{a, b, c, d};
}

inline uint64_t hash_words(const uint64_t* words, uint32_t count) {
  constexpr uint64_t k0 = 0x9e3779b97f4a7c15ull, k1 = 0xc2b2ae3d27d4eb4full, k2 = 0x165667b19e3779f9ull,
                     k3 = 0xff51afd7ed558ccdull;
  const WordLanes l = word_lanes(words, count);
  // A final avalanche: the low bits pick the slot.
  return mix64(l.a ^ (l.b * k0) ^ ((l.c * k1) >> 7) ^ (l.d * k2) ^ ((l.d >> 13) * k3));
}

// hash_words, and in *second another 64 bits of the same lanes, combined
// another way (a fingerprint's check: KnownStacks).
inline uint64_t hash_words_pair(const uint64_t* words, uint32_t count, uint64_t* second) {
  constexpr uint64_t k0 = 0x9e3779b97f4a7c15ull, k1 = 0xc2b2ae3d27d4eb4full, k2 = 0x165667b19e3779f9ull,
                     k3 = 0xff51afd7ed558ccdull;
  const WordLanes l = word_lanes(words, count);
  *second = mix64((l.a * k2) ^ (l.b >> 11) ^ (l.c * k3) ^ ((l.c >> 17) * k0) ^ (l.d * k1));
  return mix64(l.a ^ (l.b * k0) ^ ((l.c * k1) >> 7) ^ (l.d * k2) ^ ((l.d >> 13) * k3));
}

}  // namespace fg::detail
