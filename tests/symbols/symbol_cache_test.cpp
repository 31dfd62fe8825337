// SymbolCache on real ELF files built with the tests: every function of PIE,
// non-PIE and lld-linked fixtures resolves by file offset (names from nm, offsets
// from readelf), aliases as perf picks them, the -1 rule, inline chains against
// binutils addr2line, debuglink and MiniDebugInfo, the build-id cache, symfs, and
// bad inputs (missing, truncated, mismatched build-id); keep_answers(false) gives
// the same answers and counts as the keeping cache.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <set>
#include <map>
#include <sstream>

#include <unistd.h>

#include "symbols/build_id.h"
#include "symbols/symbol_cache.h"
#include "symbols/symbol_names.h"
#include "test_support.h"

namespace {

using fg::test::run_shell;
using fg::test::shell_quote;

struct NmSym {
  uint64_t addr, size;
  char type;
  std::string name;
};

std::vector<NmSym> nm_functions(const std::string& path, bool dynamic = false) {
  auto r = run_shell(std::string("nm -S --defined-only ") + (dynamic ? "-D " : "") + shell_quote(path));
  EXPECT_EQ(r.status, 0) << r.err;
  std::vector<NmSym> out;
  std::istringstream in(r.out);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string a, s, t, n;
    if (!(ls >> a >> s >> t >> n)) continue;  // no size: skip
    char type = t[0];
    if (type != 'T' && type != 't' && type != 'W' && type != 'w') continue;
    out.push_back({std::stoull(a, nullptr, 16), std::stoull(s, nullptr, 16), type, n});
  }
  return out;
}

struct Load {
  uint64_t off, vaddr, filesz;
};

// PT_LOADs as readelf reports them: an oracle independent of our ELF code.
std::vector<Load> readelf_loads(const std::string& path) {
  auto r = run_shell("readelf -lW " + shell_quote(path) + " | awk '$1==\"LOAD\"{print $2, $3, $5}'");
  EXPECT_EQ(r.status, 0) << r.err;
  std::vector<Load> out;
  std::istringstream in(r.out);
  std::string o, v, f;
  while (in >> o >> v >> f)
    out.push_back({std::stoull(o, nullptr, 16), std::stoull(v, nullptr, 16), std::stoull(f, nullptr, 16)});
  return out;
}

uint64_t vaddr_to_offset(const std::vector<Load>& loads, uint64_t vaddr) {
  for (const Load& l : loads)
    if (vaddr >= l.vaddr && vaddr < l.vaddr + l.filesz) return vaddr - l.vaddr + l.off;
  ADD_FAILURE() << "vaddr " << std::hex << vaddr << " in no PT_LOAD";
  return 0;
}

fg::SymbolOptions test_options() {
  setenv("DEBUGINFOD_URLS", "", 1);
  fg::SymbolOptions o;
  o.buildid_dir = fg::test::temp_dir();  // empty cache: never the user's ~/.debug
  return o;
}

std::string basename_of(const std::string& p) { return p.substr(p.rfind('/') + 1); }

std::string raw_build_id(const std::string& path) {
  auto r = run_shell("readelf -n " + shell_quote(path) + " | awk '/Build ID/{print $3}'");
  std::string hex = r.out.substr(0, r.out.find('\n'));
  return fg::build_id_from_hex(hex);
}

std::string name_at(fg::SymbolCache& c, fg::ObjectHandle h, uint64_t off, bool ret = false,
                    bool* resolved = nullptr) {
  std::vector<fg::SymbolizedFrame> out;
  c.symbolize(h, off, ret, out);
  EXPECT_EQ(out.size(), 1u);
  if (resolved) *resolved = out.at(0).resolved;
  return std::string(out.at(0).name);
}

