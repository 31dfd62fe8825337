#include "fold/dwarf_unwind_pool.h"

#include <algorithm>
#include <cstring>

namespace fg {

DwarfUnwindPool::DwarfUnwindPool(const ProcessTable& table, const DwarfUnwinderOptions& options,
                                 const DwarfUnwinder::ElfPathResolver& elf_path, unsigned unwinders) {
  unwinders = std::max(1u, unwinders);
  for (unsigned i = 0; i < unwinders; ++i) unwinders_.push_back(std::make_unique<DwarfUnwinder>(table, options, elf_path));
  // Helpers wait for a share index (1, 2, ...) per batch; backlog 1: each
  // gets one share per batch and the batch ends with a drain.
  for (unsigned i = 1; i < unwinders; ++i)
    helpers_.push_back(std::make_unique<WorkerQueue<size_t>>(
        [this](const std::vector<size_t>& shares) {
          for (size_t which : shares) unwind_share(which);
        },
        1));
}

DwarfUnwindPool::~DwarfUnwindPool() {
  for (auto& h : helpers_) h->stop();
}

size_t DwarfUnwindPool::copy_bytes(const void* data, size_t size) {
  const size_t offset = bytes_.size() * 8;
  if (!size) return offset;
  const size_t words = (size + 7) / 8;
  uint64_t* copy = bytes_.extend(words);
  copy[words - 1] = 0;  // the padding after a size not a multiple of 8
  std::memcpy(copy, data, size);
  return offset;
}

// The helpers wait on their queues between batches: their unwinders are
// the calling thread's to touch until the next unwind_batch().
void DwarfUnwindPool::forget_process(int32_t pid) {
  for (auto& u : unwinders_) u->forget_process(pid);
}

bool DwarfUnwindPool::add(const Sample& s, bool unwind) {
  QueuedSample q{s, 0, 0, 0, 0, unwind && s.regs_user_mask != 0 && s.stack_user != nullptr};
  q.callchain = copy_bytes(s.callchain, s.callchain_nr * 8);
  q.raw = copy_bytes(s.raw, s.raw_size);
  q.regs = copy_bytes(s.regs_user, size_t(__builtin_popcountll(s.regs_user_mask)) * (s.regs_user ? 8 : 0));
  uint64_t valid = std::min(s.stack_user_dyn_size, s.stack_user_size);
  q.stack = copy_bytes(s.stack_user, s.stack_user ? valid : 0);
  q.sample.stack_user_size = s.stack_user ? valid : 0;
  q.sample.stack_user_dyn_size = q.sample.stack_user_size;
  // Pointers of the copy are set in unwind_batch (the byte buffer may move);
  // what is not copied is cleared.
  q.sample.read_values = nullptr;
  q.sample.branch_entries = nullptr;
  q.sample.branch_counters = nullptr;
  q.sample.regs_intr = nullptr;
  q.sample.aux = nullptr;
  queue_.push_back(q);
  return queue_.size() >= kMaxSamples || bytes_.size() * 8 >= kMaxBytes;
}

// Chunks of kChunk samples go round the unwinders: share `which` takes
// chunks which, which + n, ...
void DwarfUnwindPool::unwind_share(size_t which) {
  DwarfUnwinder& u = *unwinders_[which];
  const size_t n = unwinders_.size();
  for (size_t i = 0; i < queue_.size(); ++i)
    if ((i / kChunk) % n == which && queue_[i].unwind) queue_[i].outcome = u.unwind(queue_[i].sample, frames_[i]);
}

void DwarfUnwindPool::unwind_batch() {
  if (queue_.empty()) return;
  const uint8_t* base = reinterpret_cast<const uint8_t*>(bytes_.data());
  for (QueuedSample& q : queue_) {
    Sample& s = q.sample;
    s.callchain = s.callchain_nr ? reinterpret_cast<const uint64_t*>(base + q.callchain) : nullptr;
    s.raw = s.raw_size ? base + q.raw : nullptr;
    if (s.regs_user) s.regs_user = reinterpret_cast<const uint64_t*>(base + q.regs);
    if (s.stack_user) s.stack_user = base + q.stack;
  }
  if (frames_.size() < queue_.size()) frames_.resize(queue_.size());
  for (size_t i = 0; i < helpers_.size(); ++i) helpers_[i]->submit_one(i + 1);
  // An exception (std::bad_alloc) on any side must not end in
  // std::terminate or leave a helper working on the batch: every helper is
  // drained before the calling thread's own error propagates.
  std::exception_ptr error;
  try {
    unwind_share(0);
  } catch (...) {
    error = std::current_exception();
  }
  for (auto& h : helpers_) {
    try {
      h->drain();
    } catch (...) {
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
}

void DwarfUnwindPool::clear() {
  queue_.clear();
  bytes_.clear();
}

UnwindStats DwarfUnwindPool::stats() const {
  UnwindStats into = unwinders_[0]->stats();
  for (size_t i = 1; i < unwinders_.size(); ++i) {
    const UnwindStats& s = unwinders_[i]->stats();
    into.samples += s.samples;
    for (size_t k = 0; k < kUnwindOutcomeCount; ++k) into.by_outcome[k] += s.by_outcome[k];
    into.frames += s.frames;
    into.dwfl_created += s.dwfl_created;
    into.dwfl_invalidated += s.dwfl_invalidated;
    into.dwfl_evicted += s.dwfl_evicted;
    into.dwfl_forgotten += s.dwfl_forgotten;
    into.debug_files_skipped += s.debug_files_skipped;
    into.dwfl_live_peak += s.dwfl_live_peak;
    into.modules_reported += s.modules_reported;
    into.module_report_failures += s.module_report_failures;
    into.stack_reads += s.stack_reads;
    into.file_reads += s.file_reads;
    into.refused_reads += s.refused_reads;
  }
  return into;
}

}  // namespace fg
