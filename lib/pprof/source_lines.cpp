#include "pprof/source_lines.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "symbols/build_id.h"
#include "symbols/elf_object.h"

namespace fg {

namespace {

// The separate debug file the fold used (perf's build-id cache, --symfs),
// tried before libdwfl's standard search.
struct DebugHint {
  std::string path;
};

int find_debuginfo(Dwfl_Module* mod, void** userdata, const char* modname, Dwarf_Addr base, const char* file_name,
                   const char* debuglink_file, GElf_Word debuglink_crc, char** debuginfo_file_name) {
  const auto* hint = userdata && *userdata ? static_cast<const DebugHint*>(*userdata) : nullptr;
  if (hint && !hint->path.empty()) {
    int fd = ::open(hint->path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      *debuginfo_file_name = strdup(hint->path.c_str());
      return fd;
    }
  }
  return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file, debuglink_crc,
                                      debuginfo_file_name);
}

int64_t udata(Dwarf_Die* die, unsigned name) {
  Dwarf_Attribute a;
  Dwarf_Word w = 0;
  if (dwarf_formudata(dwarf_attr(die, name, &a), &w) != 0) return 0;
  return int64_t(w);
}

}  // namespace

struct SourceLines::Object {
  struct Segment {
    uint64_t offset, filesz, vaddr;
    bool executable;
  };
  Dwfl_Callbacks callbacks{};
  DebugHint hint;  // libdwfl keeps a pointer to it (module userdata)
  Dwfl* dwfl = nullptr;
  Dwfl_Module* module = nullptr;
  Dwarf_Addr elf_bias = 0;
  std::vector<Segment> segments;
  // (offset << 1 | return_address) -> frames[first, first + count)
  std::unordered_map<uint64_t, std::pair<uint32_t, uint32_t>> cache;
  std::vector<Frame> frames;
  struct Subprogram {
    uint64_t low, high;
    Dwarf_Die die;
  };
  std::unordered_map<uint64_t, std::vector<Subprogram>> cu_index;  // CU DIE offset -> by low pc
  std::vector<Dwarf_Die> chain;

  ~Object() {
    if (dwfl) dwfl_end(dwfl);
  }
  bool open(const std::string& path, const std::string& debug_file);
  bool vaddr_of(uint64_t offset, uint64_t* vaddr) const;
  void frames_at(uint64_t module_pc, std::vector<Frame>& out);
  void scopes_at(Dwarf_Die* cu, uint64_t pc, std::vector<Dwarf_Die>& chain);
  const std::vector<Subprogram>& subprograms(Dwarf_Die* cu);
  static void collect_subprograms(Dwarf_Die* parent, std::vector<Subprogram>& out, int depth);
};


