// Helpers shared by the test binaries: paths, running the built fgtool, and
// whether perf can record on this machine (tests that need it skip otherwise).
#pragma once

#include <string>
#include <vector>

namespace fg::test {

std::string source_dir();   // the repository root
std::string testdata(const std::string& relative);
std::string fgtool_bin();
std::string temp_dir();     // a fresh directory, removed at exit
// Every perf.data fixture under testdata/ (files named *.data), full paths, sorted.
std::vector<std::string> perf_data_fixtures();

struct CommandResult {
  int status = -1;          // exit status, or 128+signal
  std::string out, err;
};
// Runs a shell command line; stdout and stderr are captured separately.
CommandResult run_shell(const std::string& command_line);
// "'...'" quoting for the shell.
std::string shell_quote(const std::string& s);

std::string read_file(const std::string& path);
void write_file(const std::string& path, const std::string& contents);

// Empty if `perf record` works here; otherwise the reason to print when skipping.
std::string perf_unavailable_reason();

// Checks that text is well-formed XML with `xmllint --noout`; returns the
// error text, or empty when well-formed.
std::string xml_wellformed_error(const std::string& xml);

}  // namespace fg::test
