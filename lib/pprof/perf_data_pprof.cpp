// pprof_from_perf_data (pprof_export.h): the fold with a PerfDataCollector watching,
// then the profile built from the fold and what the collector saw.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <future>
#include <memory>
#include <stdexcept>
#include <thread>
#include <unordered_map>

#include "folded/prefetch.h"
#include "pprof/export_parts.h"
#include "pprof/perf_data_collector.h"
#include "pprof/perf_wall_clock.h"
#include "pprof/pprof_builder.h"
#include "pprof/pprof_export.h"
#include "pprof/source_lines.h"
#include "symbols/build_id.h"
#include "symbols/elf_object.h"

namespace fg {

namespace {

using pprof_export::Label;
using pprof_export::SampleLabels;
using pprof_export::seconds_since;

bool is_clock(const EventAttr& a) { return a.type == 1 && (a.config == 0 || a.config == 1); }

// Function ids for locations encoded on another thread, numbered in order
// of first use as PprofBuilder::function numbers them; the functions (and
// their strings) go into the builder afterwards, in that order (add_to),
// which interns the strings in the order the builder would have.
class DeferredFunctions {
 public:
  explicit DeferredFunctions(size_t frames) : without_file_(frames, 0) {}
  uint64_t of(FrameId f, std::string_view file, int64_t start_line) {
    if (file.empty()) {
      uint64_t& id = without_file_[f];
      if (!id) id = add(f, file, 0);
      return id;
    }
    auto [it, fresh] = with_file_.try_emplace(Key{f, file}, 0);
    if (fresh) it->second = add(f, file, start_line);
    return it->second;
  }
  void add_to(PprofBuilder& b, const FoldedProfile& profile) const {
    for (size_t i = 0; i < order_.size(); ++i)
      if (b.function(profile.frame_name(order_[i].frame), order_[i].file, order_[i].start_line) != i + 1)
        throw std::logic_error("pprof export: function ids out of order");
  }

 private:
  struct Entry {
    FrameId frame;
    std::string_view file;
    int64_t start_line;
  };
  struct Key {
    FrameId frame;
    std::string_view file;
    bool operator==(const Key& o) const { return frame == o.frame && file == o.file; }
  };
  struct KeyHash {
    size_t operator()(const Key& k) const { return std::hash<std::string_view>()(k.file) ^ (size_t(k.frame) * 0x9e3779b97f4a7c15ull); }
  };
  uint64_t add(FrameId f, std::string_view file, int64_t start_line) {
    order_.push_back(Entry{f, file, start_line});
    return order_.size();
  }
  std::vector<uint64_t> without_file_;  // per frame
  std::unordered_map<Key, uint64_t, KeyHash> with_file_;
  std::vector<Entry> order_;  // id - 1
};

// Builds the pprof of one perf.data from its fold and what the collector saw.
class PerfDataPprof {
 public:
  PerfDataPprof(const std::string& path, const FoldOptions& fold_options, const PprofExportOptions& options,
                const FoldStats& fs, const FoldedProfile& profile, const PerfDataCollector& c)
      : path_(path), fold_options_(fold_options), options_(options), fs_(fs), profile_(profile), c_(c),
        function_of_(profile.frame_count(), 0) {}

  // The threads write members declared after their futures: they must end
  // first (the locations' thread waits for the lookups).
  ~PerfDataPprof() {
    if (locations_done_.valid()) locations_done_.wait();
    if (source_done_.valid()) source_done_.wait();
  }
  PerfDataPprof(const PerfDataPprof&) = delete;
  PerfDataPprof& operator=(const PerfDataPprof&) = delete;

  PprofBuilder& builder() { return b_; }

