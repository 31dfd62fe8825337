// AtomicOutput replaces files safely: a temporary file with a random name
// created with O_EXCL (a symlink planted under the old predictable name
// redirects nothing), the target's permissions kept, read-only files only
// with force, inputs never, symlinks followed to the file they name.
#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "diagnostics/atomic_output.h"
#include "diagnostics/input_error.h"
#include "test_support.h"

namespace {

using fg::AtomicOutput;
using fg::test::read_file;
using fg::test::temp_dir;
using fg::test::write_file;

mode_t mode_of(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') out.push_back(e->d_name);
    closedir(d);
  }
  return out;
}

void write_through(const std::string& path, const std::string& text) {
  AtomicOutput out(path);
  out.write(text);
  out.commit();
}

struct PolicyReset {
  ~PolicyReset() { fg::set_output_policy({}); }
};

TEST(AtomicOutput, TemporaryNameIsRandomAndPlantedSymlinkIsNotFollowed) {
  std::string dir = temp_dir();
  std::string victim = dir + "/victim";
  write_file(victim, "precious\n");
  // The name the old code used: NAME.tmp.PID.
  std::string planted = dir + "/out.svg.tmp." + std::to_string(getpid());
  ASSERT_EQ(::symlink(victim.c_str(), planted.c_str()), 0);
  {
    AtomicOutput a(dir + "/out.svg");
    AtomicOutput b(dir + "/out.svg");
    // Two temporary files, neither the planted name: out.svg.tmp.XXXXXX.
    std::vector<std::string> tmp;
    for (const auto& n : names_in(dir))
      if (n.rfind("out.svg.tmp.", 0) == 0 && dir + "/" + n != planted) tmp.push_back(n);
    ASSERT_EQ(tmp.size(), 2u);
    EXPECT_NE(tmp[0], tmp[1]);
    for (const auto& n : tmp) EXPECT_EQ(n.size(), std::string("out.svg.tmp.XXXXXX").size()) << n;
    a.write("new\n");
    a.commit();
  }
  EXPECT_EQ(read_file(victim), "precious\n");
  EXPECT_EQ(read_file(dir + "/out.svg"), "new\n");
  struct stat st {};
  ASSERT_EQ(::lstat(planted.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));  // left alone
}

TEST(AtomicOutput, KeepsTheTargetsMode) {
  std::string dir = temp_dir();
  std::string p = dir + "/private.folded";
  write_file(p, "old\n");
  ASSERT_EQ(::chmod(p.c_str(), 0600), 0);
  write_through(p, "new\n");
  EXPECT_EQ(read_file(p), "new\n");
  EXPECT_EQ(mode_of(p), mode_t(0600));
  ASSERT_EQ(::chmod(p.c_str(), 0640), 0);
  write_through(p, "newer\n");
  EXPECT_EQ(mode_of(p), mode_t(0640));
  // A new file gets 0666 less the umask, not mkstemp's 0600.
  mode_t old = ::umask(022);
  write_through(dir + "/fresh.svg", "x");
  ::umask(old);
  EXPECT_EQ(mode_of(dir + "/fresh.svg"), mode_t(0644));
}

TEST(AtomicOutput, ReadOnlyTargetNeedsForce) {
  PolicyReset reset;
  std::string dir = temp_dir();
  std::string p = dir + "/ro.svg";
  write_file(p, "keep\n");
  ASSERT_EQ(::chmod(p.c_str(), 0444), 0);
  try {
    AtomicOutput out(p);
    FAIL() << "a read-only target was opened";
  } catch (const fg::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("read-only (mode 0444)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--force"), std::string::npos) << e.what();
  }
  EXPECT_EQ(read_file(p), "keep\n");
  EXPECT_EQ(names_in(dir).size(), 1u);  // no temporary file left
  fg::OutputPolicy force;
  force.force = true;
  fg::set_output_policy(force);
  write_through(p, "replaced\n");
  EXPECT_EQ(read_file(p), "replaced\n");
  EXPECT_EQ(mode_of(p), mode_t(0444));  // still read-only afterwards
}

