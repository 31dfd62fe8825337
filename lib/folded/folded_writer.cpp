#include "folded/folded_writer.h"

#include <charconv>
#include <algorithm>
#include <cmath>

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

void write_folded(const FoldedProfile& profile, AtomicOutput& out) {
  std::string buf;
  buf.reserve(1 << 20);
  write_lines(profile, buf, [&](bool last) {
    if (last || buf.size() >= (1 << 20)) {
      out.write(buf);
      buf.clear();
    }
  });
}

}  // namespace fg
