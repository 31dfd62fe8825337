// stream_head (lib/folded/stream_head.h): a pipe named by a descriptor path
// gives up its head to format detection and still reads whole afterwards;
// named FIFOs are left unread.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <string>
#include <thread>

#include "folded/profile_loader.h"
#include "folded/stream_head.h"
#include "test_support.h"

namespace fg {
namespace {

// All of fd's bytes until end of stream.
std::string read_all(int fd) {
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, size_t(n));
  return out;
}

// A pipe whose read end is a descriptor of this process, fed `data` by a
// thread that then closes the write end (as `<(cat file)` would).
struct FedPipe {
  explicit FedPipe(const std::string& data) {
    int fds[2];
    EXPECT_EQ(pipe(fds), 0);
    fd = fds[0];
    writer = std::thread([data, w = fds[1]] {
      size_t at = 0;
      while (at < data.size()) {
        ssize_t n = ::write(w, data.data() + at, data.size() - at);
        if (n <= 0) break;
        at += size_t(n);
      }
      ::close(w);
    });
  }
  ~FedPipe() {
    writer.join();
    ::close(fd);
  }
  std::string path() const { return "/dev/fd/" + std::to_string(fd); }
  int fd = -1;
  std::thread writer;
};

TEST(StreamHead, APipesHeadIsKeptForItsReader) {
  std::string data;
  for (int i = 0; i < 20000; ++i) data += "main;f" + std::to_string(i % 97) + " " + std::to_string(i) + "\n";
  ASSERT_GT(data.size(), 100000u);  // past the pipe's buffer: the copy runs alongside the reader
  FedPipe p(data);
  std::optional<std::string> head = stream_head(p.path());
  ASSERT_TRUE(head.has_value());
  EXPECT_EQ(*head, data.substr(0, 4096));
  // Asked again (every detection step asks): the same bytes, nothing read.
  EXPECT_EQ(stream_head(p.path()), head);
  EXPECT_EQ(stream_head(p.path(), 10), data.substr(0, 10));
  EXPECT_EQ(read_file_head(p.path()), *head);
  // The path now reads the whole stream, head included.
  int fd = ::open(p.path().c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(read_all(fd), data);
  ::close(fd);
  EXPECT_TRUE(is_stream_path(p.path()));
  EXPECT_FALSE(is_unpeekable_stream(p.path()));
}

TEST(StreamHead, AShortStreamGivesWhatItHas) {
  FedPipe p("main;a 1\n");
  EXPECT_EQ(stream_head(p.path()), std::string("main;a 1\n"));
  EXPECT_EQ(read_all(p.fd), "main;a 1\n");
}

TEST(StreamHead, FilesAndNamedFifosAreNotTakenOver) {
  const std::string dir = test::temp_dir();
  const std::string file = dir + "/a.folded";
  test::write_file(file, "main;a 1\n");
  EXPECT_FALSE(stream_head(file).has_value());
  EXPECT_FALSE(is_stream_path(file));
  EXPECT_EQ(read_file_head(file), "main;a 1\n");
  int fd = ::open(file.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  // A descriptor path on a regular file is read as a file (no copy thread).
  EXPECT_FALSE(stream_head("/dev/fd/" + std::to_string(fd)).has_value());
  ::close(fd);
  const std::string fifo = dir + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  // Not opened at all: an open of a FIFO without a writer would block, and a
  // read would take data that its reader then misses.
  EXPECT_TRUE(is_unpeekable_stream(fifo));
  EXPECT_TRUE(is_stream_path(fifo));
  EXPECT_FALSE(stream_head(fifo).has_value());
  EXPECT_EQ(read_file_head(fifo), "");
  EXPECT_FALSE(stream_head("/dev/fd/x1").has_value());
  EXPECT_FALSE(stream_head("/dev/fd/").has_value());
}

}  // namespace
}  // namespace fg
