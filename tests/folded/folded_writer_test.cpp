// write_folded to a file: past the first megabyte the chunks are written by
// a thread of their own while the next ones are made (a WorkerQueue). The file
// must hold exactly the text write_folded gives as a string, after whatever
// the caller wrote first, and a failed write on that thread must reach the
// caller as the error it would have been on its own.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <string>

#include "diagnostics/atomic_output.h"
#include "diagnostics/input_error.h"
#include "folded/folded_profile.h"
#include "folded/folded_writer.h"
#include "test_support.h"

namespace fg {
namespace {

// About 60k stacks under 300 threads, long names: several megabytes.
FoldedProfile many_megabytes() {
  FoldedProfile p;
  for (int i = 0; i < 60000; ++i) {
    const std::string stack = "thread_" + std::to_string(i % 300) + ";main;run_loop_with_a_rather_long_name_" +
                              std::to_string(i % 17) + ";step::evaluate_" + std::to_string(i % 1009) +
                              ";leaf_function_" + std::to_string(i);
    p.add_stack(stack, double(i % 7 + 1));
  }
  return p;
}

TEST(FoldedWriter, AFileGetsTheSameBytesAsTheString) {
  const FoldedProfile p = many_megabytes();
  std::string expected = units_header_line("samples");
  write_folded(p, expected);
  ASSERT_GT(expected.size(), size_t(4) << 20);  // several chunks, so the writing thread runs
  const std::string path = test::temp_dir() + "/out.folded";
  {
    AtomicOutput out(path);
    out.write(units_header_line("samples"));
    write_folded(p, out);
    out.commit();
  }
  EXPECT_EQ(test::read_file(path), expected);

  // Under a megabyte, written by the caller: the same bytes too.
  FoldedProfile small;
  small.add_stack("a;b", 2);
  small.add_stack("a", 1);
  const std::string small_path = test::temp_dir() + "/small.folded";
  {
    AtomicOutput out(small_path);
    write_folded(small, out);
    out.commit();
  }
  EXPECT_EQ(test::read_file(small_path), "a 1\na;b 2\n");
}

// The file size limit makes the writing thread's write fail (EFBIG, as a
// full disk would with ENOSPC): write_folded throws the write's error, which
// names the file, and returns (no wait on a thread that stopped).
TEST(FoldedWriter, AWriteThatFailsOnTheWritingThreadReachesTheCaller) {
  const FoldedProfile p = many_megabytes();
  const std::string path = test::temp_dir() + "/out.folded";
  struct rlimit old {};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);  // EFBIG instead of a signal
  struct rlimit small = old;
  small.rlim_cur = 1 << 20;  // the first chunk fits, a later one does not
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  std::string message;
  bool written = false;
  {
    AtomicOutput out(path);
    try {
      write_folded(p, out);  // not only commit(): the thread's error comes back here
      written = true;
    } catch (const UsageError& e) {
      message = e.what();
    }
  }
  setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_FALSE(written);
  EXPECT_NE(message.find("write failed"), std::string::npos) << message;
  EXPECT_NE(message.find("out.folded"), std::string::npos) << message;
}

// Where no writing thread can be started (here: too little address space
// left for its stack), write_folded writes every chunk itself, the same bytes.
TEST(FoldedWriter, WithoutAThreadTheCallerWritesTheSameBytes) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  // The sanitizers map their own memory as they go: under the limit they
  // fail (ASan then deadlocks reporting it), or start the thread anyway.
  GTEST_SKIP() << "address-space limit under a sanitizer";
#endif
  const FoldedProfile p = many_megabytes();
  std::string expected;
  write_folded(p, expected);
  const std::string path = test::temp_dir() + "/out.folded";
  long pages = 0;
  {
    std::ifstream statm("/proc/self/statm");
    statm >> pages;
  }
  ASSERT_GT(pages, 0);
  struct rlimit old {};
  ASSERT_EQ(getrlimit(RLIMIT_AS, &old), 0);
  struct rlimit tight = old;
  // A thread's stack is 8 MB: 6 MB more than the process maps now leaves
  // room for the chunk buffer, not for a thread.
  tight.rlim_cur = rlim_t(pages) * rlim_t(sysconf(_SC_PAGESIZE)) + (rlim_t(6) << 20);
  ASSERT_EQ(setrlimit(RLIMIT_AS, &tight), 0);
  bool threw = false;
  {
    AtomicOutput out(path);
    try {
      write_folded(p, out);
      out.commit();
    } catch (const std::exception&) {
      threw = true;
    }
  }
  setrlimit(RLIMIT_AS, &old);
  EXPECT_FALSE(threw);
  EXPECT_EQ(test::read_file(path), expected);
}

}  // namespace
}  // namespace fg
