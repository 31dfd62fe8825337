// Source positions for pprof locations from DWARF: the file and line of an
// address, of each inlined call around it, and each function's file and
// first line (pprof's Line.line, Function.filename and start_line). Objects
// are the files the fold symbolised with (FoldStats::objects), opened again
// here with libdwfl only when a location in them is written; each address is
// looked up once.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "symbols/symbol_cache.h"

namespace fg {

class SourceLines {
 public:
  // One frame at an address, innermost (inlined callee) first, the
  // out-of-line function last.
  struct Frame {
    std::string_view file;           // where the address (or the inlined call) is
    int64_t line = 0;
    std::string_view function_file;  // the function's declaration
    int64_t start_line = 0;
  };

  // objects: where the fold found each recorded object (path, build-id).
  explicit SourceLines(const std::vector<ObjectStatus>& objects);
  ~SourceLines();
  SourceLines(const SourceLines&) = delete;
  SourceLines& operator=(const SourceLines&) = delete;

  // The object recorded at `path` with `build_id` (raw bytes, may be empty):
  // a handle for lookup, or kNoObject when it has no DWARF line table.
  static constexpr uint32_t kNoObject = ~uint32_t{0};
  uint32_t object(std::string_view path, std::string_view build_id);

  // The frames at file offset `offset` of the object (at offset - 1 for a
  // caller's return address, as the fold symbolises it); empty when DWARF
  // has no line there. Valid until the next lookup.
  const Frame* lookup(uint32_t object, uint64_t offset, bool return_address, size_t* count);

  struct Stats {
    size_t objects_with_lines = 0, lookups = 0, cached = 0;
    double seconds = 0;  // opening objects and looking up addresses not cached
  };
  Stats stats() const { return stats_; }

 private:
  struct Object;
  struct Found {
    std::string path, debug_file;
  };
  std::unordered_map<std::string, Found> opened_;  // recorded path + '\0' + build-id hex -> files
  std::unordered_map<std::string, uint32_t> handles_;
  std::vector<std::unique_ptr<Object>> objects_;
  std::vector<Frame> scratch_;
  Stats stats_;
};

}  // namespace fg
