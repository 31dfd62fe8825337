// ReadOptions::reading_thread: records are read, validated, ordered and
// their samples decoded on a second thread; the calling thread delivers each
// FINISHED_ROUND's batch to the handler. The handler sees the same calls in
// the same order as without the thread.
#include <thread>

#include "perf/perf_reader_impl.h"
#include "perf/sample_decoder.h"

namespace fg {

using perf_abi::FormatError;
using perf_abi::load;
namespace abi = perf_abi;
using perf_read::H;

// Reading thread: decodes a batch's samples where they will stay until the
// batch is delivered (the file mapping, or the batch's arena blocks).
void PerfDataReader::Impl::decode_samples(Batch& b) {
  // Grow only: a recycled batch's Samples are overwritten by decode_sample,
  // and value-initialising ~1000 of them per round showed in profiles.
  if (b.samples.size() < b.records.size()) b.samples.resize(b.records.size());
  for (size_t i = 0; i < b.records.size(); ++i)
    if (b.records[i].type == abi::SAMPLE) decode_queued_sample(b.records[i], b.samples[i]);
}

// A queued SAMPLE, decoded for delivery with its index and offset.
void PerfDataReader::Impl::decode_queued_sample(const perf_order::QueuedRecord& r, Sample& s) {
  try {
    perf_sample::decode_sample(info.attrs[r.attr_index], r.data, r.size, s);
  } catch (const FormatError& e) {
    // Validated when read; reaching this means a reader bug, still report it cleanly.
    throw InputError::at_offset(path, r.file_offset, "SAMPLE record: " + std::string(e.what()));
  }
  s.attr_index = r.attr_index;
  s.file_offset = r.file_offset;
}

void PerfDataReader::Impl::deliver_sample(const Sample& s) {
  try {
    handler->on_sample(s);
  } catch (...) {
    handler_threw = true;
    throw;
  }
}

// Reading thread: queue a batch for delivery, waiting while kMaxBatches are
// pending (memory stays bounded by a few rounds).
void PerfDataReader::Impl::hand_over(Batch&& b) {
  std::unique_lock<std::mutex> lock(batch_mutex);
  const uint64_t budget = memory_limit() / 4;
  batch_cv.wait(lock, [&] {
    return (batches.size() < kMaxBatches && (pending_batch_bytes == 0 || pending_batch_bytes + b.bytes <= budget)) ||
           stop_reading;
  });
  if (stop_reading) throw HandlerStopped();
  pending_batch_bytes += b.bytes;
  batches.push_back(std::move(b));
  batch_cv.notify_all();
}

// Reading thread: wait until the calling thread has delivered everything
// handed over, so that info can change without racing the handler.
void PerfDataReader::Impl::wait_until_delivered() {
  if (!threaded) return;
  std::unique_lock<std::mutex> lock(batch_mutex);
  batch_cv.wait(lock, [&] { return (batches.empty() && !delivering) || stop_reading; });
  if (stop_reading) throw HandlerStopped();
}

// Calling thread: delivers the reading thread's batches in order until the
// last one; returns what stopped the reading thread (null at the end).
std::exception_ptr PerfDataReader::Impl::deliver_batches() {
  for (;;) {
    Batch b;
    {
      std::unique_lock<std::mutex> lock(batch_mutex);
      batch_cv.wait(lock, [&] { return !batches.empty(); });
      b = std::move(batches.front());
      batches.pop_front();
      delivering = true;
      batch_cv.notify_all();  // room for the reading thread to queue the next one
    }
    for (size_t i = 0; i < b.records.size(); ++i) {
      if (b.records[i].type == abi::SAMPLE) deliver_sample(b.samples[i]);
      else deliver(b.records[i]);
    }
    if (map && b.release_upto) release_consumed(b.release_upto);
    if (b.last) {
      std::lock_guard<std::mutex> lock(batch_mutex);
      pending_batch_bytes -= b.bytes;
      delivering = false;
      batch_cv.notify_all();
      return b.error;
    }
    b.records.clear();
    b.arena.clear();  // frees the owned records' blocks
    {
      std::lock_guard<std::mutex> lock(batch_mutex);
      pending_batch_bytes -= b.bytes;
      b.bytes = 0;
      delivering = false;
      if (spare_batches.size() < kMaxBatches) spare_batches.push_back(std::move(b));
      batch_cv.notify_all();
    }
  }
}

// The reading thread runs read_loop and hands over a batch per round; the
// calling thread delivers them (deliver_batches) and, on damage, does what
// the single-threaded path does once the reading thread is gone.
void PerfDataReader::Impl::run_threaded(Progress& progress, uint64_t start) {
  threaded = true;
  std::thread reader([&] {
    Batch end;
    end.last = true;
    try {
      read_loop(start, progress);
    } catch (const HandlerStopped&) {
      return;  // the calling thread is unwinding already
    } catch (...) {
      end.error = std::current_exception();
    }
    if (!end.error) {
      try {
        queue.flush_all_into(end.records, end.arena);
        decode_samples(end);
      } catch (...) {
        end.error = std::current_exception();
      }
    }
    std::lock_guard<std::mutex> lock(batch_mutex);
    batches.push_back(std::move(end));  // never blocks: the last one may exceed kMaxBatches
    batch_cv.notify_all();
  });
  auto stop = [&] {
    {
      std::lock_guard<std::mutex> lock(batch_mutex);
      stop_reading = true;
      batch_cv.notify_all();
    }
    reader.join();
  };
  std::exception_ptr read_error;
  try {
    read_error = deliver_batches();
  } catch (...) {
    handler_threw = true;
    stop();
    throw;
  }
  reader.join();
  threaded = false;
  // Damage: the same handling as the single-threaded path, now that the
  // reading thread is gone and the queue is ours.
  if (read_error) {
    try {
      std::rethrow_exception(read_error);
    } catch (const InputError& e) {
      stop_partially(e, "stopped here");  // the handler did not throw: that ended the fold above
    }
    queue.flush_all([this](const perf_order::QueuedRecord& r) { deliver(r); });
  }
}

}  // namespace fg
