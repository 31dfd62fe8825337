// An array of trivially copyable values that grows without zeroing: the
// pprof export's tables of millions of entries and the DWARF unwind pool's
// copies of user stacks. Past 2 MiB, one anonymous mapping grown with
// mremap, which moves the pages instead of copying them into fresh ones as
// std::vector's doubling does (each doubling faults in and zeroes new
// memory: most of the export's kernel time on a large recording). Smaller,
// malloc'ed.
#pragma once

#include <sys/mman.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

namespace fg {

template <class T>
class GrowableArray {
  static_assert(std::is_trivially_copyable_v<T>, "GrowableArray moves its bytes with mremap");

 public:
  GrowableArray() = default;
  GrowableArray(const GrowableArray&) = delete;
  GrowableArray& operator=(const GrowableArray&) = delete;
  GrowableArray(GrowableArray&& o) noexcept { swap(o); }
  GrowableArray& operator=(GrowableArray&& o) noexcept {
    GrowableArray(std::move(o)).swap(*this);
    return *this;
  }
  ~GrowableArray() { release(); }

  size_t size() const { return size_; }
  size_t capacity() const { return bytes_ / sizeof(T); }
  bool empty() const { return size_ == 0; }
  T* data() { return data_; }
  const T* data() const { return data_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T& back() { return data_[size_ - 1]; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }

  void reserve(size_t count) {
    if (count > capacity()) grow(count);
  }
  void push_back(const T& v) {
    if (size_ == capacity()) grow(size_ + 1);
    data_[size_++] = v;
  }
  void append(const T* first, size_t count) {
    if (size_ + count > capacity()) grow(size_ + count);
    if (count) std::memcpy(static_cast<void*>(data_ + size_), first, count * sizeof(T));
    size_ += count;
  }
  // Adds count entries left as they are (not set: the caller writes them)
  // and returns the first of them.
  T* extend(size_t count) {
    if (size_ + count > capacity()) grow(size_ + count);
    T* first = data_ + size_;
    size_ += count;
    return first;
  }
  // Grows to count entries, the new ones set to fill (or drops the last ones).
  void resize(size_t count, const T& fill) {
    if (count > capacity()) grow(count);
    for (size_t i = size_; i < count; ++i) data_[i] = fill;
    size_ = count;
  }
  void clear() { size_ = 0; }
  // Gives the memory back (clear() keeps it).
  void release() {
    if (data_ && mapped()) munmap(data_, bytes_);
    else std::free(data_);
    data_ = nullptr;
    size_ = bytes_ = 0;
  }
  void swap(GrowableArray& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(bytes_, o.bytes_);
  }

 private:
  static constexpr size_t kMapped = size_t(2) << 20;  // from here on, a mapping
  bool mapped() const { return bytes_ >= kMapped; }

  // At least doubles (amortised O(1) appends). Past kMapped, multiples of
  // it (only touched pages are faulted in); the malloc'ed start is copied
  // once.
  void grow(size_t count) {
    if (count > (size_t(1) << 46) / sizeof(T)) throw std::bad_alloc();
    size_t bytes = std::max({count * sizeof(T), bytes_ * 2, size_t(4096)});
    if (bytes < kMapped) {
      void* p = std::realloc(data_, bytes);
      if (!p) throw std::bad_alloc();
      data_ = static_cast<T*>(p);
      bytes_ = bytes;
      return;
    }
    bytes = (bytes + kMapped - 1) & ~(kMapped - 1);
    void* p = mapped() ? mremap(data_, bytes_, bytes, MREMAP_MAYMOVE)
                       : mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    if (!mapped() && data_) {
      std::memcpy(p, static_cast<const void*>(data_), size_ * sizeof(T));
      std::free(data_);
    }
    // No MADV_HUGEPAGE: these arrays are mostly written once, in order, and
    // on these VMs a fresh huge page can cost 2 ms/MB to fault in (the host
    // backs it), 4 KiB pages 0.3 ms/MB; the busy.data export was 0.1 s faster
    // without it (interleaved runs, median of 8).
    data_ = static_cast<T*>(p);
    bytes_ = bytes;
  }

  T* data_ = nullptr;
  size_t size_ = 0, bytes_ = 0;
};

}  // namespace fg
