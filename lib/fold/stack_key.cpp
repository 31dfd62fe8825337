#include "fold/stack_key.h"

#include <algorithm>

#include "folded/folded_profile.h"

namespace fg {

namespace {
using namespace callchain_context;
constexpr uint64_t kKernelHalf = 0xffff800000000000ull;
static_assert(sizeof(StackAddress) <= 16, "one address per 16 bytes");

// Callchain contexts: 1 kernel, 2 user, 0 other (guest/hv). A callchain
// starts in the sample's own.
inline int first_context(const Sample& s) { return s.cpumode() == 1 ? 1 : 2; }
// The context a marker (v >= MAX) starts; returns the words it takes: a
// deferred user context's marker is followed by a cookie, not an address.
inline uint64_t read_marker(uint64_t v, int* context) {
  if (v == KERNEL) *context = 1;
  else if (v == USER) *context = 2;
  else if (v == USER_DEFERRED) {
    *context = 2;
    return 2;
  } else *context = 0;
  return 1;
}

// Calls take(address, kernel, return_address) for each address of a
// callchain, leaf first, reading its context markers: guest and hypervisor
// contexts are skipped, and the user context too when skip_user (DWARF
// samples: the unwinder gives the user part). The first address after a
// marker is the sampled pc, the others callers' return addresses.
template <class Take>
inline void walk_callchain(const Sample& s, bool skip_user, Take&& take) {
  int context = first_context(s);
  bool first = true;
  for (uint64_t i = 0; i < s.callchain_nr;) {
    const uint64_t v = s.callchain[i];
    if (v >= MAX) {
      i += read_marker(v, &context);
      first = true;
      continue;
    }
    ++i;
    if (context == 0 || (context == 2 && skip_user)) continue;
    take(v, context == 1, !first);
    first = false;
  }
}

}  // namespace

StackKeyBuilder::StackKeyBuilder(const ProcessTable& table)
    : table_(table), addresses_(new StackAddress[kMaxDepth]), flags_(new uint64_t[kMaxDepth / 32]) {
  static_assert(kMaxDepth == kMaxStackDepth, "the key keeps as many frames as a folded stack");
}

// The kernel callchain, then the user part from the callchain (frame
// pointers) or from DWARF unwinding, leaf first.
void StackKeyBuilder::collect_addresses(const Sample& s, const UnwoundUserStack& unwound) {
  count_ = 0;
  truncated_ = false;
  const bool dwarf = is_dwarf(s);
  if (s.callchain_nr > 0) {
    walk_callchain(s, dwarf, [this](uint64_t v, bool kernel, bool return_address) { push(v, kernel, return_address); });
  } else if (!dwarf) {
    push(s.ip, s.cpumode() == 1 || s.ip >= kKernelHalf, false);
  }
  if (dwarf) {
    stats_.dwarf = true;
    static const std::vector<UnwindFrame> kNone;
    const std::vector<UnwindFrame>& frames = unwound.frames ? *unwound.frames : kNone;
    for (const UnwindFrame& f : frames) push(f.pc, false, f.is_return_address);
    // A stack cut short because the copy of the user stack was too small
    // keeps a root-side marker, as perf script shows it: perf's unwinder
    // reads the missing return address as 0 and prints pc - 1
    // (ffffffffffffffff), which lies in no mapping and so folds to
    // "[unknown]". Without it the cut stack would pose as a whole one.
    if (unwound.outcome == UnwindOutcome::memory_outside_copy && !frames.empty()) {
      push(kCutShortMarker, false, false);
      ++stats_.cut_short_samples;
    }
    if (frames.empty() && count_ == 0) push(s.ip, s.cpumode() == 1 || s.ip >= kKernelHalf, false);
  }
  // A callchain can claim up to ~8190 entries in a 64 KiB record.
  if (truncated_) ++stats_.truncated_stacks;
}

// A frame-pointer sample's key in one pass over its callchain, straight into
// the key's words: most samples of a busy recording take this path, and
// collecting the addresses first and copying them after was a tenth of the
// fold's CPU time (busy6.data), on the thread that sets the fold's pace.
void StackKeyBuilder::append_callchain_key(const Sample& s, const void* root, const ProcessMaps* proc,
                                           KeyWords& key) {
  const size_t at = key.size();
  const size_t most = std::min<uint64_t>(s.callchain_nr, kMaxDepth);
  uint64_t* const addresses = key.extend(kHeaderWords + most + (most + 31) / 32) + kHeaderWords;  // cut below
  // walk_callchain's rules, a run of addresses between markers at a time:
  // the run is copied whole, and its kinds (2 bits per address, as in the
  // key) set a word at a time. Address by address this was 6-7% of a busy
  // fold, on the thread that reads the file.
  const uint64_t* const chain = s.callchain;
  const uint64_t nr = s.callchain_nr;
  int context = first_context(s);
  bool first = true, user = false, truncated = false;
  size_t n = 0;
  for (uint64_t i = 0; i < nr;) {
    const uint64_t v = chain[i];
    if (v >= MAX) {
      i += read_marker(v, &context);
      first = true;
      continue;
    }
    uint64_t j = i + 1;
    while (j < nr && chain[j] < MAX) ++j;
    if (context != 0) {
      const size_t take = std::min<uint64_t>(j - i, most - n);
      truncated |= take < j - i;
      if (take) {
        std::copy(chain + i, chain + i + take, addresses + n);
        set_kinds(n, n + take, context == 1);
        if (first) flags_[n / 32] &= ~(uint64_t(1) << (2 * (n % 32)));  // the sampled pc
        user |= context == 2;
        n += take;
        first = false;
      }
    }
    i = j;
  }
  if (truncated) ++stats_.truncated_stacks;
  key.resize(at + kHeaderWords + n + (n + 31) / 32, 0);  // only drops words
  uint64_t* k = key.data() + at;
  std::copy(flags_.get(), flags_.get() + (n + 31) / 32, k + kHeaderWords + n);
  k[0] = n;
  k[1] = reinterpret_cast<uintptr_t>(root);
  k[2] = user && proc ? proc->generation : 0;
  k[3] = table_.kernel().generation;
}

// Sets the kinds of addresses [from, to) in flags_ as return addresses, in
// the kernel or not: 2 bits each, 32 to a word. Addresses come in order
// from 0, so a word is first written at its first address: it is assigned
// then, not zeroed before (a rep stos for the words a key could need was a
// fifth of append_callchain_key).
void StackKeyBuilder::set_kinds(size_t from, size_t to, bool kernel) {
  const uint64_t pattern = kernel ? ~uint64_t{0} : 0x5555555555555555ull;
  while (from < to) {
    const size_t word = from / 32, lo = from % 32;
    const size_t hi = std::min<size_t>(32, lo + (to - from));
    const uint64_t mask = (hi == 32 ? ~uint64_t{0} : (uint64_t(1) << (2 * hi)) - 1) & ~((uint64_t(1) << (2 * lo)) - 1);
    flags_[word] = (lo ? flags_[word] : 0) | (pattern & mask);
    from += hi - lo;
  }
}

void StackKeyBuilder::append_key(const Sample& s, const void* root, const ProcessMaps* proc,
                                 const UnwoundUserStack& unwound, KeyWords& key) {
  if (s.callchain_nr > 0 && !is_dwarf(s)) {
    append_callchain_key(s, root, proc, key);
    return;
  }
  collect_addresses(s, unwound);
  bool user = false;
  for (size_t i = 0; i < count_; ++i) user |= !addresses_[i].kernel;
  if (!user) proc = nullptr;
  const size_t n = count_;
  uint64_t* k = key.extend(kHeaderWords + n + (n + 31) / 32);
  k[0] = n | (is_dwarf(s) ? kDwarfUser : 0);
  k[1] = reinterpret_cast<uintptr_t>(root);
  k[2] = proc ? proc->generation : 0;
  k[3] = table_.kernel().generation;
  uint64_t* flags = k + kHeaderWords + n;
  std::fill(flags, flags + (n + 31) / 32, uint64_t{0});
  for (size_t i = 0; i < n; ++i) {
    const StackAddress& a = addresses_[i];
    k[kHeaderWords + i] = a.address;
    flags[i / 32] |= uint64_t((a.return_address ? 1u : 0u) | (a.kernel ? 2u : 0u)) << (2 * (i % 32));
  }
}

}  // namespace fg
