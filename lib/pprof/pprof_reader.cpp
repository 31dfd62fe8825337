#include "pprof/pprof_reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include <protozero/exception.hpp>
#include <protozero/pbf_reader.hpp>

#include "diagnostics/input_error.h"
#include "diagnostics/terminal_text.h"
#include "folded/profile_loader.h"
#include "pprof/pprof_gzip.h"
#include "pprof/pprof_parser.h"

namespace fg {

namespace {

using protozero::pbf_reader;
using protozero::pbf_wire_type;

// Decompressed profiles are refused beyond 200 times their compressed size
// (at least 256 MiB, at most 16 GiB): real profiles compress 3-10 times,
// while a gzip bomb (up to ~1000 times) would otherwise take all memory.
uint64_t max_protobuf_bytes(size_t compressed) {
  uint64_t limit = std::max<uint64_t>(uint64_t(256) << 20, uint64_t(compressed) * 200);
  return std::min<uint64_t>(limit, uint64_t(16) << 30);
}

std::string read_whole_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(path + ": cannot open: " + std::strerror(errno));
  std::string data;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) data.reserve(size_t(st.st_size));
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      ::close(fd);
      throw InputError(path + ": read error: " + std::strerror(e));
    }
    if (n == 0) break;
    data.append(buf, size_t(n));
  }
  ::close(fd);
  return data;
}

// Whether bytes are a plausible prefix of a Profile message: every field
// has the Profile schema's wire type, and message fields that end within
// the prefix parse as messages with small field numbers.
bool plausible_profile_prefix(std::string_view d) {
  if (d.size() < 2) return false;
  size_t fields = 0;
  bool saw_message = false;
  try {
    pbf_reader r(d.data(), d.size());
    while (r.data().size() > 0) {
      // A field cut off by the end of the prefix is fine: stop there.
      pbf_reader probe = r;
      try {
        if (!probe.next()) break;
        probe.skip();
      } catch (const protozero::end_of_buffer_exception&) {
        break;
      }
      r.next();
      uint32_t tag = r.tag();
      auto wt = r.wire_type();
      bool len = wt == pbf_wire_type::length_delimited, var = wt == pbf_wire_type::varint;
      if (tag >= 1 && tag <= 6) {
        if (!len) return false;
        protozero::data_view v = r.get_view();
        if (tag != 6) {
          pbf_reader m(v);
          while (m.next()) {
            if (m.tag() > 16) return false;
            m.skip();
          }
          saw_message = true;
        }
      } else if (tag == 11) {
        if (!len) return false;
        r.skip();
      } else if (tag == 13) {
        if (!len && !var) return false;
        r.skip();
      } else if (tag <= 15) {
        if (!var) return false;
        r.skip();
      } else {
        return false;
      }
      ++fields;
    }
  } catch (const protozero::exception&) {
    return false;
  }
  return fields > 0 && saw_message;
}

}  // namespace

void read_pprof_data(std::string_view data, const std::string& name, FoldedProfile& into, const PprofReadOptions& options,
                     PprofReadInfo* info) {
  InflatedBytes inflated;
  std::string_view pb = data;
  if (is_gzip(data)) {
    inflated = gunzip(data, name, max_protobuf_bytes(data.size()));
    pb = inflated.view();
  }
  parse_pprof(pb, name, options, into, info);
}

void read_pprof(const std::string& path, FoldedProfile& into, const PprofReadOptions& options, PprofReadInfo* info) {
  // Regular files are mapped (no copy of a large protobuf); others read.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (fd >= 0 && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    void* map = ::mmap(nullptr, size_t(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (map != MAP_FAILED) {
      struct Unmap {
        void* p;
        size_t n;
        ~Unmap() { ::munmap(p, n); }
      } unmap{map, size_t(st.st_size)};
      ::madvise(map, size_t(st.st_size), MADV_SEQUENTIAL);
      read_pprof_data(std::string_view(static_cast<const char*>(map), size_t(st.st_size)), path, into, options, info);
      return;
    }
  } else if (fd >= 0) {
    ::close(fd);
  }
  std::string data = read_whole_file(path);
  read_pprof_data(data, path, into, options, info);
}

bool looks_like_pprof(std::string_view head) {
  if (is_gzip(head)) {
    return plausible_profile_prefix(gunzip_prefix(head, 64 << 10));
  }
  return plausible_profile_prefix(head);
}

std::pair<std::string, std::string> parse_tag(const std::string& text) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) throw UsageError("--tag '" + text + "': expected KEY=VALUE");
  return {text.substr(0, eq), text.substr(eq + 1)};
}

void register_pprof_loader() {
  static bool done = false;
  if (done) return;
  done = true;
  register_profile_loader(ProfileLoader{
      "pprof", [](std::string_view head) { return looks_like_pprof(head); },
      [](const std::string& path, FoldedProfile& into, const ProfileLoadOptions& lo) {
        PprofReadOptions po;
        po.sample_index = lo.sample_index;
        po.tags = lo.tags;
        PprofReadInfo info;
        read_pprof(path, into, po, &info);
        // As `go tool pprof` says "TagFocus expression matched no samples":
        // an empty profile from a mistyped label should not pass unnoticed.
        if (!po.tags.empty() && info.samples > 0 && info.kept_samples == 0) {
          std::string filter;
          for (const auto& [k, v] : po.tags) filter += (filter.empty() ? "" : ", ") + k + "=" + v;
          const std::string msg = "--tag " + filter + " matched none of the " + std::to_string(info.samples) +
                                  " samples";
          if (lo.warn) lo.warn(path + ": " + msg);
          else std::cerr << "fgtool: warning: " << terminal_safe(path + ": " + msg) << "\n";
        }
      }});
}

}  // namespace fg
