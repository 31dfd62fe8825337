// DwarfUnwindPool (lib/fold/dwarf_unwind_pool.h) on a real DWARF recording
// (testdata/fold/dwarf_static.data, binary under testdata/fold/symfs): the
// batched, multi-threaded unwinding of deep copies gives exactly what one
// unwinder gives on the original samples, batch after batch, with the
// helper threads reused.
#include <gtest/gtest.h>

#include <filesystem>

#include "fold/dwarf_unwind_pool.h"
#include "perf/perf_data_reader.h"
#include "test_support.h"

namespace fg {
namespace {

std::string symfs_path(const MapEntry& m) {
  std::string p = test::testdata("fold/symfs") + std::string(m.path);
  return std::filesystem::exists(p) ? p : std::string();
}

// Unwinds every sample twice: at once with a lone unwinder, and queued in
// the pool; the pool's batch is unwound before the table changes.
class PoolVersusSerial : public RecordHandler {
 public:
  explicit PoolVersusSerial(unsigned unwinders)
      : serial_(table_, {}, symfs_path), pool_(table_, {}, symfs_path, unwinders) {}
  void on_mmap(const MmapRecord& r) override {
    flush();
    table_.apply(r);
  }
  void on_comm(const CommRecord& r) override {
    flush();
    table_.apply(r);
  }
  void on_fork(const TaskRecord& r) override {
    flush();
    table_.apply_fork(r);
  }
  void on_sample(const Sample& s) override {
    Expected e;
    e.outcome = serial_.unwind(s, e.frames);
    e.unwound = s.regs_user_mask != 0 && s.stack_user != nullptr;
    expected_.push_back(std::move(e));
    if (pool_.add(s, true)) flush();
  }
  void flush() {
    pool_.unwind_batch();
    ASSERT_EQ(pool_.size(), expected_.size());
    for (size_t i = 0; i < pool_.size(); ++i) {
      const Expected& e = expected_[i];
      const std::vector<UnwindFrame>* got = pool_.frames(i);
      ASSERT_EQ(got != nullptr, e.unwound);
      if (!got) continue;
      EXPECT_EQ(pool_.outcome(i), e.outcome);
      ASSERT_EQ(got->size(), e.frames.size()) << "sample " << samples_;
      for (size_t f = 0; f < got->size(); ++f) {
        EXPECT_EQ((*got)[f].pc, e.frames[f].pc);
        EXPECT_EQ((*got)[f].is_return_address, e.frames[f].is_return_address);
      }
      deepest_ = std::max(deepest_, got->size());
      ++samples_;
    }
    if (!pool_.empty()) ++batches_;
    pool_.clear();
    expected_.clear();
  }
  size_t samples_ = 0, batches_ = 0, deepest_ = 0;
  DwarfUnwindPool& pool() { return pool_; }

 private:
  struct Expected {
    std::vector<UnwindFrame> frames;
    UnwindOutcome outcome;
    bool unwound;
  };
  ProcessTable table_;
  DwarfUnwinder serial_;
  DwarfUnwindPool pool_;
  std::vector<Expected> expected_;
};

TEST(DwarfUnwindPool, SameFramesAsOneUnwinder) {
  setenv("DEBUGINFOD_URLS", "", 1);
  for (unsigned unwinders : {1u, 2u, 3u}) {
    SCOPED_TRACE(unwinders);
    PerfDataReader reader(test::testdata("fold/dwarf_static.data"));
    PoolVersusSerial check(unwinders);
    reader.read(check);
    check.flush();
    EXPECT_EQ(check.samples_, 88u);  // testdata/fold/README.md
    EXPECT_GE(check.deepest_, 5u) << "the recording should unwind through main";
    EXPECT_EQ(check.pool().stats().samples, 88u);
  }
}

TEST(DwarfUnwindPool, SmallBatchesReuseTheHelpers) {
  // Batches of a few samples: flush after every add; the helpers must be
  // handed work many times over.
  setenv("DEBUGINFOD_URLS", "", 1);
  struct EveryFew : PoolVersusSerial {
    EveryFew() : PoolVersusSerial(2) {}
    void on_sample(const Sample& s) override {
      PoolVersusSerial::on_sample(s);
      if (++n_ % 3 == 0) flush();
    }
    size_t n_ = 0;
  };
  PerfDataReader reader(test::testdata("fold/dwarf_static.data"));
  EveryFew check;
  reader.read(check);
  check.flush();
  EXPECT_EQ(check.samples_, 88u);
  EXPECT_GE(check.batches_, 29u);
}

}  // namespace
}  // namespace fg
