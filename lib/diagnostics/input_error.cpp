#include "diagnostics/input_error.h"

namespace fg {

InputError InputError::at_offset(const std::string& file, uint64_t offset, const std::string& what) {
  return InputError(file + ": byte " + std::to_string(offset) + ": " + what);
}

InputError InputError::at_line(const std::string& file, uint64_t line, const std::string& what) {
  return InputError(file + ":" + std::to_string(line) + ": " + what);
}

}  // namespace fg
