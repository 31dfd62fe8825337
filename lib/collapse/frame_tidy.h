// Turns one callchain entry of `perf script` (symbol, dso, address) into the
// frame name that stackcollapse-perf.pl would print, minus two of its defects:
// argument lists are removed with bracket awareness (so template arguments such
// as `std::function<void (int)>` survive) and names starting with `(` are kept.
#pragma once

#include <string>
#include <string_view>

namespace fg {

struct FrameTidyOptions {
  bool annotate_kernel = false;  // append "_[k]" to kernel frames
  bool annotate_jit = false;     // append "_[j]" to frames from /tmp/perf-PID.map
  bool raw_addresses = false;    // unknown symbols as "[dso <addr>]"
};

// Removes one trailing C++ argument list and the qualifiers after it:
// "ns::f(int, std::function<void (int)>) const" -> "ns::f",
// "S::operator()(int)" -> "S::operator()", "f(int)::local" unchanged.
std::string_view strip_argument_list(std::string_view name);

// Whether a frame belongs to the kernel: its dso is [kernel.kallsyms], a
// vmlinux or a module, or (dso unknown) its address is in the upper half.
bool is_kernel_frame(std::string_view dso, std::string_view address_hex);
bool is_jit_frame(std::string_view dso);

// Writes the tidied frame name into `out` (cleared first). `symbol` is as
// perf printed it, possibly with "+0x.." and "[unknown]"; `dso` without its
// parentheses, empty when not printed.
void tidy_frame(std::string_view symbol, std::string_view dso, std::string_view address_hex,
                const FrameTidyOptions& options, std::string& out);

}  // namespace fg