// Every sized function: its start and middle resolve to it (perf's pick where
// several share an address).
void check_all_functions(const std::string& path) {
  SCOPED_TRACE(path);
  auto syms = nm_functions(path);
  auto loads = readelf_loads(path);
  ASSERT_GT(syms.size(), 8u);
  std::map<uint64_t, int> per_addr;
  for (auto& s : syms) per_addr[s.addr]++;
  fg::SymbolCache cache(test_options());
  auto h = cache.object({path, raw_build_id(path)});
  auto st = cache.object_statuses().at(h);
  ASSERT_TRUE(st.found) << st.problem;
  EXPECT_EQ(st.symtab_source, ".symtab");
  int checked = 0;
  for (auto& s : syms) {
    if (per_addr[s.addr] > 1 || s.size == 0) continue;
    std::string want = fg::demangle_without_params(s.name);
    for (uint64_t v : {s.addr, s.addr + s.size / 2, s.addr + s.size - 1}) {
      uint64_t off = vaddr_to_offset(loads, v);
      EXPECT_EQ(cache.file_offset_to_vaddr(h, off).value_or(0), v);
      bool resolved = false;
      EXPECT_EQ(name_at(cache, h, off, false, &resolved), want) << std::hex << v;
      EXPECT_TRUE(resolved);
    }
    ++checked;
  }
  EXPECT_GT(checked, 8);
  // Aliases: global beats weak and fewer leading underscores win (perf's choose_best_symbol).
  for (auto& s : syms) {
    if (s.name != "fx_aliased_weak") continue;
    EXPECT_EQ(per_addr[s.addr], 3);
    EXPECT_EQ(name_at(cache, h, vaddr_to_offset(loads, s.addr + 1)), "fx_aliased_impl");
  }
  // Aliases that tie on every rule: perf keeps the one earlier in the symbol
  // table (fx_tie_zz, the function, before its alias fx_tie_aa), not the one
  // whose name sorts first.
  if (path.find("symfx_c_") != std::string::npos) {  // the C fixtures
    std::istringstream order(run_shell("readelf -sW " + shell_quote(path) + " | grep -oE 'fx_tie_[a-z]+$'").out);
    std::string first_in_table;
    ASSERT_TRUE(std::getline(order, first_in_table)) << "no fx_tie aliases in " << path;
    EXPECT_EQ(first_in_table, "fx_tie_zz") << "the linker ordered the aliases otherwise: the check below proves less";
    for (auto& s : syms)
      if (s.name == first_in_table) {
        EXPECT_EQ(per_addr[s.addr], 2);
        EXPECT_EQ(name_at(cache, h, vaddr_to_offset(loads, s.addr + 1)), first_in_table);
      }
  }
  // The -1 rule: the return address after a final call to a noreturn function is
  // the function's end; looked up as a return address it is still that function.
  for (auto& s : syms) {
    if (s.name != "fx_ends_in_noreturn") continue;
    uint64_t end_off = vaddr_to_offset(loads, s.addr + s.size);
    EXPECT_EQ(name_at(cache, h, end_off, true), "fx_ends_in_noreturn");
    EXPECT_NE(name_at(cache, h, end_off, false), "fx_ends_in_noreturn");
  }
  // Past a sized symbol's end (alignment padding) perf prints [unknown].
  for (size_t i = 0; i + 1 < syms.size(); ++i) {
    const NmSym& s = syms[i];
    bool gap = true;
    for (auto& o : syms)
      if (o.addr <= s.addr + s.size && s.addr + s.size < o.addr + std::max<uint64_t>(o.size, 1)) gap = false;
    if (!gap || s.type != 'T') continue;
    bool resolved = true;
    EXPECT_EQ(name_at(cache, h, vaddr_to_offset(loads, s.addr + s.size), false, &resolved),
              "[" + basename_of(path) + "]");
    EXPECT_FALSE(resolved);
    break;
  }
  // PLT entries are named "<function>@plt" as perf synthesizes them (objdump agrees).
  auto plt = run_shell("objdump -d -j .plt " + shell_quote(path) + " | grep -E '^[0-9a-f]+ <.*@plt>:$'");
  int plt_checked = 0;
  std::istringstream plt_lines(plt.out);
  std::string pl;
  while (std::getline(plt_lines, pl)) {
    uint64_t a = std::stoull(pl, nullptr, 16);
    std::string label = pl.substr(pl.find('<') + 1, pl.rfind('>') - pl.find('<') - 1);
    EXPECT_EQ(name_at(cache, h, vaddr_to_offset(loads, a + 4)), fg::demangle_without_params(label.substr(0, label.size() - 4)) + "@plt");
    ++plt_checked;
  }
  EXPECT_GT(plt_checked, 3);
  auto after = cache.object_statuses().at(h);
  EXPECT_GT(after.lookups, 0u);
}

TEST(SymbolCache, PieFixtureAllFunctions) { check_all_functions(SYMFX_C_PIE); }
TEST(SymbolCache, NonPieFixtureAllFunctions) { check_all_functions(SYMFX_C_NOPIE); }
TEST(SymbolCache, CxxFixtureAllFunctions) { check_all_functions(SYMFX_CXX); }

#ifdef SYMFX_C_LLD
TEST(SymbolCache, LldFixtureAllFunctions) {
  // The point of this fixture: a text PT_LOAD with p_vaddr != p_offset.
  bool differs = false;
  for (const Load& l : readelf_loads(SYMFX_C_LLD)) differs |= l.vaddr != l.off;
  EXPECT_TRUE(differs) << "lld no longer separates vaddr and offset; the test lost its point";
  check_all_functions(SYMFX_C_LLD);
}
#endif

TEST(SymbolCache, CxxNamesAsPerfPrintsThem) {
  fg::SymbolCache cache(test_options());
  auto h = cache.object({SYMFX_CXX, ""});
  auto loads = readelf_loads(SYMFX_CXX);
  std::set<std::string> names;
  for (auto& s : nm_functions(SYMFX_CXX)) names.insert(name_at(cache, h, vaddr_to_offset(loads, s.addr)));
  for (const char* want : {"ns::Worker<long>::leaf", "ns::Worker<int>::leaf", "ns::Worker<long>::operator()",
                           "ns::Worker<long>::operator<", "ns::(anonymous namespace)::anon_fn",
                           "ns::Local::run(long)::Inner::go", "ns::Local::run", "main", "cold_path"})
    EXPECT_EQ(names.count(want), 1u) << want;
  for (const std::string& n : names) EXPECT_EQ(n.find(" [clone"), std::string::npos) << n;
  // Aliases compared by the names perf shows (demangled, no parameters), not
  // the mangled ones: fxh's mangled name is the longer, its shown name the
  // shorter; --no-demangle compares the mangled names, as perf does then.
  EXPECT_EQ(names.count("fxalias::shown_longer"), 1u);
  EXPECT_EQ(names.count("fxh"), 0u);
  fg::SymbolOptions mangled = test_options();
  mangled.demangle = false;
  fg::SymbolCache raw(mangled);
  auto rh = raw.object({SYMFX_CXX, ""});
  for (auto& s : nm_functions(SYMFX_CXX))
    if (s.name == "_ZN7fxalias12shown_longerEl") EXPECT_EQ(name_at(raw, rh, vaddr_to_offset(loads, s.addr)), "_Z3fxhliiiiiiiiiiiiiiiiiiiiiii");
}