bool SourceLines::Object::open(const std::string& path, const std::string& debug_file) {
  hint.path = debug_file;
  callbacks.find_elf = dwfl_build_id_find_elf;
  callbacks.find_debuginfo = find_debuginfo;
  callbacks.section_address = dwfl_offline_section_address;
  dwfl = dwfl_begin(&callbacks);
  if (!dwfl) return false;
  dwfl_report_begin(dwfl);
  // Base 0 with p_vaddr added: module addresses are the ELF's own vaddrs.
  module = dwfl_report_elf(dwfl, path.c_str(), path.c_str(), -1, 0, true);
  dwfl_report_end(dwfl, nullptr, nullptr);
  if (!module) return false;
  void** userdata = nullptr;
  dwfl_module_info(module, &userdata, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
  if (userdata) *userdata = &hint;
  Dwarf_Addr dwarf_bias = 0;
  if (!dwfl_module_getdwarf(module, &dwarf_bias)) return false;
  Elf* elf = dwfl_module_getelf(module, &elf_bias);
  size_t n = 0;
  if (!elf || elf_getphdrnum(elf, &n) != 0) return false;
  for (size_t i = 0; i < n; ++i) {
    GElf_Phdr ph;
    if (!gelf_getphdr(elf, int(i), &ph) || ph.p_type != PT_LOAD) continue;
    segments.push_back(Segment{ph.p_offset, ph.p_filesz, ph.p_vaddr, (ph.p_flags & PF_X) != 0});
  }
  return !segments.empty();
}

// As the fold does (docs/perfdata-notes.md §5.3): the PT_LOAD holding the
// offset, executable segments first.
bool SourceLines::Object::vaddr_of(uint64_t offset, uint64_t* vaddr) const {
  for (int pass = 0; pass < 2; ++pass)
    for (const Segment& s : segments)
      if (s.executable == (pass == 0) && offset >= s.offset && offset - s.offset < s.filesz) {
        *vaddr = offset - s.offset + s.vaddr;
        return true;
      }
  return false;
}

// A CU's out-of-line functions by address, built once per CU: finding the
// function around an address with dwarf_getscopes walks the whole CU each
// time (seconds for large C++ CUs over thousands of addresses).
const std::vector<SourceLines::Object::Subprogram>& SourceLines::Object::subprograms(Dwarf_Die* cu) {
  auto key = uint64_t(dwarf_dieoffset(cu));
  auto it = cu_index.find(key);
  if (it != cu_index.end()) return it->second;
  std::vector<Subprogram> subs;
  collect_subprograms(cu, subs, 0);
  std::sort(subs.begin(), subs.end(), [](const Subprogram& x, const Subprogram& y) { return x.low < y.low; });
  return cu_index.emplace(key, std::move(subs)).first->second;
}

void SourceLines::Object::collect_subprograms(Dwarf_Die* parent, std::vector<Subprogram>& out, int depth) {
  Dwarf_Die child;
  if (depth > 16 || dwarf_child(parent, &child) != 0) return;
  do {
    const int tag = dwarf_tag(&child);
    if (tag == DW_TAG_subprogram) {
      Dwarf_Addr base, start, end;
      ptrdiff_t off = 0;
      while ((off = dwarf_ranges(&child, off, &base, &start, &end)) > 0)
        if (end > start) out.push_back(Subprogram{start, end, child});
    } else if (tag == DW_TAG_namespace || tag == DW_TAG_class_type || tag == DW_TAG_structure_type ||
               tag == DW_TAG_union_type) {
      collect_subprograms(&child, out, depth + 1);
    }
  } while (dwarf_siblingof(&child, &child) == 0);
}

// The function around pc and the inlined calls down to pc, outermost first.
void SourceLines::Object::scopes_at(Dwarf_Die* cu, uint64_t pc, std::vector<Dwarf_Die>& chain) {
  chain.clear();
  const std::vector<Subprogram>& subs = subprograms(cu);
  auto it = std::upper_bound(subs.begin(), subs.end(), pc, [](uint64_t v, const Subprogram& s) { return v < s.low; });
  // Nested ranges (a function's cold part) end after the next one starts:
  // the few before pc, nearest first.
  for (size_t i = size_t(it - subs.begin()), back = 1; back <= 4 && back <= i; ++back)
    if (pc < subs[i - back].high) {
      chain.push_back(subs[i - back].die);
      break;
    }
  if (chain.empty()) return;
  Dwarf_Die scope = chain.back();
  for (int depth = 0; depth < 64; ++depth) {
    Dwarf_Die child;
    bool descended = false;
    if (dwarf_child(&scope, &child) == 0) {
      do {
        const int tag = dwarf_tag(&child);
        if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_lexical_block && tag != DW_TAG_try_block &&
            tag != DW_TAG_catch_block)
          continue;
        if (dwarf_haspc(&child, pc) != 1) continue;
        if (tag == DW_TAG_inlined_subroutine) chain.push_back(child);
        scope = child;
        descended = true;
        break;
      } while (dwarf_siblingof(&child, &child) == 0);
    }
    if (!descended) break;
  }
}