  void describe() {
    set_value_types();
    if (options_.gzip) b_.compress_while_building(options_.gzip_level);
    const uint64_t first = fs_.read.first_sample_time ? fs_.read.first_sample_time : fs_.file.first_sample_time;
    const uint64_t last = fs_.read.last_sample_time ? fs_.read.last_sample_time : fs_.file.last_sample_time;
    if (last > first) b_.set_duration_nanos(int64_t(last - first));
    if (first)
      if (auto wall = perf_sample_wall_time(path_, fs_.file, first)) b_.set_time_nanos(*wall);
    if (!fs_.file.hostname.empty()) b_.add_comment("perf.data recorded on " + fs_.file.hostname);
    prepare_mappings();
    start_source_lookups();
  }

  void add_samples() {
    SampleLabels labels(b_, profile_, options_);
    labels_ = &labels;
    k_comm_ = b_.string_id("comm");
    k_pid_ = b_.string_id("pid");
    k_tid_ = b_.string_id("tid");
    // About 16 bytes of labels and 3 per location id a sample.
    b_.reserve_samples((c_.weights.size() + c_.off_weights.size()) * 40 + c_.stack_locs.size() * 3);
    // Location ids are the collector's when the samples use the locations
    // in the order the collector numbered them: the locations are then
    // encoded on another thread while the samples are.
    in_collector_order_ = in_collector_order();
    if (in_collector_order_) {
      locations_done_ = std::async(std::launch::async, [this] { encode_locations_in_collector_order(); });
    } else {
      location_of_.resize(c_.locations.size(), 0);
      // About 20 bytes a location (id, mapping, address, one line).
      b_.reserve_locations(c_.locations.size() * 20 + c_.names.size() * 6);
    }
    const FoldView view = fold_options_.view;
    if (view != FoldView::off_cpu) emit_all(c_.weights, false);
    if (view != FoldView::on_cpu) emit_all(c_.off_weights, true);
    labels_ = nullptr;
  }

  // The mappings and locations, once the samples have numbered them (in
  // order of first use), with the DWARF lines the other thread found.
  void add_locations() {
    if (locations_done_.valid()) locations_done_.get();  // it got source_done_
    if (source_done_.valid()) source_done_.get();
    std::vector<uint32_t> by_id(mappings_.size());
    for (uint32_t i = 0; i < by_id.size(); ++i) by_id[mapping_id_[i] - 1] = i;
    for (uint32_t i : by_id) {
      mappings_[i].has_filenames = mappings_[i].has_line_numbers = source_objects_[i] != SourceLines::kNoObject;
      if (b_.add_mapping(mappings_[i]) != mapping_id_[i]) throw std::logic_error("pprof export: mapping ids out of order");
    }
    if (in_collector_order_) {
      deferred_functions_->add_to(b_, profile_);
      b_.append_locations(std::move(encoded_locations_), c_.locations.size());
      return;
    }
    for (size_t i = 0; i < order_.size(); ++i) {
      const uint32_t entry = order_[i];
      const uint64_t id = entry & kPlainEntry ? encode_plain_location(FrameId(entry & ~kPlainEntry))
                                              : encode_location(entry);
      if (id != i + 1) throw std::logic_error("pprof export: location ids out of order");
    }
  }

  void fill_stats(PprofExportStats& stats) {
    stats.mappings = c_.mappings.size();
    stats.locations = c_.locations.size() + plain_count_;
    stats.functions = b_.function_count();
    if (source_) {
      stats.source_objects = source_->stats().objects_with_lines;
      stats.source_lookups = source_->stats().lookups - source_->stats().cached;
      stats.source_seconds = source_->stats().seconds;
    }
  }

 private:
  // Value columns: samples first (by convention), then the weight.
  void set_value_types() {
    const EventAttr* attr = nullptr;
    for (const EventAttr& a : fs_.file.attrs)
      if (a.name == fs_.event) {
        attr = &a;
        break;
      }
    const bool clock = attr && is_clock(*attr);
    const bool count = fold_options_.count;
    const FoldView view = fold_options_.view;
    if (view != FoldView::on_cpu) {
      const char* type = view == FoldView::off_cpu ? "off_cpu" : "wall";
      b_.add_sample_type(type, count ? "count" : "nanoseconds");
      b_.set_period(type, count ? "count" : "nanoseconds", 1);
      return;
    }
    with_samples_ = !count;
    b_.add_sample_type("samples", "count");
    if (!count) {
      if (clock) b_.add_sample_type("cpu", "nanoseconds");
      else b_.add_sample_type(fs_.event.empty() ? "events" : fs_.event, "count");
    }
    if (attr) {
      uint64_t p = attr->sample_period;
      if (clock) b_.set_period("cpu", "nanoseconds", int64_t(attr->freq() ? (p ? 1000000000 / p : 0) : p));
      else if (!attr->freq()) b_.set_period(fs_.event, "count", int64_t(p));
    }
  }