// (eu-)addr2line -a -f -i -C blocks: "0x...", then (function, location) pairs,
// innermost first; eu-addr2line writes inlined ones as "NAME inlined at FILE:LINE
// in OUTER". Neither tool is right everywhere: binutils names a C++ caller's
// inlined libc function (atol) after the caller; eu-addr2line drops intermediate
// inlined frames whose abstract origin lives elsewhere (libc's do_xfrm_cached).
std::map<uint64_t, std::vector<std::string>> addr2line_chains(const std::string& tool, const std::string& path,
                                                              const std::vector<uint64_t>& addrs) {
  std::string cmd = tool + " -a -f -i -C -e " + shell_quote(path);
  for (uint64_t a : addrs) {
    std::ostringstream h;
    h << " 0x" << std::hex << a;
    cmd += h.str();
  }
  auto r = run_shell(cmd);
  EXPECT_EQ(r.status, 0) << r.err;
  std::map<uint64_t, std::vector<std::string>> out;
  std::istringstream in(r.out);
  std::string line;
  uint64_t cur = 0;
  bool expect_func = false;
  while (std::getline(in, line)) {
    if (line.rfind("0x", 0) == 0) {
      cur = std::stoull(line, nullptr, 16);
      expect_func = true;
      continue;
    }
    if (expect_func) {
      size_t at = line.find(" inlined at ");
      // outermost first
      out[cur].insert(out[cur].begin(), fg::strip_params(line.substr(0, at)));
    }
    expect_func = !expect_func;
  }
  return out;
}

void check_inline_chains(const std::string& tool, const std::string& path, uint64_t step, int min_inlined,
                         bool dynamic = false) {
  SCOPED_TRACE(path);
  auto opts = test_options();
  opts.inline_frames = true;
  fg::SymbolCache cache(opts);
  auto h = cache.object({path, ""});
  if (!cache.object_statuses().at(h).has_debuginfo) GTEST_SKIP() << "no DWARF for " << path;
  std::vector<uint64_t> addrs;
  for (auto& s : nm_functions(path, dynamic))
    for (uint64_t a = s.addr; a < s.addr + s.size; a += step) addrs.push_back(a);
  std::sort(addrs.begin(), addrs.end());
  addrs.erase(std::unique(addrs.begin(), addrs.end()), addrs.end());
  auto chains = addr2line_chains(tool, path, addrs);
  int inlined_seen = 0;
  for (uint64_t a : addrs) {
    std::vector<fg::SymbolizedFrame> out;
    cache.symbolize_vaddr(h, a, false, out);
    const auto& want = chains[a];
    if (want.empty()) continue;
    ASSERT_EQ(out.size(), want.size()) << std::hex << a;
    for (size_t i = 1; i < want.size(); ++i) {  // frame 0 is the symtab name, checked elsewhere
      EXPECT_EQ(out[i].name, want[i]) << std::hex << a;
      EXPECT_TRUE(out[i].inlined);
    }
    EXPECT_FALSE(out[0].inlined);
    inlined_seen += want.size() > 1;
  }
  EXPECT_GT(inlined_seen, min_inlined) << "no inlined code at the sampled addresses";
}

TEST(SymbolCache, InlineChainsMatchEuAddr2line) {
  check_inline_chains("eu-addr2line", SYMFX_C_PIE, 3, 3);
  check_inline_chains("eu-addr2line", SYMFX_CXX, 3, 3);
}

// libc with libc6-dbg: many CUs and deep inlining.
TEST(SymbolCache, LibcInlineChainsMatchAddr2line) {
  check_inline_chains("addr2line", "/usr/lib/x86_64-linux-gnu/libc.so.6", 37, 100, true);
}

struct Made {
  std::string dir, full, stripped_debuglink, minidebug, stripped;
};

// objcopy/strip variants of the PIE fixture, as distributions ship them.
Made make_variants() {
  Made m;
  m.dir = fg::test::temp_dir();
  m.full = m.dir + "/prog";
  std::string q = shell_quote(m.dir);
  auto r = run_shell("cd " + q + " && cp " + shell_quote(SYMFX_C_PIE) + " prog && "
      "objcopy --only-keep-debug prog prog.debug && "
      "strip --strip-all -o prog.dl prog && objcopy --add-gnu-debuglink=prog.debug prog.dl && "
      "strip --strip-all -o prog.stripped prog && "
      // Fedora's MiniDebugInfo recipe (find-debuginfo): function symbols not in .dynsym.
      "nm -D prog --format=posix --defined-only | awk '{print $1}' | sort > dynsyms && "
      "nm prog --format=posix --defined-only | awk '$2==\"T\"||$2==\"t\"{print $1}' | sort > funcsyms && "
      "comm -13 dynsyms funcsyms > keep && "
      "objcopy -S --remove-section .gdb_index --remove-section .comment --keep-symbols=keep prog.debug mini && "
      "xz -f mini && strip --strip-all -o prog.mdi prog && "
      "objcopy --add-section .gnu_debugdata=mini.xz prog.mdi");
  EXPECT_EQ(r.status, 0) << r.err;
  m.stripped_debuglink = m.dir + "/prog.dl";
  m.minidebug = m.dir + "/prog.mdi";
  m.stripped = m.dir + "/prog.stripped";
  return m;
}

