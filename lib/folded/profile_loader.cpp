#include "folded/profile_loader.h"

#include <fcntl.h>
#include <unistd.h>

#include <cmath>
#include <mutex>

#include "diagnostics/input_error.h"
#include "folded/folded_reader.h"

namespace fg {

namespace {
std::vector<ProfileLoader>& loaders() {
  static std::vector<ProfileLoader> v;
  return v;
}
std::mutex& loaders_mutex() {
  static std::mutex m;
  return m;
}
}  // namespace

void register_profile_loader(ProfileLoader loader) {
  std::lock_guard<std::mutex> lock(loaders_mutex());
  loaders().insert(loaders().begin(), std::move(loader));
}

std::string read_file_head(const std::string& path) {
  if (path == "-") return {};
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::string head(4096, '\0');
  size_t have = 0;
  while (have < head.size()) {
    ssize_t n = ::read(fd, head.data() + have, head.size() - have);
    if (n <= 0) break;
    have += static_cast<size_t>(n);
  }
  ::close(fd);
  head.resize(have);
  return head;
}

const ProfileLoader* find_profile_loader(std::string_view head) {
  std::lock_guard<std::mutex> lock(loaders_mutex());
  for (const auto& l : loaders())
    if (l.matches && l.matches(head)) return &l;
  return nullptr;
}

namespace {
// Every weight is finite, but a sum can still pass the largest double (the
// folded reader says at which line; other inputs and merges are caught here).
void check_total(const FoldedProfile& p, const std::string& path) {
  if (!std::isfinite(p.total()))
    throw InputError(path + ": the counts sum past the largest number fgtool can hold (about 1.8e308)");
}
}  // namespace

void load_profile(const std::string& path, FoldedProfile& into, const ProfileLoadOptions& options) {
  if (path != "-") {
    std::string head = read_file_head(path);
    if (const ProfileLoader* l = find_profile_loader(head)) {
      l->load(path, into, options);
      check_total(into, path);
      return;
    }
  }
  FoldedReadOptions ro;
  ro.lenient = options.lenient;
  ro.warn = options.warn;
  read_folded(path, into, ro);
  check_total(into, path);
}

FoldedProfile load_profile(const std::string& path, const ProfileLoadOptions& options) {
  FoldedProfile p;
  load_profile(path, p, options);
  return p;
}

FoldedProfile load_profiles(const std::vector<std::string>& paths, const ProfileLoadOptions& options,
                            std::string* label) {
  FoldedProfile profile;
  for (const auto& in : paths) {
    if (paths.size() == 1) {
      profile = load_profile(in, options);
    } else {
      FoldedProfile p = load_profile(in, options);
      profile.merge(p);
      profile.units = p.units;
      check_total(profile, in + " (with the inputs before it)");
    }
    if (label) *label += (label->empty() ? "" : " + ") + in;
  }
  return profile;
}

}  // namespace fg