  void prepare_mappings() {
    std::unordered_map<std::string, std::string> feature_ids;
    for (const auto& e : fs_.file.build_ids) feature_ids.emplace(e.filename, e.build_id);
    // DWARF file names and lines, for objects the fold found with debuginfo.
    if (options_.source_lines && !fs_.objects.empty()) source_ = std::make_unique<SourceLines>(fs_.objects);
    source_objects_.assign(c_.mappings.size(), SourceLines::kNoObject);
    mappings_.resize(c_.mappings.size());
    // Ids in collector order, but the main binary first (main_mapping).
    mapping_id_.resize(c_.mappings.size());
    const uint32_t main = c_.main_mapping();
    for (uint32_t i = 0; i < mapping_id_.size(); ++i)
      mapping_id_[i] = main == PerfDataCollector::kNone ? i + 1 : i == main ? 1 : i < main ? i + 2 : i + 1;
    for (size_t i = 0; i < c_.mappings.size(); ++i) {
      const auto& m = c_.mappings[i];
      PprofBuilder::Mapping& pm = mappings_[i];
      pm.filename = m.path;
      std::string bid = m.build_id;
      if (bid.empty()) {
        auto it = feature_ids.find(m.path);
        if (it != feature_ids.end()) bid = it->second;
      }
      pm.build_id = build_id_hex(bid);
      if (m.kernel) {
        pm.memory_start = c_.kernel_min;
        pm.memory_limit = c_.kernel_max + 1;
      } else {
        pm.memory_start = m.start;
        pm.memory_limit = m.limit;
        pm.file_offset = m.offset;
      }
      pm.has_inline_frames = fold_options_.symbols.inline_frames;
    }
  }

  // Opens the objects with DWARF and looks up every location in them, on
  // another thread while the samples are encoded (the first lookups in a
  // large object cost tens of ms: its line tables and debug sections).
  void start_source_lookups() {
    if (!source_) return;
    source_at_.assign(c_.locations.size(), {0, 0});
    source_done_ = std::async(std::launch::async, [this] {
      for (size_t i = 0; i < c_.mappings.size(); ++i)
        if (!c_.mappings[i].kernel) source_objects_[i] = source_->object(c_.mappings[i].path, c_.mappings[i].build_id);
      for (size_t li = 0; li < c_.locations.size(); ++li) {
        const auto& l = c_.locations[li];
        if (l.mapping == PerfDataCollector::kNone || source_objects_[l.mapping] == SourceLines::kNoObject) continue;
        const auto& m = c_.mappings[l.mapping];
        size_t n = 0;
        const SourceLines::Frame* f = source_->lookup(source_objects_[l.mapping], l.address - m.start + m.offset,
                                                      PerfDataCollector::return_address(l), &n);
        source_at_[li] = {uint32_t(source_frames_.size()), uint32_t(n)};
        source_frames_.insert(source_frames_.end(), f, f + n);
      }
    });
  }

  uint64_t function(FrameId f) {
    if (function_of_[f] == 0) function_of_[f] = b_.function(profile_.frame_name(f));
    return function_of_[f];
  }

  // A location's id; it is encoded by add_locations.
  uint64_t location(uint32_t li) {
    uint32_t& id = location_of_[li];
    if (!id) {
      if (li >= kPlainEntry || order_.size() >= kPlainEntry) throw std::length_error("pprof export: too many locations");
      order_.push_back(li);
      id = uint32_t(order_.size());
    }
    return id;
  }

