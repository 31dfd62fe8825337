// Text from an input (file and DSO paths, frame, event and rule names) shown
// on a terminal: control characters would move the cursor, recolour or
// retitle the terminal, so every human-readable line fgtool prints passes
// its untrusted parts through terminal_safe().
#pragma once

#include <string>
#include <string_view>

namespace fg {

// `s` with C0 controls (\n, \r, \t, \e as \x1b...), DEL, the UTF-8 C1
// controls (U+0080..U+009F, e.g. the one-byte CSI) and bytes that are not
// valid UTF-8 written as visible escapes (\n, \t, \x1b, \u009b, \xff).
// Printable ASCII and valid UTF-8 are kept as they are. With keep_newlines,
// '\n' is kept (for whole multi-line tables and reports).
std::string terminal_safe(std::string_view s, bool keep_newlines = false);

}  // namespace fg
