// Compares two folded profiles as weight distributions, the way the project's
// oracles are scored: the share of weight that lands on identical stacks after
// light normalisation (offsets, _[k]/_[j] annotations, symbol versions and
// argument lists removed on both sides, and a run of [unknown] frames counted
// as one, since fgtool cuts a broken frame-pointer chain to one marker).
#pragma once

#include <map>
#include <string>

namespace fg::test {

std::map<std::string, double> parse_folded_normalised(const std::string& text);

struct Agreement {
  double percent = 0;            // 0..100
  double total_a = 0, total_b = 0;
  std::string worst;             // the largest differences, for failure messages
};
Agreement folded_agreement(const std::string& a, const std::string& b);

}  // namespace fg::test
