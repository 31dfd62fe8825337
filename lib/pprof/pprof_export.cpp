#include "pprof/pprof_export.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <unordered_map>

#include "pprof/export_parts.h"
#include "pprof/pprof_builder.h"

namespace fg {

namespace pprof_export {

std::string encode(PprofBuilder& b, const PprofExportOptions& options, PprofExportStats* stats) {
  auto t0 = std::chrono::steady_clock::now();
  std::string out = options.gzip ? b.encode_gzip(options.gzip_level) : b.encode();
  if (stats) stats->encode_seconds = seconds_since(t0);
  if (stats) {
    stats->samples = b.sample_count();
    stats->bytes = out.size();
  }
  return out;
}

}  // namespace pprof_export

namespace {

using pprof_export::Label;
using pprof_export::SampleLabels;

// The sample type a folded profile's units stand for.
std::pair<std::string, std::string> value_type_for_units(const std::string& units) {
  if (units == "ns") return {"cpu", "nanoseconds"};
  if (units == "us") return {"time", "microseconds"};
  if (units == "ms") return {"time", "milliseconds"};
  if (units == "samples") return {"samples", "count"};
  if (units == "events") return {"events", "count"};
  return {units.empty() ? "value" : units, units.empty() ? "count" : units};
}

// pprof values are integers: fractional microseconds (trace spans) are
// written as nanoseconds rather than rounded. The factor, and the units it
// gives.
double integral_value_scale(const std::vector<PprofGroup>& groups, std::string* units) {
  if (*units != "us" && *units != "ms") return 1;
  bool fractional = false;
  for (const PprofGroup& g : groups)
    for (NodeId n = 1; n < g.profile->node_count() && !fractional; ++n) {
      double w = g.profile->node(n).self;
      fractional = w != std::floor(w);
    }
  if (!fractional) return 1;
  const double scale = *units == "us" ? 1e3 : 1e6;
  *units = "ns";
  return scale;
}

// Locations of folded profiles (no addresses): one mapping per object the
// frames name (perf.data-derived profiles know them; folded text does not),
// one location per (object, frame name), shared by all profiles.
class FoldedLocations {
 public:
  explicit FoldedLocations(PprofBuilder& b) : b_(b) {}
  void start_profile(const FoldedProfile& profile) {
    profile_ = &profile;
    location_of_.assign(profile.frame_count(), 0);
  }
  uint64_t of(FrameId f) {
    uint64_t& loc = location_of_[f];
    if (loc) return loc;
    std::string_view object = profile_->frame_object(f);
    std::string key(object);
    key += '\0';
    key += profile_->frame_name(f);
    auto it = location_of_name_.find(key);
    if (it != location_of_name_.end()) return loc = it->second;
    uint64_t mapping = 0;
    if (!object.empty()) {
      auto mit = mapping_of_.find(std::string(object));
      if (mit == mapping_of_.end()) {
        PprofBuilder::Mapping m;
        m.filename = std::string(object);
        mit = mapping_of_.emplace(std::string(object), b_.add_mapping(m)).first;
      }
      mapping = mit->second;
    }
    PprofBuilder::Line line{b_.function(profile_->frame_name(f)), 0};
    loc = b_.add_location(mapping, 0, &line, 1);
    location_of_name_.emplace(std::move(key), loc);
    return loc;
  }
  size_t count() const { return location_of_name_.size(); }
  size_t mappings() const { return mapping_of_.size(); }

 private:
  PprofBuilder& b_;
  const FoldedProfile* profile_ = nullptr;
  std::vector<uint64_t> location_of_;  // per frame of the current profile
  std::unordered_map<std::string, uint64_t> mapping_of_, location_of_name_;
};
}  // namespace

std::string pprof_from_folded(const FoldedProfile& profile, const PprofExportOptions& options, PprofExportStats* stats) {
  return pprof_from_folded_groups({PprofGroup{&profile, {}}}, options, stats);
}

std::string pprof_from_folded_groups(const std::vector<PprofGroup>& groups, const PprofExportOptions& options,
                                     PprofExportStats* stats) {
  PprofBuilder b;
  std::string units = groups.empty() ? std::string("samples") : groups[0].profile->units;
  const double scale = integral_value_scale(groups, &units);
  auto vt = value_type_for_units(units);
  if (units == "ns" && scale != 1) vt.first = "time";
  b.add_sample_type(vt.first, vt.second);
  if (options.gzip) b.compress_while_building(options.gzip_level);
  FoldedLocations locations(b);
  std::vector<uint64_t> locs;
  std::vector<Label> sample_labels;
  uint64_t rounded = 0;
  for (const PprofGroup& g : groups) {
    const FoldedProfile& profile = *g.profile;
    SampleLabels labels(b, profile, options);
    std::vector<Label> group_labels;
    for (const auto& kv : g.labels) group_labels.push_back(Label{b.string_id(kv.first), b.string_id(kv.second), 0, 0});
    locations.start_profile(profile);
    // Stacks in node order (deterministic for a given input; no sorting),
    // each read leaf first by walking up the parents.
    for (NodeId node = 1; node < profile.node_count(); ++node) {
      double w = profile.node(node).self * scale;
      if (w == 0) continue;
      int64_t v = int64_t(std::llround(w));
      if (std::fabs(double(v) - w) > 1e-6 * std::max(1.0, std::fabs(w))) ++rounded;  // not scaling's float noise
      if (v == 0) continue;
      locs.clear();
      for (NodeId n = node; n != 0; n = profile.node(n).parent) locs.push_back(locations.of(profile.node(n).frame));
      sample_labels.assign(group_labels.begin(), group_labels.end());
      labels.append(node, sample_labels);
      b.add_sample(locs.data(), locs.size(), &v, 1, sample_labels.data(), sample_labels.size());
    }
  }
  if (stats) {
    stats->rounded_weights = rounded;
    stats->mappings = locations.mappings();
    stats->locations = stats->functions = locations.count();
  }
  return pprof_export::encode(b, options, stats);
}

}  // namespace fg