  // Frames with no address (the root's comm, "[off-cpu: S]"): one location each.
  uint64_t plain_location(FrameId f) {
    if (f >= plain_location_of_.size()) {
      if (f >= kPlainEntry) throw std::length_error("pprof export: too many frames");
      plain_location_of_.resize(size_t(f) + 1 + plain_location_of_.size() / 2, 0);
    }
    uint32_t& id = plain_location_of_[f];
    if (!id) {
      if (order_.size() >= kPlainEntry) throw std::length_error("pprof export: too many locations");
      order_.push_back(kPlainEntry | f);
      id = uint32_t(order_.size());
      ++plain_count_;
    }
    return id;
  }

  // Whether every raw stack is a sample, in order (on-CPU: one weight per
  // raw stack, each with samples): then the samples use the locations in
  // the order the collector made them, and its numbering is pprof's.
  bool in_collector_order() const {
    if (fold_options_.view != FoldView::on_cpu || !c_.off_weights.empty() || c_.weights.size() != c_.raws.size())
      return false;
    for (size_t k = 0; k < c_.weights.size(); ++k) {
      const PerfDataCollector::Weight& w = c_.weights[k];
      if (w.raw != k || w.samples == 0 || c_.raws[k].root == PerfDataCollector::kNone) return false;
    }
    return true;
  }

  // On the locations' thread: every collector location, in its order, with
  // function ids of its own numbering (DeferredFunctions).
  void encode_locations_in_collector_order() {
    if (source_done_.valid()) source_done_.get();
    deferred_functions_ = std::make_unique<DeferredFunctions>(profile_.frame_count());
    DeferredFunctions& functions = *deferred_functions_;
    auto function_id = [&](FrameId f, std::string_view file, int64_t start_line) {
      return functions.of(f, file, start_line);
    };
    std::vector<PprofBuilder::Line> lines;
    std::string scratch[2];
    encoded_locations_.reserve(c_.locations.size() * 20 + c_.names.size() * 6);
    for (uint32_t li = 0; li < c_.locations.size(); ++li) {
      const auto& l = c_.locations[li];
      location_lines(li, function_id, lines);
      PprofBuilder::encode_location(encoded_locations_, uint64_t(li) + 1,
                                    l.mapping == PerfDataCollector::kNone ? 0 : mapping_id_[l.mapping], l.address, lines.data(),
                                    lines.size(), scratch);
    }
  }

  // A location's lines, innermost (inlined) first: the fold's frame names,
  // with DWARF's files and lines where the object has them.
  uint64_t encode_location(uint32_t li) {
    auto function_id = [this](FrameId f, std::string_view file, int64_t start_line) {
      return file.empty() ? function(f) : b_.function(profile_.frame_name(f), file, start_line);
    };
    location_lines(li, function_id, lines_);
    const auto& l = c_.locations[li];
    return b_.add_location(l.mapping == PerfDataCollector::kNone ? 0 : mapping_id_[l.mapping], l.address, lines_.data(),
                           lines_.size());
  }

  // function_id(frame, file, start line): the id of the function.
  template <class FunctionId>
  void location_lines(uint32_t li, FunctionId&& function_id, std::vector<PprofBuilder::Line>& lines) const {
    const auto& l = c_.locations[li];
    lines.clear();
    size_t nsrc = 0;
    const SourceLines::Frame* src = nullptr;
    if (!source_at_.empty()) {
      nsrc = source_at_[li].second;
      src = source_frames_.data() + source_at_[li].first;
    }
    const uint32_t name_count = c_.name_count(l);
    const FrameId* names = c_.location_names(l);
    for (uint32_t k = name_count; k-- > 0;) {
      const FrameId f = names[k];
      // The fold's frames are outermost first, DWARF's innermost first:
      // matched one to one when they agree in number; else the function
      // alone (without --inline) gets the outermost DWARF frame.
      const uint32_t depth = name_count - 1 - k;  // 0 = innermost
      const SourceLines::Frame* s = nullptr;
      if (nsrc == name_count) s = &src[depth];
      else if (nsrc && name_count == 1) s = &src[nsrc - 1];
      if (s && !s->function_file.empty()) lines.push_back(PprofBuilder::Line{function_id(f, s->function_file, s->start_line), s->line});
      else lines.push_back(PprofBuilder::Line{function_id(f, std::string_view(), 0), s ? s->line : 0});
    }
  }

