// The one place where fgtool's input formats are registered with
// lib/folded/profile_loader.h, in the order they are tried. Every command that
// reads profiles (svg, diff, report, export, merge, ...) sees the same list.
#pragma once

namespace fg::cli {

// Registers every input format's loader, in priority order (see the .cpp);
// called once from main (later calls do nothing).
void register_input_formats();

}  // namespace fg::cli
