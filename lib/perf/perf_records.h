// The decoded perf.data records that PerfDataReader hands to a RecordHandler,
// in timestamp order. Plain views: every pointer and string_view points into
// the reader's buffers and is valid only during the callback that receives it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fg {

// One perf_event_attr (the event a record belongs to), copied from any attr
// size perf has written (64..136 bytes; missing fields are zero).
struct EventAttr {
  uint32_t type = 0;      // 0 HARDWARE, 1 SOFTWARE, 2 TRACEPOINT, ...
  uint32_t size = 0;      // attr.size as written (0 in the file is read as 64)
  uint64_t config = 0;    // for TRACEPOINT: the tracepoint id
  uint64_t sample_period = 0;  // or sample_freq when freq()
  uint64_t sample_type = 0;
  uint64_t read_format = 0;
  uint64_t flags = 0;     // the bitfield word at offset 40
  uint32_t wakeup_events = 0;
  uint32_t bp_type = 0;
  uint64_t config1 = 0;
  uint64_t config2 = 0;
  uint64_t branch_sample_type = 0;
  uint64_t sample_regs_user = 0;
  uint32_t sample_stack_user = 0;
  int32_t clockid = 0;
  uint64_t sample_regs_intr = 0;
  uint32_t aux_watermark = 0;
  uint16_t sample_max_stack = 0;
  uint32_t aux_sample_size = 0;
  uint64_t sig_data = 0;
  uint64_t config3 = 0;

  std::string name;           // "cpu-clock", "sched:sched_switch" (EVENT_DESC, EVENT_UPDATE, or derived)
  std::vector<uint64_t> ids;  // sample ids that identify records of this event

  bool flag(int bit) const { return (flags >> bit) & 1; }
  bool inherit() const { return flag(1); }
  bool freq() const { return flag(10); }
  bool mmap_data() const { return flag(17); }
  bool sample_id_all() const { return flag(18); }
  bool exclude_callchain_kernel() const { return flag(21); }
  bool exclude_callchain_user() const { return flag(22); }
  bool mmap2() const { return flag(23); }
  bool comm_exec() const { return flag(24); }
  bool use_clockid() const { return flag(25); }
  bool context_switch() const { return flag(26); }
  bool build_id() const { return flag(34); }
  bool has(uint64_t sample_bit) const { return (sample_type & sample_bit) != 0; }
};

// PERF_SAMPLE_* bits of EventAttr::sample_type.
namespace sample_bits {
constexpr uint64_t IP = 1u << 0, TID = 1u << 1, TIME = 1u << 2, ADDR = 1u << 3, READ = 1u << 4,
                   CALLCHAIN = 1u << 5, ID = 1u << 6, CPU = 1u << 7, PERIOD = 1u << 8,
                   STREAM_ID = 1u << 9, RAW = 1u << 10, BRANCH_STACK = 1u << 11,
                   REGS_USER = 1u << 12, STACK_USER = 1u << 13, WEIGHT = 1u << 14,
                   DATA_SRC = 1u << 15, IDENTIFIER = 1u << 16, TRANSACTION = 1u << 17,
                   REGS_INTR = 1u << 18, PHYS_ADDR = 1u << 19, AUX = 1u << 20, CGROUP = 1u << 21,
                   DATA_PAGE_SIZE = 1u << 22, CODE_PAGE_SIZE = 1u << 23, WEIGHT_STRUCT = 1u << 24;
constexpr uint64_t KNOWN = (1u << 25) - 1;
}  // namespace sample_bits

// Callchain context markers (values >= CONTEXT_MAX are markers, not addresses).
namespace callchain_context {
constexpr uint64_t HV = uint64_t(-32), KERNEL = uint64_t(-128), USER = uint64_t(-512),
                   USER_DEFERRED = uint64_t(-640),  // followed by a cookie word, not an address
                   GUEST = uint64_t(-2048), GUEST_KERNEL = uint64_t(-2176),
                   GUEST_USER = uint64_t(-2560), MAX = uint64_t(-4095);
}  // namespace callchain_context

constexpr uint32_t kNoCpu = 0xffffffffu;  // Sample::cpu etc. when the record carries no CPU

