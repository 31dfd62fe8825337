// One CSV cell as fgtool's reports write it (RFC 4180 quoting), made safe
// for spreadsheets: names from the input that start like a formula are
// neutralised, so opening a report cannot run a formula someone planted in
// a frame or primitive name.
#pragma once

#include <string>
#include <string_view>

namespace fg {

// Per the OWASP CSV-injection rule: a cell starting with '=', '+', '-', '@',
// a tab or a carriage return gets a leading single quote ('=1+2 -> '=1+2,
// shown as text by Excel, LibreOffice and Google Sheets); then a cell with a
// comma, quote, CR or LF is quoted with doubled quotes. Numbers written by
// fgtool itself do not go through here.
std::string csv_cell(std::string_view text);

}  // namespace fg
