// Numbers from the perf.data on-disk format (kernel uapi perf_event.h and
// tools/perf/util/{event,header}.h) and unaligned little helpers to read them.
// Internal to lib/perf.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

namespace fg::perf_abi {

// Malformed bytes inside one record or section. The reader turns it into an
// fg::InputError naming the file, the byte offset and the record type.
class FormatError : public std::runtime_error {
 public:
  explicit FormatError(const std::string& what) : std::runtime_error(what) {}
};

enum RecordType : uint32_t {
  MMAP = 1, LOST = 2, COMM = 3, EXIT = 4, THROTTLE = 5, UNTHROTTLE = 6, FORK = 7, READ = 8,
  SAMPLE = 9, MMAP2 = 10, AUX = 11, ITRACE_START = 12, LOST_SAMPLES = 13, SWITCH = 14,
  SWITCH_CPU_WIDE = 15, NAMESPACES = 16, KSYMBOL = 17, BPF_EVENT = 18, CGROUP = 19,
  TEXT_POKE = 20, AUX_OUTPUT_HW_ID = 21, CALLCHAIN_DEFERRED = 22,
  USER_TYPE_START = 64,
  HEADER_ATTR = 64, HEADER_EVENT_TYPE = 65, HEADER_TRACING_DATA = 66, HEADER_BUILD_ID = 67,
  FINISHED_ROUND = 68, ID_INDEX = 69, AUXTRACE_INFO = 70, AUXTRACE = 71, AUXTRACE_ERROR = 72,
  THREAD_MAP = 73, CPU_MAP = 74, STAT_CONFIG = 75, STAT = 76, STAT_ROUND = 77,
  EVENT_UPDATE = 78, TIME_CONV = 79, HEADER_FEATURE = 80, COMPRESSED = 81, FINISHED_INIT = 82,
  COMPRESSED2 = 83,
};

enum Feature : int {
  FEAT_TRACING_DATA = 1, FEAT_BUILD_ID = 2, FEAT_HOSTNAME = 3, FEAT_OSRELEASE = 4,
  FEAT_VERSION = 5, FEAT_ARCH = 6, FEAT_NRCPUS = 7, FEAT_CPUDESC = 8, FEAT_CPUID = 9,
  FEAT_TOTAL_MEM = 10, FEAT_CMDLINE = 11, FEAT_EVENT_DESC = 12, FEAT_SAMPLE_TIME = 21,
  FEAT_DIR_FORMAT = 24, FEAT_COMPRESSED = 27,
};

// misc bits
constexpr uint16_t MISC_CPUMODE_MASK = 7;
constexpr uint16_t MISC_MMAP_DATA = 1 << 13;       // MMAP/MMAP2: non-exec mapping
constexpr uint16_t MISC_COMM_EXEC = 1 << 13;       // COMM
constexpr uint16_t MISC_SWITCH_OUT = 1 << 13;      // SWITCH*
constexpr uint16_t MISC_SWITCH_OUT_PREEMPT = 1 << 14;
constexpr uint16_t MISC_MMAP_BUILD_ID = 1 << 14;   // MMAP2 carries a build-id
constexpr uint16_t MISC_BUILD_ID_SIZE = 1 << 15;   // BUILD_ID feature / record

// read_format bits
constexpr uint64_t FORMAT_TOTAL_TIME_ENABLED = 1, FORMAT_TOTAL_TIME_RUNNING = 2, FORMAT_ID = 4,
                   FORMAT_GROUP = 8, FORMAT_LOST = 16, FORMAT_KNOWN = 31;
// branch_sample_type bits that change the SAMPLE layout
constexpr uint64_t BRANCH_HW_INDEX = 1ull << 17;
constexpr uint64_t BRANCH_COUNTERS = 1ull << 19;

constexpr uint64_t MAGIC2 = 0x32454c4946524550ull;        // "PERFILE2" read as LE u64
constexpr uint64_t MAGIC2_SWAPPED = 0x50455246494c4532ull;
constexpr size_t FILE_HEADER_SIZE = 104;
constexpr size_t PIPE_HEADER_SIZE = 16;
constexpr size_t ATTR_SIZE_VER0 = 64;
constexpr size_t ATTR_SIZE_OURS = 136;  // VER8 (config3)
constexpr size_t RECORD_HEADER_SIZE = 8;

template <typename T>
inline T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// "SAMPLE", "MMAP2", ..., or "type 1234".
std::string record_type_name(uint32_t type);

}  // namespace fg::perf_abi