// One PERF_RECORD_SAMPLE, decoded with its event's sample_type. Fields whose
// bit is absent are zero (cpu: kNoCpu; pointers: null).
struct Sample {
  size_t attr_index = 0;          // index into PerfFileInfo::attrs
  const EventAttr* attr = nullptr;
  uint16_t misc = 0;
  uint64_t file_offset = 0;       // of the record (of the COMPRESSED record holding it, if compressed)
  uint64_t identifier = 0;
  uint64_t ip = 0;
  int32_t pid = -1, tid = -1;
  uint64_t time = 0;
  uint64_t addr = 0, id = 0, stream_id = 0;
  uint32_t cpu = kNoCpu;
  uint64_t period = 0;            // PERIOD, else the attribute's fixed sample_period (as perf)
  // READ: the raw read_format words (see perf_event_open(2)); read_nr_words u64s.
  const uint64_t* read_values = nullptr;
  uint64_t read_nr_words = 0;
  const uint64_t* callchain = nullptr;  // includes context markers
  uint64_t callchain_nr = 0;
  const uint8_t* raw = nullptr;         // tracepoint payload (see TracingData)
  uint32_t raw_size = 0;
  // BRANCH_STACK: branch_nr entries of {from, to, flags}; hw_idx only if has_branch_hw_idx.
  const uint64_t* branch_entries = nullptr;
  uint64_t branch_nr = 0;
  bool has_branch_hw_idx = false;
  uint64_t branch_hw_idx = 0;
  const uint64_t* branch_counters = nullptr;  // branch_nr words when branch_sample_type has COUNTERS
  uint64_t regs_abi = 0;                // 0 none (kernel thread), 1 32-bit, 2 64-bit
  const uint64_t* regs_user = nullptr;  // compacted by regs_user_mask, in bit order
  uint64_t regs_user_mask = 0;
  const uint8_t* stack_user = nullptr;  // copy of the user stack starting at SP
  uint64_t stack_user_size = 0;         // bytes copied (buffer size)
  uint64_t stack_user_dyn_size = 0;     // bytes of it that are valid
  uint64_t weight = 0, data_src = 0, transaction = 0;
  uint64_t intr_abi = 0;
  const uint64_t* regs_intr = nullptr;
  uint64_t regs_intr_mask = 0;
  uint64_t phys_addr = 0, cgroup = 0, data_page_size = 0, code_page_size = 0;
  const uint8_t* aux = nullptr;
  uint64_t aux_size = 0;
  // decode_sample's bookkeeping: the sample_type this object was last decoded
  // with. Fields of absent bits are still zero then, so decoding the next
  // record of the same type need not reset all 300-odd bytes.
  uint64_t decoded_type = ~uint64_t{0};

  uint8_t cpumode() const { return misc & 7; }  // 1 kernel, 2 user, 3 hv, 4 guest kernel, 5 guest user
  bool exact_ip() const { return (misc >> 14) & 1; }
  // Value of perf user register k (x86 numbering: AX 0 .. SP 7, IP 8, R8..R15 16..23).
  bool user_reg(int k, uint64_t* out) const;
  bool intr_reg(int k, uint64_t* out) const;
};

// MMAP (type 1) or MMAP2 (type 10).
struct MmapRecord {
  int32_t pid = -1, tid = -1;
  uint64_t start = 0, len = 0, pgoff = 0;
  uint32_t maj = 0, min = 0;            // MMAP2 without build-id
  uint64_t ino = 0, ino_generation = 0;
  uint32_t prot = 0, flags = 0;         // MMAP2 only (MMAP: prot is PROT_EXEC unless misc says data)
  std::string_view filename;
  const uint8_t* build_id = nullptr;    // MMAP2 with misc & (1<<14)
  uint8_t build_id_size = 0;
  bool is_mmap2 = false;
  bool executable = true;               // !(misc & MMAP_DATA) (kernel: the vma is VM_EXEC)
  uint16_t misc = 0;
  uint64_t time = 0;                    // sample_id_all trailer time (0 for synthesized)
  uint32_t cpu = kNoCpu;
  uint64_t file_offset = 0;
  uint8_t cpumode() const { return misc & 7; }
};

struct CommRecord {
  int32_t pid = -1, tid = -1;
  std::string_view comm;
  bool exec = false;                    // misc & COMM_EXEC: the process exec'ed: reset its maps
  uint64_t time = 0;
  uint32_t cpu = kNoCpu;
  uint64_t file_offset = 0;
};

// FORK (type 7) and EXIT (type 4).
struct TaskRecord {
  int32_t pid = -1, ppid = -1, tid = -1, ptid = -1;
  uint64_t time = 0;                    // trailer time if present (what perf orders by), else body time
  uint64_t body_time = 0;
  uint32_t cpu = kNoCpu;
  uint64_t file_offset = 0;
};

// SWITCH (14) and SWITCH_CPU_WIDE (15). pid/tid/cpu come from the trailer.
struct SwitchRecord {
  bool out = false;                     // switch-out (else switch-in)
  bool preempt = false;                 // switched out while still runnable
  bool cpu_wide = false;
  int32_t pid = -1, tid = -1;
  int32_t next_prev_pid = -1, next_prev_tid = -1;  // cpu_wide only
  uint32_t cpu = kNoCpu;
  uint64_t time = 0;
  uint64_t file_offset = 0;
};

// LOST (2) or LOST_SAMPLES (13).
struct LostRecord {
  uint64_t lost = 0;
  bool samples = false;                 // LOST_SAMPLES
  uint64_t id = 0;                      // LOST only
  uint64_t time = 0;
  uint32_t cpu = kNoCpu;
  uint64_t file_offset = 0;
};

struct KsymbolRecord {
  uint64_t addr = 0;
  uint32_t len = 0;
  uint16_t ksym_type = 0, flags = 0;    // type 1 BPF, 2 OOL; flags bit 0 = unregister
  std::string_view name;
  uint64_t time = 0;
  uint64_t file_offset = 0;
};

// Receives records in timestamp order. Exceptions thrown here propagate out of
// PerfDataReader::read unchanged.
class RecordHandler {
 public:
  virtual ~RecordHandler() = default;
  virtual void on_sample(const Sample&) {}
  virtual void on_mmap(const MmapRecord&) {}
  virtual void on_comm(const CommRecord&) {}
  virtual void on_fork(const TaskRecord&) {}
  virtual void on_exit(const TaskRecord&) {}
  virtual void on_switch(const SwitchRecord&) {}
  virtual void on_lost(const LostRecord&) {}
  virtual void on_ksymbol(const KsymbolRecord&) {}
};

// Lowercase hex of a build-id.
std::string build_id_hex(const uint8_t* data, size_t size);

}  // namespace fg
