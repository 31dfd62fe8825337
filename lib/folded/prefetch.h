// A read prefetch that the compiler keeps. Hash tables here prefetch the
// slots of lookups they will make soon, so that the cache misses of a
// batch of lookups overlap instead of following one another.
#pragma once

namespace fg {

// GCC (12, -O2) treats a function whose only effect is __builtin_prefetch
// as pure, and deletes a call to one as dead code before inlining it:
// OpenTable::prefetch (the frame cache, the raw-stack table) and the pprof
// export's prefetch_locations compiled to nothing, and only the two
// prefetches written inside loops with effects of their own were in the
// binary (busy5.data's frame-cache lookups waited for memory one after
// another). The empty volatile asm gives the function an effect of its own,
// so its callers keep calling it; it emits no instruction.
inline void prefetch_for_read(const void* p) {
  __builtin_prefetch(p);
#if defined(__GNUC__)
  asm volatile("" : : "r"(p));
#endif
}

}  // namespace fg
