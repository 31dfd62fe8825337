#include "categories/glob_pattern.h"

#include <gtest/gtest.h>

#include <stdexcept>

using fg::GlobPattern;

TEST(GlobPattern, LiteralMatchesWholeNameOnly) {
  GlobPattern g("sgemm_");
  EXPECT_TRUE(g.matches("sgemm_"));
  EXPECT_FALSE(g.matches("sgemm_kernel"));
  EXPECT_FALSE(g.matches("xsgemm_"));
  EXPECT_FALSE(g.matches(""));
}

TEST(GlobPattern, StarsAnchorOnlyWhereAbsent) {
  EXPECT_TRUE(GlobPattern("sgemm_*").matches("sgemm_kernel_SKYLAKEX"));
  EXPECT_TRUE(GlobPattern("sgemm_*").matches("sgemm_"));
  EXPECT_FALSE(GlobPattern("sgemm_*").matches("dgemm_kernel"));
  EXPECT_TRUE(GlobPattern("*_kernel").matches("sgemm_kernel"));
  EXPECT_FALSE(GlobPattern("*_kernel").matches("sgemm_kernel_SKYLAKEX"));
  EXPECT_TRUE(GlobPattern("*gemm*").matches("jit_avx_gemm_f32_xbyak_gemm"));
  EXPECT_TRUE(GlobPattern("*").matches(""));
  EXPECT_TRUE(GlobPattern("**").matches("x"));
  EXPECT_TRUE(GlobPattern("a*b*c").matches("abc"));
  EXPECT_TRUE(GlobPattern("a*b*c").matches("a-b-b-c"));
  EXPECT_FALSE(GlobPattern("a*b*c").matches("a-c-b"));
  EXPECT_FALSE(GlobPattern("a*a").matches("a"));  // pieces may not overlap
  EXPECT_TRUE(GlobPattern("dnnl::impl::cpu::*gemm*").matches("dnnl::impl::cpu::x64::gemm_driver<float, float, float>"));
}

TEST(GlobPattern, QuestionMarkAndEscapes) {
  EXPECT_TRUE(GlobPattern("lib?omp.so*").matches("libiomp.so.5"));
  EXPECT_FALSE(GlobPattern("lib?omp.so*").matches("libomp.so"));
  EXPECT_TRUE(GlobPattern("*\\*").matches("a*"));
  EXPECT_FALSE(GlobPattern("*\\*").matches("ab"));
  EXPECT_TRUE(GlobPattern("\\?x").matches("?x"));
  EXPECT_FALSE(GlobPattern("\\?x").matches("ax"));
  // Brackets are literal: the kernel object and stripped-DSO frame names.
  EXPECT_TRUE(GlobPattern("[kernel.kallsyms]").matches("[kernel.kallsyms]"));
  EXPECT_TRUE(GlobPattern("[off-cpu*").matches("[off-cpu: S]"));
}

TEST(GlobPattern, RejectsUnusablePatterns) {
  EXPECT_THROW(GlobPattern(""), std::invalid_argument);
  EXPECT_THROW(GlobPattern("abc\\"), std::invalid_argument);
}

// The byte-mask prefilter only ever rejects what matches() rejects: every
// pattern of the built-in rules against names built from its own literals
// (which match) and from mutations of them (most of which do not).
TEST(GlobPattern, ByteMaskPrefilterNeverChangesTheAnswer) {
  const char* patterns[] = {"sgemm_", "*gemm*", "mkl_?gemm*", "at::native::*", "*\\?*", "a*b?c*d", "*kernel", "?",
                            "*[k]", "\\*x*", "__schedule", "omp_*_wait*"};
  const char* texts[] = {"sgemm_", "cblas_sgemm", "mkl_dgemm_kernel", "at::native::add", "what?", "aXbYcZd",
                         "sgemm_kernel", "x", "[k]", "*xy", "__schedule", "omp_barrier_wait_x", "", "GEMM",
                         "at::native:", "ab?cd", "a_b_c_d"};
  size_t matched = 0, checked = 0;
  for (const char* p : patterns) {
    GlobPattern g(p);
    for (const char* t : texts) {
      std::string_view text(t);
      EXPECT_EQ(g.matches(text, GlobPattern::byte_mask(text)), g.matches(text)) << p << " vs " << t;
      matched += g.matches(text);
      ++checked;
    }
  }
  EXPECT_GT(matched, 10u);
  EXPECT_LT(matched, checked);
  // And it does reject: a pattern with a byte the text lacks.
  GlobPattern g("*zq*");
  EXPECT_FALSE(g.matches("abc", GlobPattern::byte_mask("abc")));
}
