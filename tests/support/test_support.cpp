#include "test_support.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace fg::test {

std::string source_dir() { return FGTOOL_SOURCE_DIR; }
std::string testdata(const std::string& relative) { return source_dir() + "/testdata/" + relative; }
std::string fgtool_bin() { return FGTOOL_BIN; }

std::vector<std::string> perf_data_fixtures() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(testdata("")))
    if (e.is_regular_file() && e.path().extension() == ".data") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

namespace {
struct TempDirs {
  std::vector<std::string> dirs;
  ~TempDirs() {
    if (std::getenv("FGTOOL_KEEP_TEST_FILES")) return;
    for (auto& d : dirs) std::filesystem::remove_all(d);
  }
};
TempDirs& temp_dirs() {
  static TempDirs t;
  return t;
}
}  // namespace

std::string temp_dir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "fgtool-test-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  temp_dirs().dirs.push_back(tmpl);
  return tmpl;
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') q += "'\\''";
    else q += c;
  }
  return q + "'";
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_file(const std::string& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary);
  out << contents;
  if (!out) throw std::runtime_error("cannot write " + path);
}

CommandResult run_shell(const std::string& command_line) {
  std::string dir = temp_dir();
  std::string out = dir + "/out", err = dir + "/err";
  std::string full = "( " + command_line + " ) >" + shell_quote(out) + " 2>" + shell_quote(err) + " </dev/null";
  int st = std::system(full.c_str());
  CommandResult r;
  if (st == -1) r.status = -1;
  else if (WIFEXITED(st)) r.status = WEXITSTATUS(st);
  else if (WIFSIGNALED(st)) r.status = 128 + WTERMSIG(st);
  r.out = read_file(out);
  r.err = read_file(err);
  return r;
}

std::string perf_unavailable_reason() {
  static std::once_flag once;
  static std::string reason;
  std::call_once(once, [] {
    auto r = run_shell("command -v perf >/dev/null || { echo 'perf is not installed'; exit 1; }; "
                       "perf record -q -e cpu-clock -o /dev/null true 2>&1 || exit 1");
    if (r.status != 0) {
      reason = "perf cannot record here: " + r.out + r.err;
      if (reason.size() > 300) reason.resize(300);
    }
  });
  return reason;
}

std::string xml_wellformed_error(const std::string& xml) {
  std::string dir = temp_dir();
  write_file(dir + "/doc.xml", xml);
  auto r = run_shell("xmllint --noout --nonet " + shell_quote(dir + "/doc.xml"));
  if (r.status == 127) return "xmllint is not installed (apt-get install libxml2-utils)";
  return r.status == 0 ? std::string() : (r.err.empty() ? std::string("xmllint failed") : r.err);
}

}  // namespace fg::test