uint64_t offset_of(const std::string& path, const std::string& fn) {
  auto loads = readelf_loads(path);
  for (auto& s : nm_functions(path))
    if (s.name == fn) return vaddr_to_offset(loads, s.addr + 2);
  ADD_FAILURE() << fn << " not in " << path;
  return 0;
}

TEST(SymbolCache, DebuglinkAndMiniDebugInfo) {
  Made m = make_variants();
  uint64_t off = offset_of(m.full, "compare_ul");  // a static function: only in .symtab
  fg::SymbolCache cache(test_options());
  auto dl = cache.object({m.stripped_debuglink, ""});
  auto mdi = cache.object({m.minidebug, ""});
  auto bare = cache.object({m.stripped, ""});
  EXPECT_EQ(name_at(cache, dl, off), "compare_ul");
  EXPECT_EQ(name_at(cache, mdi, off), "compare_ul");
  bool resolved = true;
  EXPECT_EQ(name_at(cache, bare, off, false, &resolved), "[prog.stripped]");
  EXPECT_FALSE(resolved);
  auto st = cache.object_statuses();
  EXPECT_EQ(st[dl].debug_file, m.dir + "/prog.debug");
  EXPECT_TRUE(st[dl].has_debuginfo);
  EXPECT_EQ(st[mdi].symtab_source, ".dynsym+.gnu_debugdata");
  EXPECT_FALSE(st[mdi].has_debuginfo);
  EXPECT_TRUE(st[bare].found);
  EXPECT_FALSE(st[bare].has_symbols);
  EXPECT_NE(st[bare].problem.find("stripped"), std::string::npos) << st[bare].problem;
  EXPECT_EQ(st[bare].unresolved, 1u);
}

// Separate debug files where libdwfl looks for them: beside the file, in its
// .debug directory, under an absolute search directory followed by the
// file's directory or a tail of it, by build-id, and beside a symlink's
// target. ElfObject asks libdwfl only where one of those files exists
// (elfutils 0.188 otherwise starts its debuginfod client for nothing), so
// each must still be found; with none anywhere, none is.
TEST(ElfObject, SeparateDebugFilesAreFoundWhereLibdwflLooks) {
  setenv("DEBUGINFOD_URLS", "", 1);
  auto debuginfod_loaded = [] {
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line))
      if (line.find("libdebuginfod") != std::string::npos) return true;
    return false;
  };
  ASSERT_FALSE(debuginfod_loaded()) << "loaded before the test (each test runs in a process of its own)";
  Made m = make_variants();
  const std::string root = m.dir + "/layouts";
  const std::string bid_hex = fg::build_id_hex(raw_build_id(m.full));
  ASSERT_EQ(bid_hex.size(), 40u);
  auto sh = [](const std::string& cmd) { ASSERT_EQ(run_shell(cmd).status, 0) << cmd; };
  const std::string dl = shell_quote(m.stripped_debuglink), debug = shell_quote(m.dir + "/prog.debug");
  struct Layout {
    std::string what, file, search, debug_file;
  };
  std::vector<Layout> layouts = {
      {"beside", root + "/a/prog", "", root + "/a/prog.debug"},
      {".debug", root + "/b/prog", "", root + "/b/.debug/prog.debug"},
      {"search dir + dir", root + "/c/prog", ":.debug:" + root + "/dbg1", root + "/dbg1" + root + "/c/prog.debug"},
      {"search dir + tail", root + "/d/prog", ":.debug:" + root + "/dbg2", root + "/dbg2/d/prog.debug"},
      {"search dir alone", root + "/e/prog", ":.debug:" + root + "/dbg3", root + "/dbg3/prog.debug"},
      {"build-id", root + "/f/prog", ":.debug:" + root + "/dbg4",
       root + "/dbg4/.build-id/" + bid_hex.substr(0, 2) + "/" + bid_hex.substr(2) + ".debug"},
      {"symlink target", root + "/g/prog", "", root + "/h/prog.debug"},
      {"nowhere", root + "/i/prog", "", ""},
  };
  for (const Layout& l : layouts) {
    SCOPED_TRACE(l.what);
    const std::string file_dir = l.file.substr(0, l.file.rfind('/'));
    sh("mkdir -p " + shell_quote(file_dir));
    if (l.what == "build-id") {
      sh("cp " + shell_quote(m.stripped) + " " + shell_quote(l.file));  // no .gnu_debuglink
    } else if (l.what == "symlink target") {
      sh("mkdir -p " + shell_quote(root + "/h") + " && cp " + dl + " " + shell_quote(root + "/h/prog") + " && ln -sf " +
         shell_quote(root + "/h/prog") + " " + shell_quote(l.file));
    } else {
      sh("cp " + dl + " " + shell_quote(l.file));
    }
    if (!l.debug_file.empty())
      sh("mkdir -p " + shell_quote(l.debug_file.substr(0, l.debug_file.rfind('/'))) + " && cp " + debug + " " +
         shell_quote(l.debug_file));
    fg::DebugSearch search;
    search.debuginfo_path = l.search;
    std::string problem;
    auto obj = fg::ElfObject::open(l.file, "", search, &problem);
    ASSERT_TRUE(obj) << problem;
    EXPECT_EQ(obj->debug_file(), l.debug_file);
    EXPECT_EQ(obj->symtab_source() == ".dynsym", l.debug_file.empty()) << obj->symtab_source();
  }
  // Nothing asked debuginfod, which is not configured: its client library
  // was never loaded.
  EXPECT_FALSE(debuginfod_loaded());
}

