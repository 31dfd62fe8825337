// Interrupted writes and inputs cut short: Ctrl-C (SIGINT), SIGTERM or
// SIGKILL while fgtool svg writes never leave a half-written file under the
// requested name (it is the old complete file or absent), SIGINT/SIGTERM also
// remove the temporary file, and a perf.data pipe that closes early is an
// error naming the byte offset, not a silently shorter profile.
#include <gtest/gtest.h>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "test_support.h"

using namespace fg::test;

namespace {

std::vector<std::string> tmp_files(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d))
      if (std::string(e->d_name).find(".tmp.") != std::string::npos) out.push_back(e->d_name);
    closedir(d);
  }
  return out;
}

// A folded file big enough that `fgtool svg` takes a while (wide and deep).
std::string big_folded(const std::string& dir) {
  std::string path = dir + "/big.folded";
  std::string text;
  text.reserve(40 << 20);
  for (int i = 0; i < 120000; ++i) {
    text += "main;loop" + std::to_string(i % 97) + ";work" + std::to_string(i % 1013) + ";leaf" + std::to_string(i) +
            ";deeper" + std::to_string(i % 7) + " " + std::to_string(1 + i % 5) + "\n";
  }
  write_file(path, text);
  return path;
}

pid_t spawn(const std::vector<std::string>& argv) {
  pid_t pid = fork();
  if (pid == 0) {
    std::vector<char*> a;
    for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    int devnull = ::open("/dev/null", O_WRONLY);
    dup2(devnull, 2);
    execv(a[0], a.data());
    _exit(127);
  }
  return pid;
}

struct Outcome {
  bool signalled = false;  // killed by the signal (not finished first)
  int status = 0;
};

// Runs fgtool svg BIG -o target and sends `sig` once its temporary file
// exists (it is writing), or after `fallback_ms`.
Outcome interrupt_svg(const std::string& dir, const std::string& big, const std::string& target, int sig) {
  // --minwidth 0: every frame drawn, so the write itself takes a while (~60 MB).
  pid_t pid = spawn({fgtool_bin(), "svg", "--minwidth", "0", big, "-o", target});
  auto start = std::chrono::steady_clock::now();
  while (tmp_files(dir).empty() && std::chrono::steady_clock::now() - start < std::chrono::seconds(30)) {
    int st;
    if (waitpid(pid, &st, WNOHANG) == pid) return Outcome{false, st};
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  kill(pid, sig);
  int st = 0;
  waitpid(pid, &st, 0);
  return Outcome{WIFSIGNALED(st) && WTERMSIG(st) == sig, st};
}

}  // namespace

TEST(Interrupt, SignalDuringSvgWriteLeavesOldFileOrNone) {
  std::string dir = temp_dir();
  std::string big = big_folded(dir);
  const std::string old_svg = "<svg xmlns=\"http://www.w3.org/2000/svg\"><!-- old complete file --></svg>\n";
  int interrupted = 0;
  for (int sig : {SIGINT, SIGTERM, SIGKILL}) {
    SCOPED_TRACE(strsignal(sig));
    // Once with an existing output (must stay as it was), once without (must not appear).
    for (bool existing : {true, false}) {
      std::string out_dir = dir + "/out" + std::to_string(sig) + (existing ? "e" : "n");
      mkdir(out_dir.c_str(), 0755);
      std::string target = out_dir + "/flame.svg";
      if (existing) write_file(target, old_svg);
      Outcome o = interrupt_svg(out_dir, big, target, sig);
      struct stat st;
      bool exists = stat(target.c_str(), &st) == 0;
      if (!o.signalled) {
        // It finished before the signal: then the file is the new complete one.
        ASSERT_TRUE(exists);
        std::string svg = read_file(target);
        EXPECT_NE(svg.rfind("</svg>"), std::string::npos);
        continue;
      }
      ++interrupted;
      if (existing) {
        ASSERT_TRUE(exists);
        EXPECT_EQ(read_file(target), old_svg);
      } else {
        EXPECT_FALSE(exists) << target << " appeared although fgtool was killed";
      }
      if (sig != SIGKILL) {
        EXPECT_TRUE(tmp_files(out_dir).empty()) << "temporary file left behind after " << sig;
      }
    }
  }
  // The input is large enough that at least the signals sent mid-write hit.
  EXPECT_GT(interrupted, 0);
}

TEST(Interrupt, OutputToDevNullAndFifoIsWrittenInPlace) {
  std::string dir = temp_dir();
  write_file(dir + "/a.folded", "main;f 1\n");
  auto r = run_shell(shell_quote(fgtool_bin()) + " svg " + shell_quote(dir + "/a.folded") + " -o /dev/null");
  EXPECT_EQ(r.status, 0) << r.err;
  struct stat st;
  ASSERT_EQ(stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode)) << "/dev/null was replaced";
  std::string fifo = dir + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  r = run_shell("cat " + shell_quote(fifo) + " > " + shell_quote(dir + "/via_fifo.svg") + " & " +
                shell_quote(fgtool_bin()) + " svg " + shell_quote(dir + "/a.folded") + " -o " + shell_quote(fifo) +
                "; wait");
  EXPECT_EQ(r.status, 0) << r.err;
  ASSERT_EQ(stat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_NE(read_file(dir + "/via_fifo.svg").find("</svg>"), std::string::npos);
}

TEST(Interrupt, OutputThroughSymlinkReplacesTheTarget) {
  std::string dir = temp_dir();
  write_file(dir + "/a.folded", "main;f 1\n");
  write_file(dir + "/real.svg", "old");
  ASSERT_EQ(symlink("real.svg", (dir + "/link.svg").c_str()), 0);
  auto r = run_shell(shell_quote(fgtool_bin()) + " svg " + shell_quote(dir + "/a.folded") + " -o " +
                     shell_quote(dir + "/link.svg"));
  ASSERT_EQ(r.status, 0) << r.err;
  struct stat st;
  ASSERT_EQ(lstat((dir + "/link.svg").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_NE(read_file(dir + "/real.svg").find("</svg>"), std::string::npos);
}

TEST(Interrupt, PerfDataPipeClosedEarlyIsAnErrorWithTheOffset) {
  std::string pipe_data = shell_quote(testdata("perf/pipe.data"));
  std::string dir = temp_dir();
  for (int bytes : {10, 1000, 5000}) {
    SCOPED_TRACE(bytes);
    auto r = run_shell("head -c " + std::to_string(bytes) + " " + pipe_data + " | " + shell_quote(fgtool_bin()) +
                       " fold - -o " + shell_quote(dir + "/out.folded"));
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_NE(r.err.find("byte "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("truncated"), std::string::npos) << r.err;
    struct stat st;
    EXPECT_NE(stat((dir + "/out.folded").c_str(), &st), 0) << "no output on failure";
  }
  // --partial keeps what was read, and says where it stopped.
  auto r = run_shell("head -c 5000 " + pipe_data + " | " + shell_quote(fgtool_bin()) + " fold --partial - -o " +
                     shell_quote(dir + "/partial.folded"));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("byte "), std::string::npos) << r.err;
}

TEST(Interrupt, FoldedPipeClosedMidLineIsReported) {
  // Folded text cut inside a line: the last line has no count, which the
  // strict reader reports with its line number.
  auto r = run_shell("printf 'main;a 1\\nmain;b' | " + shell_quote(fgtool_bin()) + " svg - -o /dev/null");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find(":2:"), std::string::npos) << r.err;
}
