#include "record/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

extern char** environ;

namespace fg {

namespace {

std::vector<char*> c_argv(const std::vector<std::string>& argv) {
  std::vector<char*> v;
  for (const auto& a : argv) v.push_back(const_cast<char*>(a.c_str()));
  v.push_back(nullptr);
  return v;
}

ChildStatus wait_for(pid_t pid) {
  ChildStatus c;
  c.started = true;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      c.exit_code = 1;  // lost track of it (ECHILD): not a success
      return c;
    }
  }
  if (WIFEXITED(status)) c.exit_code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status)) c.signal = WTERMSIG(status);
  else c.exit_code = 1;
  return c;
}

}  // namespace

int ChildStatus::shell_status() const {
  if (!started) return 127;
  if (signal) return 128 + signal;
  return exit_code;
}

std::string ChildStatus::describe() const {
  if (!started) return "could not be started";
  if (signal) {
    const char* name = ::strsignal(signal);
    return "killed by signal " + std::to_string(signal) + (name ? std::string(" (") + name + ")" : std::string());
  }
  return "exit status " + std::to_string(exit_code);
}

std::string find_in_path(const std::string& name) {
  auto executable = [](const std::string& p) {
    struct stat st;
    return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
  };
  if (name.find('/') != std::string::npos) return executable(name) ? name : std::string();
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t b = 0;
  while (b <= dirs.size()) {
    size_t e = dirs.find(':', b);
    if (e == std::string::npos) e = dirs.size();
    std::string dir = dirs.substr(b, e - b);
    std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    if (executable(candidate)) return candidate;
    b = e + 1;
  }
  return {};
}

SubprocessResult run_captured(const std::vector<std::string>& argv) {
  SubprocessResult r;
  int fds[2];
  if (argv.empty() || pipe2(fds, O_CLOEXEC) != 0) return r;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
  auto args = c_argv(argv);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    r.status = 127;
    r.output = argv[0] + ": " + std::strerror(rc);
    return r;
  }
  char buf[4096];
  for (;;) {
    ssize_t n = read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (r.output.size() < (64u << 10)) r.output.append(buf, size_t(n));
  }
  close(fds[0]);
  r.status = wait_for(pid).shell_status();
  return r;
}

ChildStatus run_inherited(const std::vector<std::string>& argv) {
  if (argv.empty()) return ChildStatus{};
  auto args = c_argv(argv);
  struct sigaction ignore {}, old_int {}, old_term {}, old_quit {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  sigaction(SIGINT, &ignore, &old_int);
  sigaction(SIGTERM, &ignore, &old_term);
  sigaction(SIGQUIT, &ignore, &old_quit);
  // The child gets the default dispositions back.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  sigaddset(&defaults, SIGQUIT);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, args[0], nullptr, &attr, args.data(), environ);
  posix_spawnattr_destroy(&attr);
  ChildStatus status = rc == 0 ? wait_for(pid) : ChildStatus{};
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  sigaction(SIGQUIT, &old_quit, nullptr);
  return status;
}

std::string shell_line(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    bool plain = !a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                                   "-_./:=,+@%") == std::string::npos;
    if (plain) {
      out += a;
    } else {
      out += '\'';
      for (char c : a) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
      out += '\'';
    }
  }
  return out;
}

}  // namespace fg