// symbol_free_pages, where a fold names every address by its object alone
// without a look-up: on real files every address of a page it calls free
// is unresolved, as a pc and as a return address. A stripped file's code is
// free, the same code with its symbols is not, and a missing file is free
// everywhere.
TEST(SymbolCache, SymbolFreePagesHoldNoSymbol) {
  Made m = make_variants();
  const std::string libc = m.dir + "/libc.so.6";
  ASSERT_EQ(run_shell("cp /usr/lib/x86_64-linux-gnu/libc.so.6 " + shell_quote(libc)).status, 0);
  // A static binary stripped as a browser is: no .dynsym, so no symbol at
  // all (the tiny PIE's stripped code page still has its PLT entries).
  const std::string fixture = fg::test::testdata("fold/symfs/tmp/fgtool-fixture/fold_calls_static");
  const std::string bare = m.dir + "/static.stripped";
  ASSERT_EQ(run_shell("strip --strip-all -o " + shell_quote(bare) + " " + shell_quote(fixture)).status, 0);
  fg::SymbolCache cache(test_options());
  const uint64_t code = offset_of(fixture, "main");
  for (const std::string& path : {fixture, bare, m.full, m.stripped, m.minidebug, libc}) {
    SCOPED_TRACE(path);
    const fg::ObjectHandle h = cache.object({path, ""});
    const fg::SymbolFreePages free = cache.symbol_free_pages(h);
    struct stat st {};
    ASSERT_EQ(stat(path.c_str(), &st), 0);
    const uint64_t size = uint64_t(st.st_size);
    const uint64_t step = size > (256u << 10) ? 7 : 1;  // the big ones: every 7th byte
    size_t checked = 0;
    for (uint64_t off = 0; off < size; off += step) {
      if (!free.contains(off)) continue;
      ++checked;
      for (bool ret : {false, true}) {
        bool resolved = true;
        name_at(cache, h, off, ret, &resolved);
        ASSERT_FALSE(resolved) << "offset 0x" << std::hex << off << (ret ? " as a return address" : "");
      }
    }
    EXPECT_GT(checked, 0u) << "no free page (data pages map to no symbol)";
    EXPECT_FALSE(free.contains(size + 4096)) << "past the file";
    if (path == bare) EXPECT_TRUE(free.contains(code)) << "a stripped file's code";
    if (path == fixture) EXPECT_FALSE(free.contains(code)) << "code with symbols";
  }
  const fg::SymbolFreePages missing = cache.symbol_free_pages(cache.object({m.dir + "/gone", ""}));
  EXPECT_TRUE(missing.contains(0));
  EXPECT_TRUE(missing.contains(uint64_t(1) << 40));
}