  uint64_t encode_plain_location(FrameId f) {
    PprofBuilder::Line line{function(f), 0};
    return b_.add_location(0, 0, &line, 1);
  }

  // The weights' samples in order. Their nodes' label keys are read first in
  // a loop of independent loads (each a cache miss on a large profile, which
  // then overlap), and the location ids of the stack a few weights ahead are
  // prefetched.
  void emit_all(const GrowableArray<PerfDataCollector::Weight>& weights, bool off) {
    constexpr size_t kKeys = 4096, kAhead = 4;
    uint64_t keys[kKeys];
    for (size_t start = 0; start < weights.size(); start += kKeys) {
      const size_t n = std::min(kKeys, weights.size() - start);
      for (size_t i = 0; i < n; ++i) keys[i] = labels_->key(weights[start + i].node);
      for (size_t i = 0; i < n; ++i) {
        if (!in_collector_order_ && start + i + kAhead < weights.size())
          prefetch_locations(weights[start + i + kAhead]);
        emit(weights[start + i], keys[i], off);
      }
    }
  }

  void prefetch_locations(const PerfDataCollector::Weight& w) {
    if (w.raw >= c_.raws.size()) return;
    const auto& raw = c_.raws[w.raw];
    if (raw.root == PerfDataCollector::kNone) return;
    for (uint32_t i = 0; i < raw.locs_count; ++i) prefetch_for_read(&location_of_[c_.stack_locs[raw.locs_start + i]]);
  }

  void emit(const PerfDataCollector::Weight& w, uint64_t label_key, bool off) {
    if (w.raw >= c_.raws.size() || c_.raws[w.raw].root == PerfDataCollector::kNone) return;
    const auto& raw = c_.raws[w.raw];
    const auto& root = c_.roots[raw.root];
    locs_.clear();
    if (w.extra != FoldedProfile::kNoFrame) locs_.push_back(plain_location(w.extra));
    const uint32_t* ids = c_.stack_locs.data() + raw.locs_start;
    if (in_collector_order_) {
      for (uint32_t i = 0; i < raw.locs_count; ++i) locs_.push_back(uint64_t(ids[i]) + 1);
    } else {
      for (uint32_t i = 0; i < raw.locs_count; ++i) locs_.push_back(location(ids[i]));
    }
    int64_t values[2];
    size_t nv = 0;
    if (with_samples_) values[nv++] = int64_t(w.samples);
    values[nv++] = int64_t(std::llround(w.value));
    if (!off && fold_options_.view == FoldView::on_cpu && fold_options_.count) values[0] = int64_t(w.samples);
    if (values[nv - 1] == 0 && (!with_samples_ || values[0] == 0)) return;
    b_.add_sample(locs_.data(), locs_.size(), values, nv, labels_of(w, label_key, raw, root));
  }

  // Samples of one thread in one category share their labels' bytes (and
  // neighbouring samples mostly have the same: a cheap check first).
  const std::string& labels_of(const PerfDataCollector::Weight& w, uint64_t node_key,
                               const PerfDataCollector::RawStack& raw, const PerfDataCollector::Root& root) {
    const uint64_t label_key = (uint64_t(raw.root) << 32) ^ node_key;
    if (last_labels_ && label_key == last_label_key_) return *last_labels_;
    auto [it, fresh] = label_bytes_.try_emplace(label_key);
    last_label_key_ = label_key;
    last_labels_ = &it->second;
    if (fresh) {
      sample_labels_.clear();
      sample_labels_.push_back(Label{k_comm_, b_.string_id(root.comm), 0, 0});
      sample_labels_.push_back(Label{k_pid_, 0, root.pid, 0});
      sample_labels_.push_back(Label{k_tid_, 0, root.tid, 0});
      labels_->append(w.node, sample_labels_);
      it->second = b_.encode_labels(sample_labels_.data(), sample_labels_.size());
    }
    return it->second;
  }

