// GNU build-ids: read from an ELF file or image, matched when a debug file is
// opened, and written as the hex that perf's build-id cache and kallsyms
// directories use.
#pragma once

#include <string>
#include <string_view>

#include <libelf.h>

namespace fg {

// The GNU build-id note's bytes of an opened Elf; empty if none.
std::string raw_build_id_of(Elf* elf);
// Opens `path` and returns its fd if its build-id equals `want` (raw bytes); else -1.
int open_if_build_id(const std::string& path, const std::string& want);

// A copy of this process's own vdso image (from AT_SYSINFO_EHDR), empty if none.
// It is the recorded [vdso] only when the build-ids match (same kernel build).
std::string live_vdso_image();
// GNU build-id (raw bytes) of an ELF image in memory; empty if none.
std::string build_id_of_image(std::string_view image);

// Lower-case hex of raw build-id bytes.
std::string build_id_hex(std::string_view raw);
// Parses hex (as in kallsyms dirs, perf buildid-list) into raw bytes; empty on error.
std::string build_id_from_hex(std::string_view hex);

}  // namespace fg
