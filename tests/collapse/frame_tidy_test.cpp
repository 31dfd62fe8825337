// Frame-name tidying: stackcollapse-perf.pl conventions, without its two
// defects (cutting names at the first '(' and dropping names starting with '(').
#include <gtest/gtest.h>

#include "collapse/frame_tidy.h"

namespace {

std::string tidy(std::string_view sym, std::string_view dso = "/bin/x", std::string_view addr = "1234",
                 fg::FrameTidyOptions o = {}) {
  std::string out;
  fg::tidy_frame(sym, dso, addr, o, out);
  return out;
}

TEST(StripArgumentList, RemovesTrailingArgumentsAndQualifiers) {
  EXPECT_EQ(fg::strip_argument_list("ns::f(int, char const*)"), "ns::f");
  EXPECT_EQ(fg::strip_argument_list("S::get() const"), "S::get");
  EXPECT_EQ(fg::strip_argument_list("S::get() const &&"), "S::get");
  EXPECT_EQ(fg::strip_argument_list("f(std::function<void (int)>)"), "f");
  EXPECT_EQ(fg::strip_argument_list("void g<int>(int)"), "void g<int>");
}

TEST(StripArgumentList, KeepsParenthesesThatAreNotAnArgumentList) {
  // The Perl script cuts these at the first '(' and loses the template argument.
  EXPECT_EQ(fg::strip_argument_list("std::function<void (int)>::operator()"), "std::function<void (int)>::operator()");
  EXPECT_EQ(fg::strip_argument_list("std::function<void (int)>::operator()(int) const"),
            "std::function<void (int)>::operator()");
  EXPECT_EQ(fg::strip_argument_list("std::_Function_handler<void (int), main::{lambda(int)#1}>::_M_invoke"),
            "std::_Function_handler<void (int), main::{lambda(int)#1}>::_M_invoke");
  EXPECT_EQ(fg::strip_argument_list("main::{lambda(int)#1}::operator()"), "main::{lambda(int)#1}::operator()");
  EXPECT_EQ(fg::strip_argument_list("(anonymous namespace)::make_input"), "(anonymous namespace)::make_input");
  EXPECT_EQ(fg::strip_argument_list("f(int)::counter"), "f(int)::counter");
  EXPECT_EQ(fg::strip_argument_list("main.(*T).Method"), "main.(*T).Method");
  EXPECT_EQ(fg::strip_argument_list("(unbalanced"), "(unbalanced");
  EXPECT_EQ(fg::strip_argument_list("unbalanced)"), "unbalanced)");
}

TEST(TidyFrame, OffsetsSemicolonsAndQuotes) {
  EXPECT_EQ(tidy("demo::Kernel<float>::gemm+0x3d"), "demo::Kernel<float>::gemm");
  EXPECT_EQ(tidy("clock_nanosleep@GLIBC_2.2.5+0x23"), "clock_nanosleep@GLIBC_2.2.5");
  EXPECT_EQ(tidy("Ljava/io/PrintStream;::print"), "Ljava/io/PrintStream:::print");
  EXPECT_EQ(tidy("f<'a'>"), "f<a>");
  EXPECT_EQ(tidy("a+b"), "a+b");  // not an offset
  EXPECT_EQ(tidy("(anonymous namespace)::make_input+0x44"), "(anonymous namespace)::make_input");
}

TEST(TidyFrame, UnknownSymbolsNameTheirDso) {
  EXPECT_EQ(tidy("[unknown]", "/usr/lib/x86_64-linux-gnu/libc.so.6"), "[libc.so.6]");
  EXPECT_EQ(tidy("[unknown]", "[unknown]"), "[unknown]");
  EXPECT_EQ(tidy("", ""), "[unknown]");
  EXPECT_EQ(tidy("[unknown]", "[kernel.kallsyms]"), "[[kernel.kallsyms]]");  // as stackcollapse-perf.pl
  fg::FrameTidyOptions raw;
  raw.raw_addresses = true;
  EXPECT_EQ(tidy("[unknown]", "/lib/libz.so.1", "7f00dead", raw), "[libz.so.1 <7f00dead>]");
  EXPECT_EQ(tidy("[unknown]", "[unknown]", "7f00dead", raw), "[unknown <7f00dead>]");
}

TEST(TidyFrame, KernelAndJitAnnotations) {
  fg::FrameTidyOptions o;
  o.annotate_kernel = o.annotate_jit = true;
  EXPECT_EQ(tidy("__schedule+0x618", "[kernel.kallsyms]", "ffffffff821facd8", o), "__schedule_[k]");
  EXPECT_EQ(tidy("nf_hook", "[nf_conntrack]", "ffffffffc0001000", o), "nf_hook_[k]");
  EXPECT_EQ(tidy("[unknown]", "[unknown]", "ffffffff81000000", o), "[unknown]_[k]");
  EXPECT_EQ(tidy("[unknown]", "[unknown]", "7fdb7b8f2ad7", o), "[unknown]");
  EXPECT_EQ(tidy("main", "/tmp/a.out", "128d", o), "main");
  EXPECT_EQ(tidy("__vdso_clock_gettime", "[vdso]", "7ffd1000", o), "__vdso_clock_gettime");
  EXPECT_EQ(tidy("jit_gemm_kernel", "/tmp/perf-1234.map", "7f0012340000", o), "jit_gemm_kernel_[j]");
  fg::FrameTidyOptions none;
  EXPECT_EQ(tidy("__schedule", "[kernel.kallsyms]", "ffffffff821facd8", none), "__schedule");
}

}  // namespace
