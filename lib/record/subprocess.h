// Running perf and the fgtool binary itself as child processes: with output
// captured (for capability probes) or with the terminal inherited (the
// recording), always by argument vector, never through a shell.
#pragma once

#include <string>
#include <vector>

namespace fg {

// How a child ended. Exit codes and signals are kept apart: perf exiting
// with status 255 is not "killed by signal 127" (the 128+N shell
// convention cannot tell them apart).
struct ChildStatus {
  bool started = false;  // false: it could not be run at all
  int exit_code = -1;    // when it exited normally
  int signal = 0;        // when a signal ended it
  bool ok() const { return started && signal == 0 && exit_code == 0; }
  // fgtool's own exit status: the child's code, 128+N for signal N, 127 when it did not start.
  int shell_status() const;
  // "exit status 255", "killed by signal 9 (Killed)", "could not be started".
  std::string describe() const;
};

struct SubprocessResult {
  int status = -1;       // exit status; 128+N when killed by signal N; 127 when it could not start
  std::string output;    // stdout and stderr together (captured runs only; first 64 KiB)
};

// Runs argv[0] (searched in PATH) with stdout+stderr captured, stdin /dev/null.
SubprocessResult run_captured(const std::vector<std::string>& argv);

// Runs argv[0] (searched in PATH) with the terminal inherited and waits. While
// waiting, SIGINT/SIGTERM/SIGQUIT are ignored here so that Ctrl-C reaches the
// child (perf stops the workload and writes its file) and we still report.
ChildStatus run_inherited(const std::vector<std::string>& argv);

// The full path of an executable found in PATH (or `name` itself when it
// contains a '/' and is executable); empty when not found.
std::string find_in_path(const std::string& name);

// "perf record -e 'a b'": argv as a copy-pasteable shell line.
std::string shell_line(const std::vector<std::string>& argv);

}  // namespace fg
