// An allocator for big hash tables, arenas and trees: blocks of
// 2 MiB and more are mmap'ed and marked MADV_HUGEPAGE, because lookups at
// random places in tens of MB otherwise miss the TLB on nearly every access
// (Debian's default THP mode is "madvise": nothing is huge unless asked).
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <new>

namespace fg {

template <typename T>
struct HugePageAllocator {
  using value_type = T;
  static constexpr size_t kHuge = size_t(2) << 20;

  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) {}

  T* allocate(size_t n) {
    if (n > size_t(-1) / sizeof(T)) throw std::bad_array_new_length();
    size_t bytes = n * sizeof(T);
    if (bytes < kHuge) return static_cast<T*>(::operator new(bytes));
    void* p = mmap(nullptr, round_up(bytes), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    madvise(p, round_up(bytes), MADV_HUGEPAGE);  // a hint: fine if THP is off
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) {
    size_t bytes = n * sizeof(T);
    if (bytes < kHuge) ::operator delete(p);
    else munmap(p, round_up(bytes));
  }
  template <typename U>
  bool operator==(const HugePageAllocator<U>&) const { return true; }
  template <typename U>
  bool operator!=(const HugePageAllocator<U>&) const { return false; }

 private:
  static size_t round_up(size_t bytes) { return (bytes + kHuge - 1) & ~(kHuge - 1); }
};

}  // namespace fg