  const std::string& path_;
  const FoldOptions& fold_options_;
  const PprofExportOptions& options_;
  const FoldStats& fs_;
  const FoldedProfile& profile_;
  const PerfDataCollector& c_;
  PprofBuilder b_;
  bool with_samples_ = false;
  std::vector<PprofBuilder::Mapping> mappings_;  // per collector mapping
  std::vector<uint64_t> mapping_id_;  // per collector mapping: its pprof id
  std::unique_ptr<SourceLines> source_;
  // Written by the lookup thread until source_done_ is ready.
  std::future<void> source_done_;
  std::vector<uint32_t> source_objects_;  // per mapping
  std::vector<std::pair<uint32_t, uint32_t>> source_at_;  // per location: source_frames_[first, first + count)
  std::vector<SourceLines::Frame> source_frames_;
  // Locations in order of first use (their ids - 1): a collector location's
  // index, or kPlainEntry | a frame without an address.
  static constexpr uint32_t kPlainEntry = uint32_t(1) << 31;
  GrowableArray<uint32_t> order_;
  std::vector<uint64_t> function_of_;
  // Per collector location: its id, 0 until used. Read at random by emit:
  // 4 bytes an entry, on huge pages.
  GrowableArray<uint32_t> location_of_;
  // In collector order (see in_collector_order), the locations' thread
  // writes these until locations_done_ is ready.
  bool in_collector_order_ = false;
  std::unique_ptr<DeferredFunctions> deferred_functions_;
  std::string encoded_locations_;
  std::future<void> locations_done_;
  std::vector<uint32_t> plain_location_of_;  // per frame: its location id, 0 until used
  size_t plain_count_ = 0;
  std::vector<PprofBuilder::Line> lines_;
  std::vector<uint64_t> locs_;
  const SampleLabels* labels_ = nullptr;
  int64_t k_comm_ = 0, k_pid_ = 0, k_tid_ = 0;
  std::unordered_map<uint64_t, std::string> label_bytes_;  // node-based: the strings stay put
  uint64_t last_label_key_ = 0;
  const std::string* last_labels_ = nullptr;
  std::vector<Label> sample_labels_;
};


}  // namespace

std::string pprof_from_perf_data(const std::string& path, const FoldOptions& fold_options,
                                 const PprofExportOptions& options, FoldStats* fold_stats, FoldedProfile* folded,
                                 PprofExportStats* stats) {
  // The collector's thread (per-process addresses), unless the fold is
  // asked for one thread, or there is one core.
  PerfDataCollector c(fold_options.threads != 1 && std::thread::hardware_concurrency() > 1, options.addresses);
  FoldOptions fo = fold_options;
  fo.observer = &c;
  // Where each object was found: its DWARF gives file names and lines.
  if (options.source_lines) fo.object_statuses = true;
  FoldStats local;
  FoldStats& fs = fold_stats ? *fold_stats : local;
  auto t0 = std::chrono::steady_clock::now();
  FoldedProfile profile = fold_perf_data(path, fo, &fs);
  c.finish();
  if (stats) stats->fold_seconds = seconds_since(t0);
  auto t1 = std::chrono::steady_clock::now();
  PerfDataPprof p(path, fold_options, options, fs, profile, c);
  p.describe();
  p.add_samples();
  p.add_locations();
  if (stats) {
    p.fill_stats(*stats);
    stats->build_seconds = seconds_since(t1);
  }
  std::string out = pprof_export::encode(p.builder(), options, stats);
  if (folded) *folded = std::move(profile);
  return out;
}


}  // namespace fg