TEST(SymbolCache, BuildIdCacheSymfsAndMismatch) {
  Made m = make_variants();
  std::string bid = raw_build_id(m.full);
  ASSERT_EQ(bid.size(), 20u);
  std::string hex = fg::build_id_hex(bid);
  // perf's layout: .build-id/xx/rest -> ../../<path>/<bid>/ holding elf (+ debug).
  std::string cache_dir = fg::test::temp_dir();
  std::string recorded = "/opt/gone/prog";
  auto r = run_shell("cd " + shell_quote(cache_dir) + " && mkdir -p .build-id/" + hex.substr(0, 2) +
                     " opt/gone/prog/" + hex + " && cp " + shell_quote(m.stripped) + " opt/gone/prog/" + hex +
                     "/elf && cp " + shell_quote(m.dir + "/prog.debug") + " opt/gone/prog/" + hex +
                     "/debug && ln -s ../../opt/gone/prog/" + hex + " .build-id/" + hex.substr(0, 2) + "/" +
                     hex.substr(2));
  ASSERT_EQ(r.status, 0) << r.err;
  uint64_t off = offset_of(m.full, "fx_leaf");
  {
    auto o = test_options();
    o.buildid_dir = cache_dir;
    fg::SymbolCache cache(o);
    auto h = cache.object({recorded, bid});
    EXPECT_EQ(name_at(cache, h, off), "fx_leaf");
    EXPECT_EQ(cache.resolved_elf_path(h), cache_dir + "/.build-id/" + hex.substr(0, 2) + "/" + hex.substr(2) + "/elf");
    auto st = cache.object_statuses().at(h);
    EXPECT_EQ(st.debug_file, cache_dir + "/.build-id/" + hex.substr(0, 2) + "/" + hex.substr(2) + "/debug");
    EXPECT_EQ(st.build_id_hex, hex);
    EXPECT_EQ(cache.object({recorded, bid}), h);  // opened once
    // A BUILD_ID record's id zero-padded to 24 bytes still matches.
    auto padded = cache.object({SYMFX_C_PIE, raw_build_id(SYMFX_C_PIE) + std::string(4, '\0')});
    EXPECT_TRUE(cache.object_statuses().at(padded).found) << cache.object_statuses().at(padded).problem;
  }
  {
    // A rebuilt binary at the recorded path (different build-id) is skipped for the
    // cache copy, and the reason is kept.
    auto o = test_options();
    o.buildid_dir = cache_dir;
    fg::SymbolCache cache(o);
    auto h = cache.object({SYMFX_C_NOPIE, bid});
    EXPECT_EQ(name_at(cache, h, off), "fx_leaf");
    // Without the cache: mismatch, unresolved, clear reason.
    fg::SymbolCache bare(test_options());
    auto h2 = bare.object({SYMFX_C_NOPIE, bid});
    bool resolved = true;
    EXPECT_EQ(name_at(bare, h2, off, false, &resolved), "[symfx_c_nopie]");
    EXPECT_FALSE(resolved);
    auto st = bare.object_statuses().at(h2);
    EXPECT_FALSE(st.found);
    EXPECT_NE(st.problem.find("build-id mismatch"), std::string::npos) << st.problem;
  }
  {
    auto o = test_options();
    o.symfs = m.dir + "/symfs";
    ASSERT_EQ(run_shell("mkdir -p " + shell_quote(o.symfs + "/usr/bin") + " && cp " + shell_quote(m.full) + " " +
                        shell_quote(o.symfs + "/usr/bin/remote-prog")).status, 0);
    fg::SymbolCache cache(o);
    auto h = cache.object({"/usr/bin/remote-prog", bid});
    EXPECT_EQ(name_at(cache, h, off), "fx_leaf");
    EXPECT_EQ(cache.resolved_elf_path(h), o.symfs + "/usr/bin/remote-prog");
    EXPECT_EQ(cache.object_display_name(h), "[remote-prog]");
  }
}

TEST(SymbolCache, BadFilesGiveStatusNotCrashes) {
  std::string dir = fg::test::temp_dir();
  auto r = run_shell("cd " + shell_quote(dir) + " && head -c 1500 " + shell_quote(SYMFX_C_PIE) +
                     " > truncated && head -c 100 /dev/urandom > garbage && printf '\\177ELF\\2\\1\\1' > tiny && "
                     "cp " + shell_quote(SYMFX_C_PIE) + " corrupt && "
                     "printf '\\377\\377\\377\\377\\377\\377\\377\\377' | dd of=corrupt bs=1 seek=32 conv=notrunc 2>/dev/null && "
                     "mkdir adir");
  ASSERT_EQ(r.status, 0) << r.err;
  fg::SymbolCache cache(test_options());
  for (const char* name : {"truncated", "garbage", "tiny", "corrupt", "adir", "missing"}) {
    SCOPED_TRACE(name);
    auto h = cache.object({dir + "/" + name, ""});
    for (uint64_t off : {uint64_t(0), uint64_t(0x1000), uint64_t(0x1234), ~uint64_t(0)}) {
      std::vector<fg::SymbolizedFrame> out;
      cache.symbolize(h, off, true, out);
      ASSERT_EQ(out.size(), 1u);
      EXPECT_FALSE(out[0].resolved);
      EXPECT_EQ(out[0].name, "[" + std::string(name) + "]");
    }
    auto st = cache.object_statuses().at(h);
    EXPECT_FALSE(st.problem.empty());
  }
  auto statuses = cache.object_statuses();
  EXPECT_NE(statuses.back().problem.find("No such file"), std::string::npos) << statuses.back().problem;
  // Pseudo mappings have no file.
  auto heap = cache.object({"[heap]", ""});
  EXPECT_EQ(cache.object_display_name(heap), "[heap]");
  auto vdso = cache.object({"[vdso]", ""});
  EXPECT_FALSE(cache.object_statuses().at(vdso).found);
}

}  // namespace

