// Naming: demangling without parameters as perf 6.1 prints it, checked against a
// table recorded from perf itself (testdata/symbols/perf61_demangled_names.tsv) and
// against hand-picked spellings.
#include <cxxabi.h>
#include <gtest/gtest.h>

#include <utility>

#include <cstdlib>
#include <fstream>
#include <string>

#include "symbols/symbol_names.h"
#include "test_support.h"

namespace {

using fg::demangle_without_params;
using fg::strip_params;

bool cxa_can_demangle(const std::string& mangled) {
  int status = 0;
  char* p = abi::__cxa_demangle(mangled.substr(0, mangled.find('@')).c_str(), nullptr, nullptr, &status);
  std::free(p);
  return status == 0;
}

TEST(SymbolNames, MatchesPerfOnRecordedTable) {
  std::ifstream in(fg::test::testdata("symbols/perf61_demangled_names.tsv"));
  ASSERT_TRUE(in) << "missing testdata/symbols/perf61_demangled_names.tsv";
  std::string line;
  int rows = 0, undemangleable = 0;
  while (std::getline(in, line)) {
    size_t tab = line.find('\t');
    ASSERT_NE(tab, std::string::npos) << line;
    std::string mangled = line.substr(0, tab), want = line.substr(tab + 1);
    ++rows;
    std::string got = demangle_without_params(mangled);
    if (got != want && !mangled.compare(0, 2, "_Z") && !cxa_can_demangle(mangled)) {
      // libstdc++ 12's demangler rejects a few names newer libiberty accepts (e.g.
      // `auto:1` lambdas in template arguments); we then keep the mangled name.
      EXPECT_EQ(got, mangled);
      ++undemangleable;
      continue;
    }
    EXPECT_EQ(got, want) << "mangled: " << mangled;
  }
  EXPECT_GT(rows, 250);
  EXPECT_LE(undemangleable, 3);
}

TEST(SymbolNames, StripParamsKeepsTemplatesOperatorsAndAnonymousNamespaces) {
  EXPECT_EQ(strip_params("ns::Worker<long>::top(long)"), "ns::Worker<long>::top");
  EXPECT_EQ(strip_params("std::function<void (int)>::operator()(int) const"),
            "std::function<void (int)>::operator()");
  EXPECT_EQ(strip_params("ns::(anonymous namespace)::anon_fn(long)"), "ns::(anonymous namespace)::anon_fn");
  EXPECT_EQ(strip_params("(anonymous namespace)::foo()"), "(anonymous namespace)::foo");
  EXPECT_EQ(strip_params("main::{lambda(int)#1}::operator()(int) const"), "main::{lambda(int)#1}::operator()");
  EXPECT_EQ(strip_params("Foo::operator<(Foo const&) const"), "Foo::operator<");
  EXPECT_EQ(strip_params("Foo::operator<<(int)"), "Foo::operator<<");
  EXPECT_EQ(strip_params("Foo::operator->()"), "Foo::operator->");
  EXPECT_EQ(strip_params("Foo::operator<=>(Foo const&)"), "Foo::operator<=>");
  EXPECT_EQ(strip_params("bool operator< <int>(A<int> const&, A<int> const&)"), "operator< <int>");
  EXPECT_EQ(strip_params("Foo::operator new(unsigned long)"), "Foo::operator new");
  EXPECT_EQ(strip_params("Foo::operator delete[](void*)"), "Foo::operator delete[]");
  EXPECT_EQ(strip_params("Foo::operator unsigned long() const"), "Foo::operator unsigned long");
  EXPECT_EQ(strip_params("Foo::get() &&"), "Foo::get");
  EXPECT_EQ(strip_params("Foo::get() const volatile &"), "Foo::get");
  EXPECT_EQ(strip_params("cold_path(long) [clone .cold]"), "cold_path");
  EXPECT_EQ(strip_params("foo(int) [clone .constprop.0] [clone .isra.0]"), "foo");
  EXPECT_EQ(strip_params("void std::vector<int, std::allocator<int> >::_M_realloc_insert<int>(int&&)"),
            "std::vector<int, std::allocator<int> >::_M_realloc_insert<int>");
  EXPECT_EQ(strip_params("unsigned long max<unsigned long>(unsigned long, unsigned long)"),
            "max<unsigned long>");
  EXPECT_EQ(strip_params("ns::Local::run(long)::Inner::go(long)"), "ns::Local::run(long)::Inner::go");
  EXPECT_EQ(strip_params("std::__cxx11::basic_string<char>::c_str[abi:cxx11]() const"),
            "std::__cxx11::basic_string<char>::c_str[abi:cxx11]");
  // Not functions: kept whole.
  EXPECT_EQ(strip_params("main::x"), "main::x");
  EXPECT_EQ(strip_params("typeinfo for Foo"), "typeinfo for Foo");
  EXPECT_EQ(strip_params("non-virtual thunk to Foo::bar()"), "non-virtual thunk to Foo::bar()");
  EXPECT_EQ(strip_params("f()::x"), "f()::x");
}

TEST(SymbolNames, DemanglesLikePerf) {
  EXPECT_EQ(demangle_without_params("_ZNK2ns6WorkerIlE4leafEl.isra.0"), "ns::Worker<long>::leaf");
  EXPECT_EQ(demangle_without_params("_ZZ4mainENKUliE_clEi"), "main::{lambda(int)#1}::operator()");
  EXPECT_EQ(demangle_without_params("_ZNKSt8functionIFviEEclEi"), "std::function<void (int)>::operator()");
  EXPECT_EQ(demangle_without_params("_ZN12_GLOBAL__N_13fooEv"), "(anonymous namespace)::foo");
  EXPECT_EQ(demangle_without_params("_ZNSo3putEc@@GLIBCXX_3.4"), "std::ostream::put");
  // C names, versioned C names and non-demangleable names are unchanged.
  EXPECT_EQ(demangle_without_params("clock_nanosleep@GLIBC_2.2.5"), "clock_nanosleep@GLIBC_2.2.5");
  EXPECT_EQ(demangle_without_params("main.cold"), "main.cold");
  EXPECT_EQ(demangle_without_params("_Zfoo"), "_Zfoo");
  EXPECT_EQ(demangle_without_params(""), "");
}

std::string rust_component(const std::string& s) { return std::to_string(s.size()) + s; }

// Constructor and destructor variants are tied without demangling
// (ElfObject's alias rule): each pair said to be variants demangles to the
// same text, and near misses are left to the demangler.
TEST(SymbolNames, CtorDtorVariantsDemangleAlike) {
  const std::pair<const char*, const char*> variants[] = {
      {"_ZN3FooC1Ev", "_ZN3FooC2Ev"},
      {"_ZN3FooD0Ev", "_ZN3FooD1Ev"},
      {"_ZN3FooD2Ev", "_ZN3FooD1Ev"},
      {"_ZN2at6TensorC2ERKS0_", "_ZN2at6TensorC1ERKS0_"},
      {"_ZN5torch2nn6LinearC1ERKNS0_13LinearOptionsE", "_ZN5torch2nn6LinearC2ERKNS0_13LinearOptionsE"},
      {"_ZNSt6vectorIiSaIiEED2Ev", "_ZNSt6vectorIiSaIiEED1Ev"},
      {"_ZN3FooC1Ev@@V_1", "_ZN3FooC2Ev@@V_1"},
  };
  for (const auto& [a, b] : variants) {
    SCOPED_TRACE(a);
    EXPECT_TRUE(fg::ctor_dtor_variants(a, b));
    EXPECT_EQ(fg::demangle_without_params(a), fg::demangle_without_params(b));
  }
  const std::pair<const char*, const char*> others[] = {
      {"_ZN3FooC1Ev", "_ZN3FooC1Ev"},        // the same name
      {"_ZN3FooC1Ei", "_ZN3FooC2El"},        // other parameters too
      {"_ZN3ABC1xE", "_ZN3ABC2xE"},          // a name's length after a C
      {"_ZN3SySC1Ev", "_ZN3SySC2Ev"},        // perf's SyS exception
      {"foo", "bar"},                        // not mangled
      {"_ZN3FooC1Ev", "_ZN3FooC1Ev.cold"},  // a prefix
      {"_ZN3FooC1Ev@@V_1", "_ZN3FooC2Ev@V_2"},
  };
  for (const auto& [a, b] : others) {
    SCOPED_TRACE(a);
    EXPECT_FALSE(fg::ctor_dtor_variants(a, b));
  }
}

TEST(SymbolNames, RustLegacyHashIsStrippedAndEscapesDecoded) {
  EXPECT_EQ(demangle_without_params("_ZN4core3fmt5write17h0123456789abcdefE"), "core::fmt::write");
  std::string impl = "_$LT$alloc..vec..Vec$LT$T$GT$$u20$as$u20$core..ops..drop..Drop$GT$";
  std::string m = "_ZN" + rust_component(impl) + rust_component("drop") + rust_component("h1a2b3c4d5e6f7a8b") + "E";
  EXPECT_EQ(demangle_without_params(m), "<alloc::vec::Vec<T> as core::ops::drop::Drop>::drop");
  std::string closure = "_ZN3std2rt10lang_start" + rust_component("_$u7b$$u7b$closure$u7d$$u7d$") +
                        rust_component("h9f8e7d6c5b4a3921") + "E.llvm.123";
  EXPECT_EQ(demangle_without_params(closure), "std::rt::lang_start::{{closure}}");
  // A C++ name whose last component merely looks like a hash is not Rust unless
  // it is exactly h + 16 hex digits.
  EXPECT_EQ(fg::demangle_rust_legacy("_ZN3foo3barE"), "");
}

// Real spellings from the installed libtorch: demangling must never produce a name
// with parameters where perf has none, i.e. no top-level "(" outside the allowed
// places, and must not crash on any of them.
TEST(SymbolNames, LibtorchDynamicSymbolsLoseTheirParameters) {
  const char* lib = "/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13";
  if (!std::ifstream(lib)) GTEST_SKIP() << lib << " not installed";
  auto r = fg::test::run_shell(std::string("nm -D --defined-only ") + lib + " | awk '$3 ~ /^_Z/ {print $3}' | head -3000");
  ASSERT_EQ(r.status, 0) << r.err;
  size_t pos = 0, n = 0;
  while (pos < r.out.size()) {
    size_t eol = r.out.find('\n', pos);
    std::string m = r.out.substr(pos, eol - pos);
    pos = eol + 1;
    std::string got = demangle_without_params(m);
    ++n;
    if (got == m || m.compare(0, 3, "_ZT") == 0 || m.compare(0, 3, "_ZG") == 0) continue;
    ASSERT_FALSE(got.empty()) << m;
    EXPECT_NE(got.back(), ')') << m << " -> " << got;
  }
  EXPECT_GT(n, 1000u);
}

}  // namespace
