// SparePool: buffers given back are handed out again (contents as left),
// new ones only when none is spare, and they keep their addresses while the
// pool grows; give_back from another thread is seen by the next take.
#include <gtest/gtest.h>

#include <string>
#include <thread>

#include "folded/spare_pool.h"

namespace {

TEST(SparePool, ReusesWhatComesBackAndMakesOnlyWhatIsMissing) {
  fg::SparePool<std::string> pool;
  std::string* a = pool.take();
  std::string* b = pool.take();
  EXPECT_NE(a, b);
  EXPECT_EQ(pool.made(), 2u);
  a->assign("kept");
  for (int i = 0; i < 100; ++i) pool.take();  // growing: a and b stay where they are
  pool.give_back(a);
  std::string* again = pool.take();
  EXPECT_EQ(again, a);
  EXPECT_EQ(*again, "kept");  // as given back: emptying is the caller's
  EXPECT_EQ(pool.made(), 102u);
  b->assign("b");
  std::thread([&] { pool.give_back(b); }).join();
  EXPECT_EQ(pool.take(), b);
  EXPECT_EQ(pool.made(), 102u);
}

}  // namespace