namespace {

// The vdso: perf's cache copy ([vdso]/<bid>/vdso), our own vdso when the build-ids
// match, and a clear reason when they do not.
TEST(SymbolCache, VdsoFromBuildIdCacheOrLiveImage) {
  std::string image = fg::live_vdso_image();
  if (image.empty()) GTEST_SKIP() << "no vdso in this process";
  std::string bid = fg::build_id_of_image(image);
  ASSERT_FALSE(bid.empty());
  std::string hex = fg::build_id_hex(bid);
  std::string cache_dir = fg::test::temp_dir();
  std::string file = cache_dir + "/[vdso]/" + hex + "/vdso";
  ASSERT_EQ(run_shell("mkdir -p " + shell_quote(cache_dir + "/[vdso]/" + hex)).status, 0);
  fg::test::write_file(file, image);
  // Oracle: the image's dynamic symbols as nm sees them.
  auto loads = readelf_loads(file);
  auto nm = run_shell("nm -D -S --defined-only " + shell_quote(file) + " | awk '$3==\"T\"{print $1, $2, $4}'");
  std::map<std::string, uint64_t> fn;
  std::istringstream in(nm.out);
  std::string a, sz, name;
  while (in >> a >> sz >> name) fn[name.substr(0, name.find('@'))] = std::stoull(a, nullptr, 16) + std::stoull(sz, nullptr, 16) / 2;
  ASSERT_TRUE(fn.count("__vdso_clock_gettime")) << nm.out;
  uint64_t off = vaddr_to_offset(loads, fn["__vdso_clock_gettime"]);
  {
    auto o = test_options();
    o.buildid_dir = cache_dir;
    fg::SymbolCache cache(o);
    auto h = cache.object({"[vdso]", bid});
    EXPECT_EQ(cache.resolved_elf_path(h), file);
    // clock_gettime is a weak alias of the global __vdso_clock_gettime: perf shows the latter.
    EXPECT_EQ(name_at(cache, h, off), "__vdso_clock_gettime");
    EXPECT_EQ(cache.object_display_name(h), "[vdso]");
  }
  {
    fg::SymbolCache cache(test_options());  // empty cache: the live image
    auto h = cache.object({"[vdso]", bid});
    EXPECT_EQ(name_at(cache, h, off), "__vdso_clock_gettime");
    std::string path = cache.resolved_elf_path(h);
    EXPECT_EQ(fg::test::read_file(path), image);
  }
  {
    fg::SymbolCache cache(test_options());
    auto h = cache.object({"[vdso]", std::string(20, '\x42')});
    bool resolved = true;
    EXPECT_EQ(name_at(cache, h, off, false, &resolved), "[vdso]");
    EXPECT_FALSE(resolved);
    EXPECT_NE(cache.object_statuses().at(h).problem.find("this machine's vdso"), std::string::npos);
  }
}

}  // namespace

namespace {

std::string frames_text(const std::vector<fg::SymbolizedFrame>& frames) {
  std::string s;
  for (const auto& f : frames) s += std::string(f.name) + (f.resolved ? "+" : "-") + (f.inlined ? "i" : "") + ";";
  return s;
}

}  // namespace

// The fold keeps every answer itself (keep_answers(false)): each lookup,
// asked twice, must give what the keeping cache gives, inline chains, the
// kernel, JIT maps and the lookup/unresolved counts included.
TEST(SymbolCache, NotKeepingAnswersGivesTheSameFrames) {
  std::string dir = fg::test::temp_dir();
  fg::test::write_file(dir + "/kallsyms", "ffffffff81000000 T _stext\nffffffff81000100 T second\n");
  fg::test::write_file(dir + "/perf-77.map", "1000 100 jitted_a\n2000 10 jitted_b\n");
  fg::SymbolOptions o = test_options();
  o.inline_frames = true;
  o.kallsyms_path = dir + "/kallsyms";
  o.jit_map_dir = dir;
  fg::SymbolCache keeping(o), computing(o);
  computing.keep_answers(false);
  const std::string path = SYMFX_CXX;
  fg::ObjectHandle hk = keeping.object({path, raw_build_id(path)});
  fg::ObjectHandle hc = computing.object({path, raw_build_id(path)});
  auto loads = readelf_loads(path);
  ASSERT_FALSE(loads.empty());
  size_t inlined = 0, lookups = 0;
  for (int pass = 0; pass < 2; ++pass) {
    for (const Load& l : loads) {
      for (uint64_t off = l.off; off < l.off + l.filesz; off += 5) {
        for (bool ret : {false, true}) {
          std::vector<fg::SymbolizedFrame> a, b;
          keeping.symbolize(hk, off, ret, a);
          computing.symbolize(hc, off, ret, b);
          ASSERT_EQ(frames_text(a), frames_text(b)) << std::hex << off;
          inlined += a.size() > 1;
          ++lookups;
        }
      }
    }
    for (uint64_t addr = 0xffffffff80ffff00; addr < 0xffffffff81000200; addr += 0x11) {
      std::vector<fg::SymbolizedFrame> a, b;
      keeping.symbolize_kernel(addr, pass == 1, a);
      computing.symbolize_kernel(addr, pass == 1, b);
      ASSERT_EQ(frames_text(a), frames_text(b)) << std::hex << addr;
    }
    for (uint64_t addr = 0xf00; addr < 0x2100; addr += 0x7) {
      std::vector<fg::SymbolizedFrame> a, b;
      keeping.symbolize_jit(77, addr, pass == 1, a);
      computing.symbolize_jit(77, addr, pass == 1, b);
      ASSERT_EQ(frames_text(a), frames_text(b)) << std::hex << addr;
    }
  }
  EXPECT_GT(inlined, 0u);  // inline chains (more than one frame) were compared
  auto sk = keeping.object_statuses(), sc = computing.object_statuses();
  ASSERT_EQ(sk.size(), 1u);
  ASSERT_EQ(sc.size(), 1u);
  EXPECT_EQ(sc[0].lookups, lookups);
  EXPECT_EQ(sk[0].unresolved, sc[0].unresolved);
  EXPECT_GT(sc[0].unresolved, 0u);
  EXPECT_EQ(keeping.kernel_status().lookups, computing.kernel_status().lookups);
  EXPECT_EQ(keeping.kernel_status().unresolved, computing.kernel_status().unresolved);
  EXPECT_GT(computing.kernel_status().unresolved, 0u);
}

