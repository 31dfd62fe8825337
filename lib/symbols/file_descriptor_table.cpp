#include "symbols/file_descriptor_table.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

namespace fg {

void reserve_file_descriptor_table(int count) {
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY && rlim_t(count) > limit.rlim_cur)
    count = int(limit.rlim_cur);
  if (count < 2) return;
  // A descriptor at count - 1 makes the kernel size the table for it; closed
  // at once, the table keeps its size for the life of the process.
  const int fd = ::fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, count - 1);
  if (fd >= 0) ::close(fd);
}

}  // namespace fg
