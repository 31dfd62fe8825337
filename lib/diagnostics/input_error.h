// Diagnostics shared by every stage: errors that name where in the input they
// happened (file, byte offset or line, record type), so a user can find the
// damage, and the CLI can print one clear line and exit non-zero.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "diagnostics/terminal_text.h"

namespace fg {

// Bad or unreadable input. what() is a complete one-line message such as
// "perf.data: byte 4096: SAMPLE record: size 4 is smaller than its header".
// Messages quote input text (names, paths, keys), so they are stored through
// terminal_safe(): what() is one printable line, and a NUL from the input
// cannot cut it short.
class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& message) : std::runtime_error(terminal_safe(message)) {}

  // "FILE: byte OFFSET: what"
  static InputError at_offset(const std::string& file, uint64_t offset, const std::string& what);
  // "FILE:LINE: what"
  static InputError at_line(const std::string& file, uint64_t line, const std::string& what);
};

// A problem with how fgtool was asked to run (bad option value, missing file).
class UsageError : public std::runtime_error {
 public:
  explicit UsageError(const std::string& message) : std::runtime_error(terminal_safe(message)) {}
};

}  // namespace fg