namespace {

// Resident KB of this process's mappings of `path` (from /proc/self/smaps).
size_t resident_kb_of(const std::string& path) {
  std::string smaps = fg::test::read_file("/proc/self/smaps");
  std::istringstream in(smaps);
  std::string line;
  bool ours = false;
  size_t kb = 0;
  while (std::getline(in, line)) {
    if (!line.empty() && std::isxdigit(static_cast<unsigned char>(line[0])) && line.find('-') < line.find(' ')) {
      ours = line.size() >= path.size() && line.compare(line.size() - path.size(), path.size(), path) == 0;
    } else if (ours && line.rfind("Rss:", 0) == 0) {
      kb += std::stoul(line.substr(4));
    }
  }
  return kb;
}

}  // namespace

// Building the symbol table reads the whole .symtab and its names through
// libelf's mapping of the file; those pages are handed back afterwards
// (release_mapped_pages), and names still read back from the mapping.
TEST(ElfObject, SymbolTablePagesAreNotKeptResident) {
  const std::string dir = fg::test::temp_dir();
  const std::string copy = dir + "/libc-with-symtab.so";
  // A private copy: nothing else maps it, so its Rss is the object's own.
  auto r = run_shell("cp /usr/lib/x86_64-linux-gnu/libc.so.6 " + shell_quote(copy));
  ASSERT_EQ(r.status, 0) << r.err;
  fg::DebugSearch search;
  std::string problem;
  auto obj = fg::ElfObject::open(copy, "", search, &problem);
  ASSERT_TRUE(obj) << problem;
  ASSERT_GT(obj->symbols().size(), 1000u);
  EXPECT_LT(resident_kb_of(copy), 256u) << "the symbol table's pages stayed resident";
  // The names point into the released mapping: they read back intact.
  // Compared with nm's names of the files the table came from (the copy's
  // .dynsym, and libc6-dbg's .symtab when libdwfl found it): every name we
  // have must be one of theirs.
  std::set<std::string> nm_names;
  for (const std::string& f : {copy, obj->debug_file()}) {
    if (f.empty()) continue;
    for (bool dynamic : {false, true})
      for (const NmSym& s : nm_functions(f, dynamic)) nm_names.insert(s.name.substr(0, s.name.find('@')));
  }
  size_t known = 0;
  for (const fg::ElfSymbol& s : obj->symbols()) known += !s.plt && nm_names.count(s.name);
  EXPECT_GT(known, obj->real_symbol_count() * 3 / 4);  // nm_functions skips unsized and IFUNC symbols
  // Reading the names faulted pages back in (of the debug file, when the
  // table came from it); released again, they go, and the names read back
  // the same. (NamePagesAreHandedBackAsNamesAreRead shows the bound on a
  // string table big enough for the difference to show.)
  auto resident = [&] { return resident_kb_of(copy) + (obj->debug_file().empty() ? 0 : resident_kb_of(obj->debug_file())); };
  obj->release_mapped_pages();
  EXPECT_LT(resident(), 256u) << "released again, but " << resident() << " KB stayed";
  size_t same = 0;
  for (const fg::ElfSymbol& s : obj->symbols()) same += !s.plt && nm_names.count(s.name);
  EXPECT_EQ(same, known);  // and they still read back the same
}

// Symbol names read after the table is built fault the string table's pages
// back in; SymbolCache hands them back every names_per_release names, so a
// long fold does not keep them (busy recordings: 23 MB). libtorch_cpu has a
// 2.7 MB .dynstr: thousands of names spread over it would keep most of it.
TEST(SymbolCache, NamePagesAreHandedBackAsNamesAreRead) {
  std::string path;
  for (const char* p : {"/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13.0", "/usr/lib/x86_64-linux-gnu/libtorch_cpu.so"})
    if (access(p, R_OK) == 0) {
      path = p;
      break;
    }
  if (path.empty()) GTEST_SKIP() << "libtorch_cpu is not installed (scripts/setup.sh --demo installs it)";
  auto syms = nm_functions(path, true);
  auto loads = readelf_loads(path);
  ASSERT_GT(syms.size(), 20000u);
  for (uint32_t every : {1u, 0u}) {
    SCOPED_TRACE(every ? "released after every name" : "never released after the build");
    fg::SymbolOptions o = test_options();
    o.names_per_release = every;
    fg::SymbolCache cache(o);
    const fg::ObjectHandle h = cache.object(fg::ObjectKey{path, ""});
    size_t resolved = 0;
    for (size_t i = 0; i < syms.size(); i += syms.size() / 3000) {
      bool ok = false;
      name_at(cache, h, vaddr_to_offset(loads, syms[i].addr), false, &ok);
      resolved += ok;
    }
    EXPECT_GT(resolved, 2500u);
    const size_t kb = resident_kb_of(path);
    if (every) EXPECT_LT(kb, 256u) << "the names' pages stayed resident";
    else EXPECT_GT(kb, 1024u) << "reading 3000 names faulted in little: the check above proves nothing";
  }
}
