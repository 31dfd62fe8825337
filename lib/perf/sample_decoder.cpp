#include "perf/sample_decoder.h"

#include <cstdio>
#include <emmintrin.h>

#include <type_traits>
#include <string>

#include "perf/perf_abi.h"

namespace fg {

namespace {
bool reg_value(uint64_t abi, const uint64_t* regs, uint64_t mask, int k, uint64_t* out) {
  if (abi == 0 || !regs || k < 0 || k >= 64 || !((mask >> k) & 1)) return false;
  int idx = __builtin_popcountll(mask & ((uint64_t(1) << k) - 1));
  *out = perf_abi::load<uint64_t>(reinterpret_cast<const uint8_t*>(regs + idx));
  return true;
}
}  // namespace

bool Sample::user_reg(int k, uint64_t* out) const { return reg_value(regs_abi, regs_user, regs_user_mask, k, out); }
bool Sample::intr_reg(int k, uint64_t* out) const { return reg_value(intr_abi, regs_intr, regs_intr_mask, k, out); }

}  // namespace fg

namespace fg::perf_sample {

using perf_abi::FormatError;
using perf_abi::load;
namespace sb = sample_bits;

namespace {

class Cursor {
 public:
  Cursor(const uint8_t* rec, size_t size) : rec_(rec), size_(size), pos_(perf_abi::RECORD_HEADER_SIZE) {}
  [[noreturn]] void overrun(const char* field, uint64_t need) const {
    throw FormatError(std::string(field) + " needs " + std::to_string(need) + " bytes at byte " +
                      std::to_string(pos_) + " but the record has only " + std::to_string(size_ - pos_) +
                      " left (hdr.size " + std::to_string(size_) + ")");
  }
  uint64_t u64(const char* field) {
    if (size_ - pos_ < 8) overrun(field, 8);
    uint64_t v = load<uint64_t>(rec_ + pos_);
    pos_ += 8;
    return v;
  }
  uint32_t u32(const char* field) {
    if (size_ - pos_ < 4) overrun(field, 4);
    uint32_t v = load<uint32_t>(rec_ + pos_);
    pos_ += 4;
    return v;
  }
  // n items of item_size bytes; n is checked against the record before multiplying.
  const uint8_t* array(const char* field, uint64_t n, uint64_t item_size) {
    uint64_t left = size_ - pos_;
    if (n > left / item_size) {
      throw FormatError(std::string(field) + ": " + std::to_string(n) + " entries of " + std::to_string(item_size) +
                        " bytes at byte " + std::to_string(pos_) + " do not fit the " + std::to_string(left) +
                        " bytes left (hdr.size " + std::to_string(size_) + ")");
    }
    const uint8_t* p = rec_ + pos_;
    pos_ += n * item_size;
    return p;
  }
  size_t pos() const { return pos_; }
  size_t size() const { return size_; }

