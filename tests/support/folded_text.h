// The folded text of a profile, as `fgtool` writes it: what tests compare.
#pragma once

#include <string>

#include "folded/folded_profile.h"
#include "folded/folded_writer.h"

namespace fg::test {

inline std::string folded_text(const FoldedProfile& p) {
  std::string s;
  write_folded(p, s);
  return s;
}

}  // namespace fg::test
