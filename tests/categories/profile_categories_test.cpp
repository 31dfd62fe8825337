// Leaf-most / outer-most / absorbs / fallback semantics on small profiles,
// and conservation (self shares sum to the total) on the real recordings.
#include "categories/profile_categories.h"

#include <gtest/gtest.h>

#include "categories/category_report.h"
#include "folded/folded_reader.h"
#include "test_support.h"

using namespace fg;

namespace {

struct Classified {
  CategoryRules rules;
  CategoryMatcher matcher;
  FoldedProfile profile;
  Classified(CategoryRules r, const std::string& folded)
      : rules(std::move(r)), matcher(rules) {
    read_folded_text(folded, "test.folded", profile);
  }
  // The categories of the one stack given (root first, ';'-joined).
  std::pair<std::string, std::string> of(const std::string& stack) {
    ProfileCategories pc(profile, matcher);
    NodeId n = 0;
    size_t start = 0;
    while (start <= stack.size()) {
      size_t end = stack.find(';', start);
      if (end == std::string::npos) end = stack.size();
      FrameId f = profile.find_frame(stack.substr(start, end - start));
      EXPECT_NE(f, FoldedProfile::kNoFrame) << stack;
      n = profile.find_child(n, f);
      EXPECT_NE(n, 0u) << stack;
      start = end + 1;
    }
    return {matcher.categories(CategoryKind::resource)[pc.sample_category(CategoryKind::resource, n)].name,
            matcher.categories(CategoryKind::phase)[pc.sample_category(CategoryKind::phase, n)].name};
  }
};

const char* kStacks =
    "t;main;Net::forward;at::linear;sgemm_;[libopenblasp-r0.3.21.so];sgemm_kernel_SKYLAKEX 10\n"
    "t;main;Net::forward;at::linear;sgemm_;sgemm_kernel_SKYLAKEX;asm_exc_page_fault;exc_page_fault;handle_mm_fault;"
    "__handle_mm_fault;do_anonymous_page;_raw_spin_unlock_irqrestore 3\n"
    "t;main;at::Tensor::backward;torch::autograd::Engine::thread_main;Net::forward 2\n"
    "t;clone3;start_thread;[libgomp.so.1.0.0];futex_wait;entry_SYSCALL_64;do_syscall_64;__schedule 4\n"
    "t;clone3;start_thread;[libgomp.so.1.0.0];[libtorch_cpu.so.1.13.0];at::TensorIteratorBase::serial_for_each;"
    "[libtorch_cpu.so.1.13.0] 5\n"
    "t;clone3;start_thread;[libopenblasp-r0.3.21.so];__GI_sched_yield;entry_SYSCALL_64_after_hwframe;do_syscall_64;"
    "__x64_sys_sched_yield;schedule;__schedule 6\n"
    "t;clone3;start_thread;my_thread_fn;torch::data::DataLoaderBase::next;read;entry_SYSCALL_64;__x64_sys_read;"
    "ksys_read;vfs_read;copy_page_to_iter 7\n"
    "t;main;torch::optim::SGD::step;[libtorch_cpu.so.1.13.0];memset;asm_exc_page_fault;clear_page_erms 1\n"
    "t;main;mystery 1\n";

}  // namespace

