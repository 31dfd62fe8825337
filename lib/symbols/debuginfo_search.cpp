#include "symbols/debuginfo_search.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

#include "symbols/build_id.h"

namespace fg {

namespace {

// The search path's entries, CRC flags dropped.
std::vector<std::string_view> search_entries(const char* debuginfo_path) {
  std::string_view dirs = debuginfo_path && *debuginfo_path ? debuginfo_path : ":.debug:/usr/lib/debug";
  std::vector<std::string_view> entries;
  for (;;) {
    const size_t colon = dirs.find(':');
    std::string_view e = dirs.substr(0, colon);
    while (!e.empty() && (e[0] == '+' || e[0] == '-')) e.remove_prefix(1);
    entries.push_back(e);
    if (colon == std::string_view::npos) return entries;
    dirs.remove_prefix(colon + 1);
  }
}

bool path_exists(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0;
}

// Whether `name` exists where one search-path entry sends the debug file of
// a file in `dir`: beside it ("", never the file's own name `base`), below
// it (a relative entry), or under an absolute entry followed by `dir` or
// each shorter tail of it (DIR/usr/bin/NAME, DIR/bin/NAME, DIR/NAME for a
// file in /usr/bin).
bool exists_for_entry(const std::string& entry, const std::string& dir, const std::string& base,
                      const std::string& name) {
  if (entry.empty()) return name != base && path_exists(dir + "/" + name);
  if (entry[0] != '/') return path_exists(dir + "/" + entry + "/" + name);
  for (size_t tail = 0; tail != std::string::npos; tail = dir.find('/', tail + 1))
    if (path_exists(entry + dir.substr(tail) + "/" + name)) return true;
  return path_exists(entry + "/" + name);
}

// Whether a file dwfl_standard_find_debuginfo would try by .gnu_debuglink
// name (or the file's name + ".debug", and its name) exists, under any
// entry (exists_for_entry), for the file's path and for its real path. A
// superset of its tries.
bool debuglink_candidate_exists(const std::vector<std::string_view>& entries, const char* file_name,
                                const char* debuglink_file) {
  std::vector<std::string> files = {file_name};
  if (char* real = ::realpath(file_name, nullptr)) {
    if (std::strcmp(real, file_name) != 0) files.emplace_back(real);
    std::free(real);
  }
  for (const std::string& file : files) {
    const size_t slash = file.rfind('/');
    const std::string dir = file.substr(0, slash), base = file.substr(slash + 1);
    const std::vector<std::string> names =
        debuglink_file ? std::vector<std::string>{debuglink_file} : std::vector<std::string>{base + ".debug", base};
    for (std::string_view entry : entries)
      for (const std::string& name : names)
        if (exists_for_entry(std::string(entry), dir, base, name)) return true;
  }
  return false;
}

// build_id_debug_file with the search path already split.
std::string build_id_file_in(Dwfl_Module* mod, const std::vector<std::string_view>& entries) {
  const unsigned char* bits = nullptr;
  GElf_Addr vaddr = 0;
  const int n = dwfl_module_build_id(mod, &bits, &vaddr);
  if (n < 2) return std::string();
  const std::string hex = build_id_hex(std::string_view(reinterpret_cast<const char*>(bits), size_t(n)));
  for (std::string_view dir : entries) {
    if (dir.empty() || dir[0] != '/') continue;
    std::string candidate = std::string(dir) + "/.build-id/" + hex.substr(0, 2) + "/" + hex.substr(2) + ".debug";
    if (access(candidate.c_str(), R_OK) == 0) return candidate;
  }
  return std::string();
}

}  // namespace

std::string build_id_debug_file(Dwfl_Module* mod, const char* debuginfo_path) {
  return build_id_file_in(mod, search_entries(debuginfo_path));
}

int find_local_debuginfo(Dwfl_Module* mod, void** userdata, const char* modname, Dwarf_Addr base,
                         const char* file_name, const char* debuglink_file, GElf_Word debuglink_crc,
                         char** debuginfo_file_name, const char* debuginfo_path) {
  const char* urls = std::getenv("DEBUGINFOD_URLS");
  // What this checks: the main file's debug file, named by an absolute
  // path. An alternate (dwz) file is asked for with a CRC of 0 and a name
  // with a directory; those, and relative names, go to libdwfl as they are.
  const bool checked = (!urls || !*urls) && file_name && file_name[0] == '/' &&
                       !(debuglink_file && (debuglink_crc == 0 || std::strchr(debuglink_file, '/')));
  if (checked) {
    const std::vector<std::string_view> entries = search_entries(debuginfo_path);
    if (build_id_file_in(mod, entries).empty() && !debuglink_candidate_exists(entries, file_name, debuglink_file))
      return -1;
  }
  return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file, debuglink_crc,
                                      debuginfo_file_name);
}

}  // namespace fg
