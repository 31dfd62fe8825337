#include "pprof/pprof_export.h"

#include <chrono>
#include <cmath>
#include <memory>
#include <unordered_map>

#include "categories/profile_categories.h"
#include "pprof/perf_data_collector.h"
#include "pprof/pprof_builder.h"

namespace fg {

namespace {

using Label = PprofBuilder::Label;

// The sample type a folded profile's units stand for.
std::pair<std::string, std::string> value_type_for_units(const std::string& units) {
  if (units == "ns") return {"cpu", "nanoseconds"};
  if (units == "us") return {"time", "microseconds"};
  if (units == "ms") return {"time", "milliseconds"};
  if (units == "samples") return {"samples", "count"};
  if (units == "events") return {"events", "count"};
  return {units.empty() ? "value" : units, units.empty() ? "count" : units};
}

std::string hex(std::string_view bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

// The labels every sample of a stack ending at `node` gets.
class SampleLabels {
 public:
  SampleLabels(PprofBuilder& b, const FoldedProfile& profile, const PprofExportOptions& options) : b_(b) {
    if (options.categories) {
      categories_ = std::make_unique<ProfileCategories>(profile, *options.categories);
      category_key_ = b.string_id("category");
      phase_key_ = b.string_id("phase");
      for (int k = 0; k < kCategoryKinds; ++k)
        for (const Category& c : options.categories->categories(CategoryKind(k)))
          names_[k].push_back(b.string_id(c.name));
    }
    for (const auto& kv : options.labels) user_.push_back(Label{b.string_id(kv.first), b.string_id(kv.second), 0, 0});
  }
  // What the node's category labels are, as one number (0 without categories).
  uint64_t key(NodeId node) const {
    if (!categories_) return 0;
    return (uint64_t(categories_->sample_category(CategoryKind::resource, node)) << 16) |
           categories_->sample_category(CategoryKind::phase, node);
  }
  // Appends the node's category labels and the user's labels.
  void append(NodeId node, std::vector<Label>& out) const {
    if (categories_) {
      out.push_back(Label{category_key_, names_[0][categories_->sample_category(CategoryKind::resource, node)], 0, 0});
      out.push_back(Label{phase_key_, names_[1][categories_->sample_category(CategoryKind::phase, node)], 0, 0});
    }
    out.insert(out.end(), user_.begin(), user_.end());
  }

 private:
  PprofBuilder& b_;
  std::unique_ptr<ProfileCategories> categories_;
  int64_t category_key_ = 0, phase_key_ = 0;
  std::vector<int64_t> names_[kCategoryKinds];
  std::vector<Label> user_;
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string finish(PprofBuilder& b, const PprofExportOptions& options, PprofExportStats* stats) {
  auto t0 = std::chrono::steady_clock::now();
  std::string out = options.gzip ? b.encode_gzip(options.gzip_level) : b.encode();
  if (stats) stats->encode_seconds = seconds_since(t0);
  if (stats) {
    stats->samples = b.sample_count();
    stats->bytes = out.size();
  }
  return out;
}

bool is_clock(const EventAttr& a) { return a.type == 1 && (a.config == 0 || a.config == 1); }

}  // namespace

std::string pprof_from_folded(const FoldedProfile& profile, const PprofExportOptions& options, PprofExportStats* stats) {
  return pprof_from_folded_groups({PprofGroup{&profile, {}}}, options, stats);
}

std::string pprof_from_folded_groups(const std::vector<PprofGroup>& groups, const PprofExportOptions& options,
                                     PprofExportStats* stats) {
  PprofBuilder b;
  std::string units = groups.empty() ? std::string("samples") : groups[0].profile->units;
  // pprof values are integers: fractional microseconds (trace spans) are
  // written as nanoseconds rather than rounded.
  double scale = 1;
  if (units == "us" || units == "ms") {
    bool fractional = false;
    for (const PprofGroup& g : groups)
      for (NodeId n = 1; n < g.profile->node_count() && !fractional; ++n) {
        double w = g.profile->node(n).self;
        fractional = w != std::floor(w);
      }
    if (fractional) {
      scale = units == "us" ? 1e3 : 1e6;
      units = "ns";
    }
  }
  auto vt = value_type_for_units(units);
  if (units == "ns" && scale != 1) vt.first = "time";
  b.add_sample_type(vt.first, vt.second);
  if (options.gzip) b.compress_while_building(options.gzip_level);
  // One mapping per object the frames name (perf.data-derived profiles know
  // them; folded text does not), one location per (object, frame name).
  std::unordered_map<std::string, uint64_t> mapping_of;
  std::unordered_map<std::string, uint64_t> location_of_name;
  std::vector<uint64_t> locs;
  std::vector<Label> sample_labels;
  uint64_t rounded = 0;
  for (const PprofGroup& g : groups) {
    const FoldedProfile& profile = *g.profile;
    SampleLabels labels(b, profile, options);
    std::vector<Label> group_labels;
    for (const auto& kv : g.labels) group_labels.push_back(Label{b.string_id(kv.first), b.string_id(kv.second), 0, 0});
    std::vector<uint64_t> location_of(profile.frame_count(), 0);
    auto location = [&](FrameId f) {
      uint64_t& loc = location_of[f];
      if (loc) return loc;
      std::string_view object = profile.frame_object(f);
      std::string key(object);
      key += '\0';
      key += profile.frame_name(f);
      auto it = location_of_name.find(key);
      if (it != location_of_name.end()) return loc = it->second;
      uint64_t mapping = 0;
      if (!object.empty()) {
        auto mit = mapping_of.find(std::string(object));
        if (mit == mapping_of.end()) {
          PprofBuilder::Mapping m;
          m.filename = std::string(object);
          mit = mapping_of.emplace(std::string(object), b.add_mapping(m)).first;
        }
        mapping = mit->second;
      }
      PprofBuilder::Line line{b.function(profile.frame_name(f)), 0};
      loc = b.add_location(mapping, 0, &line, 1);
      location_of_name.emplace(std::move(key), loc);
      return loc;
    };
    // Stacks in node order (deterministic for a given input; no sorting),
    // each read leaf first by walking up the parents.
    for (NodeId node = 1; node < profile.node_count(); ++node) {
      double w = profile.node(node).self * scale;
      if (w == 0) continue;
      int64_t v = int64_t(std::llround(w));
      if (std::fabs(double(v) - w) > 1e-6 * std::max(1.0, std::fabs(w))) ++rounded;  // not scaling's float noise
      if (v == 0) continue;
      locs.clear();
      for (NodeId n = node; n != 0; n = profile.node(n).parent) locs.push_back(location(profile.node(n).frame));
      sample_labels.assign(group_labels.begin(), group_labels.end());
      labels.append(node, sample_labels);
      b.add_sample(locs.data(), locs.size(), &v, 1, sample_labels.data(), sample_labels.size());
    }
  }
  if (stats) {
    stats->rounded_weights = rounded;
    stats->mappings = mapping_of.size();
    stats->locations = stats->functions = location_of_name.size();
  }
  return finish(b, options, stats);
}

std::string pprof_from_perf_data(const std::string& path, const FoldOptions& fold_options,
                                 const PprofExportOptions& options, FoldStats* fold_stats, FoldedProfile* folded,
                                 PprofExportStats* stats) {
  PerfDataCollector c;
  FoldOptions fo = fold_options;
  fo.observer = &c;
  FoldStats local;
  FoldStats& fs = fold_stats ? *fold_stats : local;
  auto t0 = std::chrono::steady_clock::now();
  FoldedProfile profile = fold_perf_data(path, fo, &fs);
  if (stats) stats->fold_seconds = seconds_since(t0);
  auto t1 = std::chrono::steady_clock::now();

  PprofBuilder b;
  // ---- what the values are ----
  const EventAttr* attr = nullptr;
  for (const EventAttr& a : fs.file.attrs)
    if (a.name == fs.event) {
      attr = &a;
      break;
    }
  const bool clock = attr && is_clock(*attr);
  const bool count = fold_options.count;
  const FoldView view = fold_options.view;
  // Value columns: samples first (by convention), then the weight.
  bool with_samples = false;
  if (view == FoldView::on_cpu) {
    with_samples = !count;
    b.add_sample_type("samples", "count");
    if (!count) {
      if (clock) {
        b.add_sample_type("cpu", "nanoseconds");
      } else {
        std::string name = fs.event.empty() ? "events" : fs.event;
        b.add_sample_type(name, "count");
      }
    }
    if (attr) {
      uint64_t p = attr->sample_period;
      if (clock) b.set_period("cpu", "nanoseconds", int64_t(attr->freq() ? (p ? 1000000000 / p : 0) : p));
      else if (!attr->freq()) b.set_period(fs.event, "count", int64_t(p));
    }
  } else {
    const char* type = view == FoldView::off_cpu ? "off_cpu" : "wall";
    b.add_sample_type(type, count ? "count" : "nanoseconds");
    b.set_period(type, count ? "count" : "nanoseconds", 1);
  }
  if (options.gzip) b.compress_while_building(options.gzip_level);
  const uint64_t first = fs.read.first_sample_time ? fs.read.first_sample_time : fs.file.first_sample_time;
  const uint64_t last = fs.read.last_sample_time ? fs.read.last_sample_time : fs.file.last_sample_time;
  if (last > first) b.set_duration_nanos(int64_t(last - first));
  if (!fs.file.hostname.empty()) b.add_comment("perf.data recorded on " + fs.file.hostname);

  // ---- mappings ----
  std::unordered_map<std::string, std::string> feature_ids;
  for (const auto& e : fs.file.build_ids) feature_ids.emplace(e.filename, e.build_id);
  std::vector<uint64_t> mapping_ids(c.mappings.size());
  for (size_t i = 0; i < c.mappings.size(); ++i) {
    const auto& m = c.mappings[i];
    PprofBuilder::Mapping pm;
    pm.filename = m.path;
    std::string bid = m.build_id;
    if (bid.empty()) {
      auto it = feature_ids.find(m.path);
      if (it != feature_ids.end()) bid = it->second;
    }
    pm.build_id = hex(bid);
    if (m.kernel) {
      pm.memory_start = c.kernel_min;
      pm.memory_limit = c.kernel_max + 1;
    } else {
      pm.memory_start = m.start;
      pm.memory_limit = m.limit;
      pm.file_offset = m.offset;
    }
    pm.has_inline_frames = fold_options.symbols.inline_frames;
    mapping_ids[i] = b.add_mapping(pm);
  }
  // ---- functions and locations, made when a sample first needs them ----
  std::vector<uint64_t> function_of(profile.frame_count(), 0);
  auto function = [&](FrameId f) {
    if (function_of[f] == 0) function_of[f] = b.function(profile.frame_name(f));
    return function_of[f];
  };
  std::vector<uint64_t> location_of(c.locations.size(), 0);
  std::vector<PprofBuilder::Line> lines;
  auto location = [&](uint32_t li) {
    uint64_t& id = location_of[li];
    if (id) return id;
    const auto& l = c.locations[li];
    lines.clear();
    for (uint32_t k = l.name_count; k-- > 0;) lines.push_back(PprofBuilder::Line{function(c.names[l.names_start + k]), 0});
    id = b.add_location(l.mapping == PerfDataCollector::kNone ? 0 : mapping_ids[l.mapping], l.address, lines.data(),
                        lines.size());
    return id;
  };
  // Frames with no address (the root's comm, "[off-cpu: S]"): one location each.
  std::unordered_map<FrameId, uint64_t> plain_locations;
  auto plain_location = [&](FrameId f) {
    auto it = plain_locations.find(f);
    if (it != plain_locations.end()) return it->second;
    PprofBuilder::Line line{function(f), 0};
    uint64_t id = b.add_location(0, 0, &line, 1);
    plain_locations.emplace(f, id);
    return id;
  };

  // ---- samples ----
  SampleLabels labels(b, profile, options);
  const int64_t k_comm = b.string_id("comm"), k_pid = b.string_id("pid"), k_tid = b.string_id("tid");
  std::unordered_map<uint64_t, std::string> label_bytes;  // node-based: the strings stay put
  uint64_t last_label_key = 0;
  const std::string* last_labels = nullptr;
  std::vector<uint64_t> locs;
  std::vector<Label> sample_labels;
  auto emit = [&](const PerfDataCollector::Weight& w, bool off) {
    if (w.raw >= c.raws.size() || c.raws[w.raw].root == PerfDataCollector::kNone) return;
    const auto& raw = c.raws[w.raw];
    const auto& root = c.roots[raw.root];
    locs.clear();
    if (w.extra != FoldedProfile::kNoFrame) locs.push_back(plain_location(w.extra));
    for (uint32_t i = 0; i < raw.locs_count; ++i) locs.push_back(location(c.stack_locs[raw.locs_start + i]));
    locs.push_back(plain_location(root.frame));
    int64_t values[2];
    size_t nv = 0;
    if (with_samples) values[nv++] = int64_t(w.samples);
    values[nv++] = int64_t(std::llround(w.value));
    if (!off && view == FoldView::on_cpu && count) values[0] = int64_t(w.samples);
    if (values[nv - 1] == 0 && (!with_samples || values[0] == 0)) return;
    // Samples of one thread in one category share their labels' bytes (and
    // neighbouring samples mostly have the same: a cheap check first).
    const uint64_t label_key = (uint64_t(raw.root) << 32) ^ labels.key(w.node);
    if (last_labels && label_key == last_label_key) {
      b.add_sample(locs.data(), locs.size(), values, nv, *last_labels);
      return;
    }
    auto [it, fresh] = label_bytes.try_emplace(label_key);
    last_label_key = label_key;
    last_labels = &it->second;
    if (fresh) {
      sample_labels.clear();
      sample_labels.push_back(Label{k_comm, b.string_id(root.comm), 0, 0});
      sample_labels.push_back(Label{k_pid, 0, root.pid, 0});
      sample_labels.push_back(Label{k_tid, 0, root.tid, 0});
      labels.append(w.node, sample_labels);
      it->second = b.encode_labels(sample_labels.data(), sample_labels.size());
    }
    b.add_sample(locs.data(), locs.size(), values, nv, it->second);
  };
  // About 16 bytes of labels and 3 per location id a sample.
  b.reserve_samples((c.weights.size() + c.off_weights.size()) * 40 + c.stack_locs.size() * 3);
  // About 20 bytes a location (id, mapping, address, one line).
  b.reserve_locations(c.locations.size() * 20 + c.names.size() * 6);
  if (view != FoldView::off_cpu)
    for (const auto& w : c.weights) emit(w, false);
  if (view != FoldView::on_cpu)
    for (const auto& w : c.off_weights) emit(w, true);

  if (stats) {
    stats->mappings = c.mappings.size();
    stats->locations = c.locations.size() + plain_locations.size();
    size_t n = 0;
    for (uint64_t f : function_of) n += f != 0;
    stats->functions = n;
  }
  if (stats) stats->build_seconds = seconds_since(t1);
  std::string out = finish(b, options, stats);
  if (folded) *folded = std::move(profile);
  return out;
}

}  // namespace fg