 private:
  const uint8_t* rec_;
  size_t size_;
  size_t pos_;
};

const uint64_t* words(const uint8_t* p) { return reinterpret_cast<const uint64_t*>(p); }

// s = Sample(), but with 16-byte moves: GCC compiles the assignment (and a
// memcpy from a constant) to rep stos + rep movs, whose start-up cost was
// half of this function's time, and it runs twice per sample.
// (The attribute keeps GCC from turning the loop back into a memcpy; clang
// has no such attribute and keeps the loop as written.)
#if defined(__GNUC__) && !defined(__clang__)
#define FG_KEEP_LOOP __attribute__((optimize("no-tree-loop-distribute-patterns")))
#else
#define FG_KEEP_LOOP
#endif
FG_KEEP_LOOP void reset(Sample& s) {
  static const Sample kEmpty{};
  static_assert(std::is_trivially_copyable_v<Sample> && sizeof(Sample) % 8 == 0);
  const __m128i* from = reinterpret_cast<const __m128i*>(&kEmpty);
  __m128i* to = reinterpret_cast<__m128i*>(&s);
  for (size_t i = 0; i < sizeof(Sample) / 16; ++i) _mm_storeu_si128(to + i, _mm_loadu_si128(from + i));
  if (sizeof(Sample) % 16)
    _mm_storel_epi64(to + sizeof(Sample) / 16, _mm_loadl_epi64(from + sizeof(Sample) / 16));
}

}  // namespace

// Long function: one step per sample_type bit in the kernel's field order
// (perf_event_open(2)), which is what a reader checks it against; split up,
// the order would be spread over several functions.
void decode_sample(const EventAttr& a, const uint8_t* rec, size_t size, Sample& s) {
  const uint64_t t = a.sample_type;
  // Fields of bits absent from t are zero after a reset and never written
  // below; the other fields are all written below (data-dependent ones on
  // both branches), so a Sample last decoded with the same t needs no reset.
  if (s.decoded_type != t) {
    reset(s);
    s.decoded_type = t;
  }
  s.attr = &a;
  s.attr_index = 0;
  s.file_offset = 0;
  s.misc = load<uint16_t>(rec + 4);
  Cursor c(rec, size);
  if (t & sb::IDENTIFIER) s.identifier = c.u64("IDENTIFIER");
  if (t & sb::IP) s.ip = c.u64("IP");
  if (t & sb::TID) {
    s.pid = int32_t(c.u32("TID"));
    s.tid = int32_t(c.u32("TID"));
  }
  if (t & sb::TIME) s.time = c.u64("TIME");
  if (t & sb::ADDR) s.addr = c.u64("ADDR");
  if (t & sb::ID) s.id = c.u64("ID");
  if (t & sb::STREAM_ID) s.stream_id = c.u64("STREAM_ID");
  if (t & sb::CPU) {
    s.cpu = c.u32("CPU");
    c.u32("CPU");
  }
  // `perf record -c N` fixes the period in the attribute and leaves the
  // PERIOD bit out: each sample then weighs attr.sample_period, as perf's
  // evsel__parse_sample takes it (the weight was 0 and every stack dropped).
  s.period = t & sb::PERIOD ? c.u64("PERIOD") : a.sample_period;
  if (t & sb::READ) {
    const uint64_t rf = a.read_format;
    const size_t start = c.pos();
    if (rf & perf_abi::FORMAT_GROUP) {
      uint64_t nr = c.u64("READ nr");
      if (rf & perf_abi::FORMAT_TOTAL_TIME_ENABLED) c.u64("READ time_enabled");
      if (rf & perf_abi::FORMAT_TOTAL_TIME_RUNNING) c.u64("READ time_running");
      uint64_t per = 8 * (1 + !!(rf & perf_abi::FORMAT_ID) + !!(rf & perf_abi::FORMAT_LOST));
      c.array("READ group values", nr, per);
    } else {
      c.u64("READ value");
      if (rf & perf_abi::FORMAT_TOTAL_TIME_ENABLED) c.u64("READ time_enabled");
      if (rf & perf_abi::FORMAT_TOTAL_TIME_RUNNING) c.u64("READ time_running");
      if (rf & perf_abi::FORMAT_ID) c.u64("READ id");
      if (rf & perf_abi::FORMAT_LOST) c.u64("READ lost");
    }
    s.read_values = words(rec + start);
    s.read_nr_words = (c.pos() - start) / 8;
  }
  if (t & sb::CALLCHAIN) {
    s.callchain_nr = c.u64("CALLCHAIN nr");
    s.callchain = words(c.array("CALLCHAIN", s.callchain_nr, 8));
  }
  if (t & sb::RAW) {
    s.raw_size = c.u32("RAW size");
    s.raw = c.array("RAW", s.raw_size, 1);
    if (c.pos() % 8 != 0)
      throw FormatError("RAW size " + std::to_string(s.raw_size) + " leaves the next field unaligned (byte " +
                        std::to_string(c.pos()) + ")");
  }
  if (t & sb::BRANCH_STACK) {
    s.branch_nr = c.u64("BRANCH_STACK nr");
    s.has_branch_hw_idx = (a.branch_sample_type & perf_abi::BRANCH_HW_INDEX) != 0;
    s.branch_hw_idx = s.has_branch_hw_idx ? c.u64("BRANCH_STACK hw_idx") : 0;
    s.branch_entries = words(c.array("BRANCH_STACK entries", s.branch_nr, 24));
    s.branch_counters = (a.branch_sample_type & perf_abi::BRANCH_COUNTERS)
                            ? words(c.array("BRANCH_STACK counters", s.branch_nr, 8))
                            : nullptr;
  }
  if (t & sb::REGS_USER) {
    s.regs_abi = c.u64("REGS_USER abi");
    s.regs_user_mask = a.sample_regs_user;
    s.regs_user = s.regs_abi != 0 ? words(c.array("REGS_USER", __builtin_popcountll(a.sample_regs_user), 8)) : nullptr;
  }
  if (t & sb::STACK_USER) {
    s.stack_user_size = c.u64("STACK_USER size");
    s.stack_user = nullptr;
    s.stack_user_dyn_size = 0;
    if (s.stack_user_size != 0) {
      s.stack_user = c.array("STACK_USER", s.stack_user_size, 1);
      if (c.pos() % 8 != 0)
        throw FormatError("STACK_USER size " + std::to_string(s.stack_user_size) + " is not a multiple of 8");
      s.stack_user_dyn_size = c.u64("STACK_USER dyn_size");
      // Only dyn_size bytes are valid; never let a consumer read past the copy.
      if (s.stack_user_dyn_size > s.stack_user_size) s.stack_user_dyn_size = s.stack_user_size;
    }
  }
  if (t & (sb::WEIGHT | sb::WEIGHT_STRUCT)) s.weight = c.u64("WEIGHT");
  if (t & sb::DATA_SRC) s.data_src = c.u64("DATA_SRC");
  if (t & sb::TRANSACTION) s.transaction = c.u64("TRANSACTION");
  if (t & sb::REGS_INTR) {
    s.intr_abi = c.u64("REGS_INTR abi");
    s.regs_intr_mask = a.sample_regs_intr;
    s.regs_intr = s.intr_abi != 0 ? words(c.array("REGS_INTR", __builtin_popcountll(a.sample_regs_intr), 8)) : nullptr;
  }
  if (t & sb::PHYS_ADDR) s.phys_addr = c.u64("PHYS_ADDR");
  if (t & sb::CGROUP) s.cgroup = c.u64("CGROUP");
  if (t & sb::DATA_PAGE_SIZE) s.data_page_size = c.u64("DATA_PAGE_SIZE");
  if (t & sb::CODE_PAGE_SIZE) s.code_page_size = c.u64("CODE_PAGE_SIZE");
  if (t & sb::AUX) {
    s.aux_size = c.u64("AUX size");
    s.aux = c.array("AUX", s.aux_size, 1);
  }
  if (c.pos() != size)
    throw FormatError("sample fields (sample_type 0x" + [&] {
      char b[24];
      std::snprintf(b, sizeof b, "%llx", static_cast<unsigned long long>(t));
      return std::string(b);
    }() + ") end at byte " + std::to_string(c.pos()) + " but hdr.size is " + std::to_string(size));
}

}  // namespace fg::perf_sample
