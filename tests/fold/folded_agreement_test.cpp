// The oracle scorer itself: what it forgives (perf's run of [unknown] frames
// where fgtool writes one marker) and what it must still catch.
#include "folded_agreement.h"

#include <gtest/gtest.h>

namespace fg::test {
namespace {

TEST(FoldedAgreement, ARunOfUnknownFramesCountsAsOne) {
  // perf script's shape for a thread switched out on its way back from
  // clone3 (the parent's frame pointer, garbage frames), against fgtool's.
  std::string perf = "t;[unknown];[unknown];[unknown];clone3;schedule 30\nt;main;work 70\n";
  std::string ours = "t;[unknown];clone3;schedule 30\nt;main;work 70\n";
  Agreement a = folded_agreement(perf, ours);
  EXPECT_DOUBLE_EQ(a.percent, 100.0) << a.worst;
}

TEST(FoldedAgreement, UnknownFramesInDifferentPlacesStillDiffer) {
  // Merging runs must not hide a marker in a different position, nor a name
  // that merely contains "[unknown]".
  Agreement moved = folded_agreement("t;[unknown];a;b 50\nt;c 50\n", "t;a;[unknown];b 50\nt;c 50\n");
  EXPECT_DOUBLE_EQ(moved.percent, 50.0);
  Agreement named = folded_agreement("t;x[unknown];[unknown] 10\n", "t;x[unknown] 10\n");
  EXPECT_DOUBLE_EQ(named.percent, 0.0);
}

}  // namespace
}  // namespace fg::test