// The line of pc, then each enclosing inlined call and the function: the
// position inside an inlined callee is its line; the position in the
// function around it is the inlined call's DW_AT_call_file/call_line.
void SourceLines::Object::frames_at(uint64_t module_pc, std::vector<Frame>& out) {
  out.clear();
  Dwfl_Line* line = dwfl_module_getsrc(module, module_pc);
  if (!line) return;
  int lineno = 0;
  const char* file = dwfl_lineinfo(line, nullptr, &lineno, nullptr, nullptr, nullptr);
  if (!file) return;
  Dwarf_Addr bias = 0;
  Dwarf_Die* cu = dwfl_module_addrdie(module, module_pc, &bias);
  if (cu) scopes_at(cu, module_pc - bias, chain);
  else chain.clear();
  Dwarf_Files* files = nullptr;
  size_t nfiles = 0;
  std::string_view at_file = file;
  int64_t at_line = lineno;
  for (size_t i = chain.size(); i-- > 0;) {
    Dwarf_Die* die = &chain[i];
    Frame f;
    f.file = at_file;
    f.line = at_line;
    if (const char* decl = dwarf_decl_file(die)) f.function_file = decl;
    int decl_line = 0;
    if (dwarf_decl_line(die, &decl_line) == 0) f.start_line = decl_line;
    out.push_back(f);
    if (i == 0) break;
    // Where this callee was inlined: a line of the scope around it.
    at_line = udata(die, DW_AT_call_line);
    at_file = {};
    if (files || dwarf_getsrcfiles(cu, &files, &nfiles) == 0) {
      const int64_t index = udata(die, DW_AT_call_file);
      if (size_t(index) < nfiles)
        if (const char* name = dwarf_filesrc(files, size_t(index), nullptr, nullptr)) at_file = name;
    }
  }
  if (out.empty()) out.push_back(Frame{file, lineno, {}, 0});  // a line but no function DIE (assembly)
}

SourceLines::SourceLines(const std::vector<ObjectStatus>& objects) {
  for (const ObjectStatus& o : objects)
    if (o.found && !o.opened_path.empty() && o.has_debuginfo) {
      opened_.emplace(o.path + '\0' + o.build_id_hex, Found{o.opened_path, o.debug_file});
      opened_.emplace(o.path, Found{o.opened_path, o.debug_file});  // the first with that path, for a mapping without a build-id
    }
}

SourceLines::~SourceLines() = default;

uint32_t SourceLines::object(std::string_view path, std::string_view build_id) {
  std::string key(path);
  key += '\0';
  key += build_id_hex(build_id);
  auto h = handles_.find(key);
  if (h != handles_.end()) return h->second;
  uint32_t handle = kNoObject;
  const auto t0 = std::chrono::steady_clock::now();
  auto it = opened_.find(key);
  if (it == opened_.end() && build_id.empty()) it = opened_.find(std::string(path));
  if (it != opened_.end()) {
    auto object = std::make_unique<Object>();
    if (object->open(it->second.path, it->second.debug_file)) {
      handle = uint32_t(objects_.size());
      objects_.push_back(std::move(object));
      ++stats_.objects_with_lines;
    }
  }
  handles_.emplace(std::move(key), handle);
  stats_.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return handle;
}

const SourceLines::Frame* SourceLines::lookup(uint32_t object, uint64_t offset, bool return_address, size_t* count) {
  *count = 0;
  if (object >= objects_.size()) return nullptr;
  Object& o = *objects_[object];
  ++stats_.lookups;
  auto [it, fresh] = o.cache.try_emplace((offset << 1) | uint64_t(return_address), uint32_t(o.frames.size()), 0u);
  if (fresh) {
    const auto t0 = std::chrono::steady_clock::now();
    uint64_t vaddr = 0;
    if (o.vaddr_of(offset, &vaddr)) {
      o.frames_at(vaddr + o.elf_bias - (return_address ? 1 : 0), scratch_);
      o.frames.insert(o.frames.end(), scratch_.begin(), scratch_.end());
      it->second.second = uint32_t(scratch_.size());
    }
    stats_.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  } else {
    ++stats_.cached;
  }
  *count = it->second.second;
  return o.frames.data() + it->second.first;
}

}  // namespace fg
