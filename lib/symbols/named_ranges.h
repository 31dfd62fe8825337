// Address ranges with names where a later range replaces the overlapping part of
// earlier ones: KSYMBOL records and /tmp/perf-PID.map lines ("later lines override").
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <string_view>

namespace fg {

class NamedRanges {
 public:
  // Adds [start, start+len); len 0 is ignored. Cost O(log n + overlapped ranges).
  void add(uint64_t start, uint64_t len, std::string_view name);
  // Name of the range containing address, or empty. The view stays valid for the
  // object's lifetime.
  std::string_view find(uint64_t address) const;
  bool empty() const { return ranges_.empty(); }
  size_t size() const { return ranges_.size(); }

 private:
  struct Range {
    uint64_t end;  // exclusive
    const std::string* name;
  };
  std::map<uint64_t, Range> ranges_;  // start -> range; non-overlapping
  std::deque<std::string> names_;     // stable addresses
};

}  // namespace fg
