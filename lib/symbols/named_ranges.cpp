#include "symbols/named_ranges.h"

namespace fg {

void NamedRanges::add(uint64_t start, uint64_t len, std::string_view name) {
  if (len == 0) return;
  uint64_t end = start + len < start ? UINT64_MAX : start + len;
  // Cut existing ranges that overlap [start, end), keeping their outside parts.
  auto it = ranges_.lower_bound(start);
  if (it != ranges_.begin()) {
    auto prev = std::prev(it);
    if (prev->second.end > start) {
      Range tail = prev->second;
      prev->second.end = start;
      if (tail.end > end) ranges_.emplace(end, Range{tail.end, tail.name});
    }
  }
  while (it != ranges_.end() && it->first < end) {
    Range r = it->second;
    it = ranges_.erase(it);
    if (r.end > end) {
      ranges_.emplace(end, Range{r.end, r.name});
      break;
    }
  }
  names_.emplace_back(name);
  ranges_[start] = Range{end, &names_.back()};
}

std::string_view NamedRanges::find(uint64_t address) const {
  auto it = ranges_.upper_bound(address);
  if (it == ranges_.begin()) return {};
  --it;
  if (address < it->second.end) return *it->second.name;
  return {};
}

}  // namespace fg
