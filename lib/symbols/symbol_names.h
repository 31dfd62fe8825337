// Symbol naming as `perf script` (6.1, libiberty demangler without DMGL_PARAMS)
// prints it: C++ names demangled without the outermost parameter list, return type,
// cv/ref qualifiers and `[clone .x]` suffixes; Rust legacy hashes dropped.
#pragma once

#include <string>
#include <string_view>

namespace fg {

// Demangles an ELF symbol name the way perf 6.1 shows it:
//   _ZNK2ns6WorkerIlE4leafEl.isra.0        -> ns::Worker<long>::leaf
//   _ZZN2ns5Local3runElEN5Inner2goEl       -> ns::Local::run(long)::Inner::go
//   _ZThn8_N3Foo3barEv                     -> non-virtual thunk to Foo::bar()
//   _ZN4core3fmt5write17h0123456789abcdefE -> core::fmt::write
// Names that are not mangled (C symbols, `main.cold`, `clock_nanosleep@GLIBC_2.2.5`)
// come back unchanged. A versioned C++ name (`_ZNSo3putEc@@GLIBCXX_3.4`) loses the
// version, as libiberty ignores trailing text when it does not print parameters.
std::string demangle_without_params(std::string_view mangled);

// Removes from a fully demangled C++ name (abi::__cxa_demangle output) what perf
// leaves out: the outermost parameter list and what follows it (cv/ref qualifiers,
// `[clone .cold]`), and the return type of template functions. Bracket-aware: keeps
// template arguments (`std::function<void (int)>::operator()`), `(anonymous
// namespace)`, lambdas (`{lambda(int)#1}`), operator names (`operator()`,
// `operator<`, `operator new`), and the parameters of enclosing functions of local
// entities (`f(int)::Local::g`). Text without a trailing parameter list is kept.
std::string strip_params(std::string_view demangled);

// Whether two mangled names are variants of one constructor or destructor
// (C1/C2/C3, D0/D1/D2), which demangle to the same text: perf's alias rule
// then ties them without demangling either (elf_object.cpp).
bool ctor_dtor_variants(const char* a, const char* b);

// Rust legacy symbols (`_ZN...17h<16 hex>E`): decoded ($LT$ -> <, .. -> ::) with the
// hash removed, or empty when `mangled` is not one.
std::string demangle_rust_legacy(std::string_view mangled);

// folded_safe_name (making a name safe for the folded format) is in
// folded/folded_profile.h, beside the format's other limits.

}  // namespace fg
