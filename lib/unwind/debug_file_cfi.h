// Whether a separate debug file carries CFI of its own (.debug_frame): the
// DWARF unwinder hands libdwfl only such debug files, as it unwinds with
// .eh_frame first and needs a debug file only for .debug_frame.
// Thread-safe (the two unwinding threads ask); answers are kept per path.
#pragma once

#include <string>

namespace fg {

// True when `path` has a .debug_frame (or .zdebug_frame) section, and when
// it cannot be read as ELF (left to libdwfl to judge, as before).
bool debug_file_has_cfi(const std::string& path);

}  // namespace fg
