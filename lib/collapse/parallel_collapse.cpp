#include "collapse/parallel_collapse.h"

#include <atomic>
#include <deque>
#include <exception>
#include <memory>
#include <vector>

#include "collapse/text_chunker.h"
#include "diagnostics/progress.h"
#include "folded/spare_pool.h"
#include "folded/worker_queue.h"

namespace fg {

namespace {

// Chunks handed to a worker and not yet folded, per worker: the reading
// thread waits beyond that, so memory stays at about
// threads * (kBacklog + 1) chunks.
constexpr size_t kBacklog = 2;

// One worker's part: its collapser and the profile it folds into, owned by
// the calling thread until the workers start and after they stop.
struct Part {
  FoldedProfile profile;
  std::unique_ptr<PerfScriptCollapser> collapser;
  // The worker's first failure: the index of its chunk and the exception.
  uint64_t failed_chunk = UINT64_MAX;
  std::exception_ptr error;
};

struct Job {
  TextChunk* chunk;
  uint64_t index;  // in input order
};

// Chunks reused between the reading thread and the workers.
using ChunkPool = SparePool<TextChunk>;

// The earliest failure among the parts: chunks go out in input order and
// each worker stops at its first failure, so the failure in the earliest
// chunk is the input's first (before a read error of the reading thread's,
// which is later in the input).
void rethrow_first_failure(const std::deque<Part>& parts) {
  const Part* first = nullptr;
  for (const Part& p : parts)
    if (p.error && (!first || p.failed_chunk < first->failed_chunk)) first = &p;
  if (first) std::rethrow_exception(first->error);
}

// Hands the rest of the input to one worker per part, chunk by chunk, and
// joins them: then the parts are the calling thread's again.
void fold_on_workers(TextChunker& chunker, std::deque<Part>& parts, ChunkPool& pool, Progress& progress) {
  const size_t threads = parts.size();
  // The earliest chunk that failed so far: later chunks need not be
  // folded, earlier ones still must (one of them may fail earlier still).
  std::atomic<uint64_t> first_failed{UINT64_MAX};
  std::vector<std::unique_ptr<WorkerQueue<Job>>> workers;  // declared last: stopped before the rest goes
  for (Part& part : parts) {
    workers.push_back(std::make_unique<WorkerQueue<Job>>(
        [&part, &pool, &first_failed](const std::vector<Job>& jobs) {
          for (const Job& job : jobs) {
            try {
              if (part.failed_chunk == UINT64_MAX && job.index < first_failed.load(std::memory_order_relaxed))
                part.collapser->feed_chunk(*job.chunk);
            } catch (...) {
              part.failed_chunk = job.index;
              part.error = std::current_exception();
              uint64_t seen = first_failed.load(std::memory_order_relaxed);
              while (job.index < seen && !first_failed.compare_exchange_weak(seen, job.index)) {
              }
            }
            pool.give_back(job.chunk);
          }
        },
        kBacklog));
  }
  // A chunk that continues a sample goes to the worker that has its start
  // (part 0 has the calling thread's last chunk); one that starts a sample,
  // to the next worker.
  size_t worker = 0;
  uint64_t index = 0;
  try {
    while (first_failed.load(std::memory_order_relaxed) == UINT64_MAX) {
      TextChunk* chunk = pool.take();
      if (!chunker.next(*chunk)) {
        pool.give_back(chunk);
        break;
      }
      if (chunk->starts_sample) worker = (worker + 1) % threads;
      workers[worker]->submit_one(Job{chunk, index++});
      progress.update(chunker.bytes_read());
    }
  } catch (...) {
    for (auto& w : workers) w->stop();
    rethrow_first_failure(parts);
    throw;
  }
  for (auto& w : workers) w->stop();
  rethrow_first_failure(parts);
}

}  // namespace

FoldedProfile collapse_in_parallel(InputStream& in, uint64_t size, const CollapseOptions& options,
                                   unsigned threads, size_t chunk_bytes, CollapseStats* stats) {
  TextChunker chunker(in, chunk_bytes, PerfScriptCollapser::kMaxLineBytes, /*number_lines=*/true);
  Progress progress("collapse " + in.name(), size, options.progress);
  std::deque<Part> parts;
  auto add_part = [&]() -> Part& {
    Part& p = parts.emplace_back();
    p.collapser = std::make_unique<PerfScriptCollapser>(p.profile, options, in.name());
    return p;
  };
  add_part();

  // Until a sample settles which event is folded (the first one seen, or
  // the first to match --event), this thread folds alone: every part then
  // folds that event, as one collapser reading the whole input would.
  ChunkPool pool;
  TextChunk* chunk = pool.take();
  bool more = false;
  while ((more = chunker.next(*chunk))) {
    parts[0].collapser->feed_chunk(*chunk);
    progress.update(chunker.bytes_read());
    if (parts[0].collapser->event_chosen()) break;
  }
  pool.give_back(chunk);
  if (more) {
    for (unsigned t = 1; t < threads; ++t) add_part().collapser->follow_event_of(*parts[0].collapser);
    fold_on_workers(chunker, parts, pool, progress);
  }

  for (Part& p : parts) p.collapser->finish();
  progress.finish();
  FoldedProfile& out = parts[0].profile;
  CollapseStats total = parts[0].collapser->stats();
  for (size_t t = 1; t < parts.size(); ++t) {
    out.merge(parts[t].profile);
    add_collapse_stats(total, parts[t].collapser->stats());
    // A part that folded no sample with a period says "samples"; any other
    // part knows the event's unit.
    if (out.units == "samples") out.units = parts[t].profile.units;
  }
  if (stats) *stats = total;
  return std::move(out);
}

}  // namespace fg
