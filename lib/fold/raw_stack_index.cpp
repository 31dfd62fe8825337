#include "fold/raw_stack_index.h"

#include <algorithm>

namespace fg {

KeyWords& RawStackIndex::next_key() {
  if (count_ == kRing) resolve_oldest();
  KeyWords& words = at(count_).words;
  words.clear();
  return words;
}

void RawStackIndex::commit(double weight, int32_t pid, const ProcessMaps* proc) {
  Pending& p = at(count_);
  p.hash = RawStackTable::hash_words(p.words.data(), uint32_t(p.words.size()), &p.check);
  p.weight = weight;
  p.pid = pid;
  p.proc = proc;
  const RawStackTable& t = table();
  t.prefetch_slot(p.hash);
  ++count_;
  if (count_ > kPrefetchKeyAfter) t.prefetch_key(at(count_ - 1 - kPrefetchKeyAfter).hash);
}

void RawStackIndex::flush() { resolve_first(count_); }

void RawStackIndex::flush_process(int32_t pid) {
  for (size_t i = count_; i-- > 0;)
    if (at(i).pid == pid) return resolve_first(i + 1);
}

// The n oldest samples, after prefetching the keys commit() has not
// prefetched yet (the newest kPrefetchKeyAfter) among them.
void RawStackIndex::resolve_first(size_t n) {
  for (size_t i = count_ > kPrefetchKeyAfter ? count_ - kPrefetchKeyAfter : 0; i < n; ++i)
    table().prefetch_key(at(i).hash);
  while (n-- > 0) resolve_oldest();
}

void RawStackIndex::resolve_oldest() {
  const Pending& p = ring_[head_];
  uint64_t* entry = nullptr;
  uint32_t idx = resolve(p.words.data(), uint32_t(p.words.size()), StackFingerprint{p.hash, p.check}, p.pid, p.proc,
                         &entry);
  RawStackTable::add_weight(entry, p.weight);
  if (count_samples_) {
    if (counts_.size() <= idx) counts_.resize(size_t(idx) + 1 + counts_.size() / 2);
    ++counts_[idx];
  }
  head_ = (head_ + 1) % kRing;
  --count_;
}

uint32_t RawStackIndex::index_now(const uint64_t* key, uint32_t count, int32_t pid, const ProcessMaps* proc) {
  StackFingerprint fp;
  fp.hash = RawStackTable::hash_words(key, count, &fp.check);
  return resolve(key, count, fp, pid, proc, nullptr);
}

uint32_t RawStackIndex::resolve(const uint64_t* key, uint32_t count, const StackFingerprint& fp, int32_t pid,
                                const ProcessMaps* proc, uint64_t** entry) {
  const uint64_t hash = fp.hash;
  uint32_t idx = tables_[current_].find(key, count, hash, entry);
  if (idx != RawStackTable::kMissing) return first_index() + idx;
  if (max_stacks_ && tables_[current_].size() >= table_stacks_) make_room();  // may switch tables
  RawStackTable& table = tables_[current_];
  idx = table.insert(key, count, hash, entry);
  const uint32_t index = first_index() + idx;
  uint32_t stored_count = 0;
  sink_.on_new_stack(index, table.key(idx, &stored_count), pid, proc, fp);
  return index;
}

// The table in use is full. One table: it is forgotten now. Two: the other
// one (full since the last time) is forgotten and takes the next stacks,
// and the full one waits its turn.
void RawStackIndex::make_room() {
  const unsigned next = two_tables_ ? 1 - current_ : current_;
  RawStackTable& table = tables_[next];
  if (next == current_ || retired_) {
    sink_.forget_stacks(table, uint32_t(next * table_stacks_));
    forgotten_ += table.size();
    table.clear();
    std::fill(counts_.begin(), counts_.end(), 0);
  }
  if (next != current_) {
    sink_.table_retired();
    retired_ = true;
    current_ = next;
  }
}

}  // namespace fg
