// What the two pprof exports (pprof_export.cpp from a FoldedProfile,
// perf_data_pprof.cpp from perf.data) share: the labels each sample gets from
// its stack's categories and the user, and the final encoding.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "categories/profile_categories.h"
#include "pprof/pprof_builder.h"
#include "pprof/pprof_export.h"

namespace fg {
namespace pprof_export {

using Label = PprofBuilder::Label;

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

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The builder's profile encoded (gzip-compressed unless options say not),
// with the encoding's time, sample count and size in stats.
std::string encode(PprofBuilder& b, const PprofExportOptions& options, PprofExportStats* stats);

}  // namespace pprof_export
}  // namespace fg
