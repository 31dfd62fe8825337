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
