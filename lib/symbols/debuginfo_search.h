// Where libdwfl's standard search for a separate debug file looks, for the
// two find_debuginfo callbacks (ElfObject's, for symbols; DwarfUnwinder's,
// for .debug_frame): the build-id file, and a search that does not start
// libdwfl's debuginfod client where nothing could be found locally.
#pragma once

#include <elfutils/libdwfl.h>

#include <string>

namespace fg {

// DIR/.build-id/ab/cdef.debug for the first absolute DIR of `debuginfo_path`
// (libdwfl's format: ':'-separated, a leading '+' or '-' is a CRC flag;
// nullptr or "": ":.debug:/usr/lib/debug") where that file is readable;
// "" when none is.
std::string build_id_debug_file(Dwfl_Module* mod, const char* debuginfo_path);

// dwfl_standard_find_debuginfo's answer (same arguments, and the search path
// the Dwfl was given). Without DEBUGINFOD_URLS, it is asked only where one
// of the files it would try exists: when it finds nothing, elfutils 0.188
// dlopens libdebuginfod and starts curl in debuginfod_begin even with
// DEBUGINFOD_URLS empty (10-20 ms of CPU at every fold's start).
int find_local_debuginfo(Dwfl_Module* mod, void** userdata, const char* modname, Dwarf_Addr base,
                         const char* file_name, const char* debuglink_file, GElf_Word debuglink_crc,
                         char** debuginfo_file_name, const char* debuginfo_path);

}  // namespace fg
