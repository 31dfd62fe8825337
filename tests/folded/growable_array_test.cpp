// GrowableArray (lib/folded/growable_array.h): the pprof export's tables
// and the DWARF unwind pool's sample copies.
#include <gtest/gtest.h>

#include <cstdint>

#include "folded/growable_array.h"

namespace fg {
namespace {

// Small arrays are malloc'ed, large ones a mapping grown by mremap: the
// values survive both moves.
TEST(GrowableArray, KeepsItsValuesFromMallocToMappingAndGrowingIt) {
  GrowableArray<uint32_t> a;
  for (uint32_t i = 0; i < 100; ++i) a.push_back(i * 3);
  const uint32_t more[] = {7, 8, 9};
  a.append(more, 3);
  a.resize(4'000'000, 5);  // 16 MB: past the 2 MiB switch, then mremap
  for (uint32_t i = 4'000'000; i < 9'000'000; ++i) a.push_back(i);
  ASSERT_EQ(a.size(), 9'000'000u);
  for (uint32_t i = 0; i < 100; ++i) ASSERT_EQ(a[i], i * 3);
  EXPECT_EQ(a[100], 7u);
  EXPECT_EQ(a[102], 9u);
  EXPECT_EQ(a[103], 5u);
  EXPECT_EQ(a[3'999'999], 5u);
  for (uint32_t i = 4'000'000; i < 9'000'000; i += 999) ASSERT_EQ(a[i], i);
  GrowableArray<uint32_t> b(std::move(a));
  EXPECT_EQ(b.back(), 8'999'999u);
  b.release();
  EXPECT_TRUE(b.empty());
}

// extend() adds entries the caller writes, across the switch to a mapping.
TEST(GrowableArray, ExtendLeavesTheNewEntriesToTheCaller) {
  GrowableArray<uint64_t> a;
  a.push_back(1);
  uint64_t* w = a.extend(3);
  EXPECT_EQ(w, a.data() + 1);
  for (uint64_t i = 0; i < 3; ++i) w[i] = 10 + i;
  w = a.extend(1'000'000);  // 8 MB: past the 2 MiB switch
  ASSERT_EQ(a.size(), 1'000'004u);
  w[999'999] = 42;
  EXPECT_EQ(a[0], 1u);
  EXPECT_EQ(a[3], 12u);
  EXPECT_EQ(a.back(), 42u);
  a.clear();
  EXPECT_EQ(a.extend(2), a.data());  // the memory is kept
  EXPECT_EQ(a.size(), 2u);
}

}  // namespace
}  // namespace fg
