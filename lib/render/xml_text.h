// Safe text for SVG/XML output: every frame name, title and note passes
// through here, so a hostile name (markup, "]]>", control characters, bad
// UTF-8) comes out as inert, well-formed character data.
#pragma once

#include <string>
#include <string_view>

namespace fg {

// Valid UTF-8 with every XML-forbidden character (C0 controls other than
// tab, U+FFFE, U+FFFF) and every invalid byte replaced by U+FFFD.
std::string sanitize_xml_utf8(std::string_view s);
// Appends sanitize_xml_utf8(s) with & < > " ' escaped (usable in text and
// in attribute values).
void append_xml_escaped(std::string& out, std::string_view s);
std::string xml_escape(std::string_view s);

// Number of code points in valid UTF-8.
size_t utf8_length(std::string_view s);
// The first n code points of valid UTF-8.
std::string_view utf8_prefix(std::string_view s, size_t n);
// The last n code points of valid UTF-8.
std::string_view utf8_suffix(std::string_view s, size_t n);

}  // namespace fg