TEST(ProfileCategories, ResourceIsLeafMostThenAbsorbed) {
  Classified c(CategoryRules::defaults(), kStacks);
  // leaf-most match
  EXPECT_EQ(c.of("t;main;Net::forward;at::linear;sgemm_;[libopenblasp-r0.3.21.so];sgemm_kernel_SKYLAKEX").first, "gemm");
  // a kernel frame under a page fault is the page fault (page-fault absorbs kernel), not "kernel"
  EXPECT_EQ(c.of("t;main;Net::forward;at::linear;sgemm_;sgemm_kernel_SKYLAKEX;asm_exc_page_fault;exc_page_fault;"
                 "handle_mm_fault;__handle_mm_fault;do_anonymous_page;_raw_spin_unlock_irqrestore")
                .first,
            "page-fault");
  // futex (sync) under libgomp is OpenMP time: kernel -> sync -> omp
  EXPECT_EQ(c.of("t;clone3;start_thread;[libgomp.so.1.0.0];futex_wait;entry_SYSCALL_64;do_syscall_64;__schedule").first,
            "omp");
  // stripped libtorch code under serial_for_each is the element-wise loop
  EXPECT_EQ(c.of("t;clone3;start_thread;[libgomp.so.1.0.0];[libtorch_cpu.so.1.13.0];"
                 "at::TensorIteratorBase::serial_for_each;[libtorch_cpu.so.1.13.0]")
                .first,
            "eltwise");
  // OpenBLAS's thread server spinning in sched_yield is its own worker pool
  // (absorbs_into blas-threads), not OpenMP: OPENBLAS_NUM_THREADS is the knob
  EXPECT_EQ(c.of("t;clone3;start_thread;[libopenblasp-r0.3.21.so];__GI_sched_yield;entry_SYSCALL_64_after_hwframe;"
                 "do_syscall_64;__x64_sys_sched_yield;schedule;__schedule")
                .first,
            "blas-threads");
  // read path: kernel frames absorbed by the syscall
  EXPECT_EQ(c.of("t;clone3;start_thread;my_thread_fn;torch::data::DataLoaderBase::next;read;entry_SYSCALL_64;"
                 "__x64_sys_read;ksys_read;vfs_read;copy_page_to_iter")
                .first,
            "syscall-io");
  // page fault inside memset stays a page fault (alloc does not absorb it)
  EXPECT_EQ(c.of("t;main;torch::optim::SGD::step;[libtorch_cpu.so.1.13.0];memset;asm_exc_page_fault;clear_page_erms")
                .first,
            "page-fault");
  EXPECT_EQ(c.of("t;main;mystery").first, "other");
}

TEST(ProfileCategories, PhaseIsOuterMostWithFallbackLast) {
  Classified c(CategoryRules::defaults(), kStacks);
  EXPECT_EQ(c.of("t;main;Net::forward;at::linear;sgemm_;[libopenblasp-r0.3.21.so];sgemm_kernel_SKYLAKEX").second,
            "forward");
  // outer-most: a forward frame called from the autograd engine is backward
  EXPECT_EQ(c.of("t;main;at::Tensor::backward;torch::autograd::Engine::thread_main;Net::forward").second, "backward");
  // the thread-start fallback loses to a real phase further in...
  EXPECT_EQ(c.of("t;clone3;start_thread;my_thread_fn;torch::data::DataLoaderBase::next;read;entry_SYSCALL_64;"
                 "__x64_sys_read;ksys_read;vfs_read;copy_page_to_iter")
                .second,
            "data");
  // ...and applies when there is none
  EXPECT_EQ(c.of("t;clone3;start_thread;[libopenblasp-r0.3.21.so];__GI_sched_yield;entry_SYSCALL_64_after_hwframe;"
                 "do_syscall_64;__x64_sys_sched_yield;schedule;__schedule")
                .second,
            "threadpool");
  EXPECT_EQ(c.of("t;main;torch::optim::SGD::step;[libtorch_cpu.so.1.13.0];memset;asm_exc_page_fault;clear_page_erms")
                .second,
            "optimizer");
  EXPECT_EQ(c.of("t;main;mystery").second, "other");
}

TEST(ProfileCategories, FirstRuleWinsPerFrameAndFallbackResource) {
  CategoryRules rules = CategoryRules::parse(R"({"rules": [
      {"name": "a", "kind": "resource", "color": "#000001", "symbols": ["foo*"]},
      {"name": "b", "kind": "resource", "color": "#000002", "symbols": ["foobar", "bar"]},
      {"name": "weak", "kind": "resource", "color": "#000003", "fallback": true, "symbols": ["leaf"]}]})",
                                             "r.json");
  Classified c(rules, "x;foobar 1\nx;bar;leaf 1\nx;leaf 1\n");
  EXPECT_EQ(c.of("x;foobar").first, "a");        // first rule matching the frame
  EXPECT_EQ(c.of("x;bar;leaf").first, "b");      // non-fallback beats a deeper fallback
  EXPECT_EQ(c.of("x;leaf").first, "weak");       // fallback when nothing else
}

