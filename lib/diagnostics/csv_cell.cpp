#include "diagnostics/csv_cell.h"

namespace fg {

std::string csv_cell(std::string_view text) {
  std::string s;
  if (!text.empty()) {
    char c = text[0];
    if (c == '=' || c == '+' || c == '-' || c == '@' || c == '\t' || c == '\r') s += '\'';
  }
  s.append(text);
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + "\"";
}

}  // namespace fg