TEST(AtomicOutput, RefusesToReplaceAnInputBySameInode) {
  PolicyReset reset;
  std::string dir = temp_dir();
  std::string in = dir + "/rec.data";
  write_file(in, "recording\n");
  ASSERT_EQ(::link(in.c_str(), (dir + "/hard").c_str()), 0);
  ASSERT_EQ(::symlink("rec.data", (dir + "/soft").c_str()), 0);
  fg::OutputPolicy p;
  p.inputs = {"-", dir + "/missing", in};
  p.force = true;  // force does not allow it either
  fg::set_output_policy(p);
  for (std::string out : {in, dir + "/./rec.data", dir + "/hard", dir + "/soft"}) {
    try {
      AtomicOutput o(out);
      ADD_FAILURE() << out << ": an input was opened for writing";
    } catch (const fg::UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("is also an input"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(read_file(in), "recording\n");
  write_through(dir + "/other.folded", "ok\n");  // any other name is fine
}

TEST(AtomicOutput, SymlinksAreFollowedEvenWhenDangling) {
  std::string dir = temp_dir();
  ASSERT_EQ(::mkdir((dir + "/real").c_str(), 0755), 0);
  write_file(dir + "/real/a.svg", "old\n");
  ASSERT_EQ(::symlink("real/a.svg", (dir + "/link.svg").c_str()), 0);
  write_through(dir + "/link.svg", "via link\n");
  EXPECT_EQ(read_file(dir + "/real/a.svg"), "via link\n");
  struct stat st {};
  ASSERT_EQ(::lstat((dir + "/link.svg").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  // Dangling: the file the link names is created (as `cmd > link` does), the link kept.
  ASSERT_EQ(::symlink("real/new.svg", (dir + "/dangling.svg").c_str()), 0);
  write_through(dir + "/dangling.svg", "created\n");
  ASSERT_EQ(::lstat((dir + "/dangling.svg").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(read_file(dir + "/real/new.svg"), "created\n");
  // A loop is an error, not a hang.
  ASSERT_EQ(::symlink("loop2", (dir + "/loop1").c_str()), 0);
  ASSERT_EQ(::symlink("loop1", (dir + "/loop2").c_str()), 0);
  EXPECT_THROW(AtomicOutput(dir + "/loop1"), fg::UsageError);
}

TEST(AtomicOutput, UncommittedOutputLeavesNothing) {
  std::string dir = temp_dir();
  { AtomicOutput out(dir + "/x.svg"); out.write("partial"); }
  EXPECT_TRUE(names_in(dir).empty());
}

// A write that fails (here: the file size limit, as a full disk would) is
// reported by commit(), the temporary file is removed and the old target is
// left exactly as it was, mode included.
TEST(AtomicOutput, FailedWriteKeepsTheOldTargetAndRemovesTheTemporary) {
  std::string dir = temp_dir();
  std::string target = dir + "/out.folded";
  write_file(target, "old complete contents\n");
  ASSERT_EQ(::chmod(target.c_str(), 0640), 0);
  struct rlimit old {};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);  // EFBIG instead of a signal
  struct rlimit small = old;
  small.rlim_cur = 64 << 10;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  bool threw = false;
  std::string message;
  {
    AtomicOutput out(target);
    try {
      out.write(std::string(1 << 20, 'x'));  // may fail here or only at commit (stdio buffering)
      out.commit();
    } catch (const fg::UsageError& e) {
      threw = true;
      message = e.what();
    }
  }
  setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_TRUE(threw);
  EXPECT_NE(message.find("write failed"), std::string::npos) << message;
  EXPECT_NE(message.find(target), std::string::npos) << message;
  EXPECT_EQ(read_file(target), "old complete contents\n");
  EXPECT_EQ(mode_of(target), 0640u);
  EXPECT_EQ(names_in(dir), std::vector<std::string>{"out.folded"});
}

// Replacing keeps the target's mode even when the process umask would give
// the new file a different one, and the result is a new inode (a reader that
// has the old file open keeps reading the old contents).
TEST(AtomicOutput, ReplaceIsANewInodeWithTheOldMode) {
  std::string dir = temp_dir();
  std::string target = dir + "/x.svg";
  write_file(target, "old");
  ASSERT_EQ(::chmod(target.c_str(), 0604), 0);
  struct stat before {};
  ASSERT_EQ(::stat(target.c_str(), &before), 0);
  std::ifstream reader(target);
  mode_t old_umask = ::umask(077);
  write_through(target, "new");
  ::umask(old_umask);
  struct stat after {};
  ASSERT_EQ(::stat(target.c_str(), &after), 0);
  EXPECT_NE(before.st_ino, after.st_ino);
  EXPECT_EQ(mode_of(target), 0604u);
  std::string old_seen;
  std::getline(reader, old_seen);
  EXPECT_EQ(old_seen, "old");
  EXPECT_EQ(read_file(target), "new");
}

}  // namespace
