// Small helpers shared by the traces tests: folded text of a profile, a
// stack -> weight map, and writing a temporary input file.
#pragma once

#include <map>
#include <string>

#include "folded/folded_profile.h"
#include "folded_text.h"
#include "test_support.h"

namespace fg::test {

inline std::map<std::string, double> stack_map(const FoldedProfile& p) {
  std::map<std::string, double> m;
  p.for_each_stack([&](const std::vector<FrameId>& frames, double w) {
    std::string k;
    for (size_t i = 0; i < frames.size(); ++i) {
      if (i) k += ';';
      k += p.frame_name(frames[i]);
    }
    m[k] += w;
  });
  return m;
}

// Writes `contents` to a new file in a temporary directory and returns its path.
inline std::string temp_input(const std::string& name, const std::string& contents) {
  static std::string dir = temp_dir();
  std::string path = dir + "/" + name;
  write_file(path, contents);
  return path;
}

}  // namespace fg::test
