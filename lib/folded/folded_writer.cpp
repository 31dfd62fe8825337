#include "folded/folded_writer.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <memory>
#include <system_error>
#include <vector>

#include "folded/spare_pool.h"
#include "folded/worker_queue.h"

namespace fg {

void append_count(std::string& out, double v) {
  char buf[64];
  if (v == 0) v = 0;  // no "-0"
  if (std::fabs(v) < 9007199254740992.0 && v == std::floor(v)) {
    auto r = std::to_chars(buf, buf + sizeof buf, static_cast<int64_t>(v));
    out.append(buf, r.ptr);
    return;
  }
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

std::string format_count(double v) {
  std::string s;
  append_count(s, v);
  return s;
}

std::string_view StackText::of(const std::vector<FrameId>& frames) {
  size_t k = 0, n = std::min(frames.size(), frames_.size());
  while (k < n && frames[k] == frames_[k]) ++k;
  frames_.resize(k);
  ends_.resize(k);
  text_.resize(k ? ends_[k - 1] : 0);
  for (size_t i = k; i < frames.size(); ++i) {
    if (i) text_ += ';';
    text_ += profile_.frame_name(frames[i]);
    ends_.push_back(text_.size());
    frames_.push_back(frames[i]);
  }
  return text_;
}

namespace {

template <class Flush>
void write_lines(const FoldedProfile& profile, std::string& buf, Flush&& flush) {
  StackText text(profile);
  profile.for_each_stack([&](const std::vector<FrameId>& frames, double weight) {
    buf += text.of(frames);
    buf += ' ';
    append_count(buf, weight);
    buf += '\n';
    flush(false);
  });
  flush(true);
}

}  // namespace

std::string units_header_line(const std::string& units) {
  std::string clean;
  for (char c : units)
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '/' || c == '_') clean += c;
  return std::string(kUnitsHeaderPrefix) + (clean.empty() ? "samples" : clean) + "\n";
}

void write_folded(const FoldedProfile& profile, std::string& out) {
  write_lines(profile, out, [](bool) {});
}

// A megabyte at a time, each written on a thread of its own (a WorkerQueue)
// while the next is made, so that writing a file (the page cache's copy:
// about 60 ms of a busy machine's 55 MB fold) overlaps the tree walk that
// makes the text (about 27 ms) instead of following it. An output under a
// megabyte is written here, and so is all of it where no thread can be
// started. A write error stops the writing and comes back from drain().
// The chunks' buffers go back to be filled again: a fresh megabyte per
// chunk was fresh pages to fault in and zero, and a free that unmapped
// them (busy9.data's 62 MB: 10% of the write's time in malloc and free).
void write_folded(const FoldedProfile& profile, AtomicOutput& out) {
  constexpr size_t kChunk = size_t(1) << 20;
  // The backlog bounds the buffers made (two queued, one being written,
  // one being filled).
  SparePool<std::string> buffers;
  // Declared after what its thread uses, so that it stops first when an
  // exception leaves early.
  std::unique_ptr<WorkerQueue<std::string*>> writer;
  bool no_thread = false;
  std::string buf;  // filled by write_lines; a chunk's text is swapped out into a buffer
  buf.reserve(kChunk);
  write_lines(profile, buf, [&](bool last) {
    if (!last && buf.size() < kChunk) return;
    if (!writer && !no_thread && !last) {
      try {
        writer = std::make_unique<WorkerQueue<std::string*>>(
            [&out, &buffers](const std::vector<std::string*>& chunks) {
              for (std::string* chunk : chunks) {
                out.write(*chunk);
                chunk->clear();
                buffers.give_back(chunk);
              }
            },
            2);
      } catch (const std::system_error&) {
        no_thread = true;
      }
    }
    if (!writer) {
      out.write(buf);
      buf.clear();
      return;
    }
    std::string* chunk = buffers.take();
    if (chunk->capacity() < kChunk) chunk->reserve(kChunk);  // a new one: into buf by the swap
    chunk->swap(buf);  // buf keeps the spare's memory
    writer->submit_one(chunk);
  });
  if (writer) writer->drain();
}

}  // namespace fg