TEST(ProfileCategories, SelfSharesSumToTotalOnRealRecordings) {
  for (const char* file : {"libtorch_dwarf.folded", "libtorch_fp.folded", "libtorch_avx_fp.folded"}) {
    CategoryRules rules = CategoryRules::defaults();
    CategoryMatcher matcher(rules);
    FoldedProfile p;
    read_folded(fg::test::testdata("categories/" + std::string(file)), p);
    ProfileCategories pc(p, matcher);
    CategoryReport r = build_category_report(pc, 3);
    ASSERT_GT(r.total, 0);
    EXPECT_NEAR(r.total, p.total(), 1e-6 * p.total());
    for (const auto* shares : {&r.resource, &r.phase}) {
      double self = 0;
      for (const auto& s : *shares) {
        self += s.self;
        EXPECT_GE(s.inclusive + 1e-6, s.self) << file << " " << s.name;
        EXPECT_LE(s.inclusive, r.total * (1 + 1e-12)) << file << " " << s.name;
      }
      EXPECT_NEAR(self, r.total, 1e-9 * r.total) << file;
    }
    double m = 0;
    for (const auto& row : r.matrix)
      for (double v : row) m += v;
    EXPECT_NEAR(m, r.total, 1e-9 * r.total) << file;
    // Every resource row of the matrix adds up to that resource's self weight.
    for (size_t c = 0; c < r.resource.size(); ++c) {
      double col = 0;
      for (const auto& row : r.matrix) col += row[c];
      EXPECT_NEAR(col, r.resource[c].self, 1e-9 * r.total);
    }
    // The rules explain these real recordings: little is left in "other".
    EXPECT_LT(r.resource.back().self / r.total, 0.10) << file;
  }
}

TEST(ProfileCategories, DwarfRecordingAttributesTheTrainingStep) {
  CategoryRules rules = CategoryRules::defaults();
  CategoryMatcher matcher(rules);
  FoldedProfile p;
  read_folded(fg::test::testdata("categories/libtorch_dwarf.folded"), p);
  ProfileCategories pc(p, matcher);
  CategoryReport r = build_category_report(pc, 3);
  auto self = [&](const std::vector<CategoryShare>& v, const char* name) {
    for (const auto& s : v)
      if (s.name == name) return s.self / r.total;
    return -1.0;
  };
  for (const char* c : {"gemm", "conv", "omp", "eltwise", "page-fault", "alloc"})
    EXPECT_GT(self(r.resource, c), 0.01) << c;
  for (const char* c : {"data", "forward", "backward", "optimizer", "startup"})
    EXPECT_GT(self(r.phase, c), 0.003) << c;
  EXPECT_LT(self(r.phase, "other"), 0.15);
}

// Thousands of frames are matched on two threads: every frame must still get
// exactly what the matcher says for it, on both halves.
TEST(ProfileCategories, ManyFramesMatchAsTheMatcherSays) {
  std::string folded;
  const char* names[] = {"sgemm_kernel_SKYLAKEX", "at::native::add_kernel", "__schedule", "memset", "mystery",
                         "torch::optim::SGD::step", "exc_page_fault", "futex_wait"};
  for (int i = 0; i < 5000; ++i)
    folded += "t;main;" + std::string(names[i % 8]) + "_" + std::to_string(i) + ";" + names[(i + 3) % 8] + " 1\n";
  Classified c(CategoryRules::defaults(), folded);
  ASSERT_GE(c.profile.frame_count(), 5000u);
  ProfileCategories pc(c.profile, c.matcher);
  size_t matched = 0;
  for (FrameId f = 0; f < c.profile.frame_count(); ++f)
    for (int k = 0; k < kCategoryKinds; ++k) {
      FrameMatch want = c.matcher.match(CategoryKind(k), c.profile.frame_name(f), c.profile.frame_object(f));
      FrameMatch got = pc.frame_match(CategoryKind(k), f);
      ASSERT_EQ(got.category, want.category) << c.profile.frame_name(f);
      ASSERT_EQ(got.rule, want.rule) << c.profile.frame_name(f);
      matched += bool(want);
    }
  EXPECT_GT(matched, 1000u);  // the rules do match some of these (the test checks something)
}
