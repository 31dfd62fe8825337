// Classifies a FoldedProfile with compiled category rules: each distinct frame
// is matched once (by FrameId), then one pass over the prefix tree gives every
// node the resource and phase a sample ending there belongs to, so reports
// and renderers read categories per node at no per-sample cost.
#pragma once

#include <cstdint>
#include <vector>

#include "categories/category_rules.h"
#include "folded/folded_profile.h"

namespace fg {

class ProfileCategories {
 public:
  // Both must outlive this object. Call profile.finalize() first if you will
  // read node totals; classification itself only needs the tree shape.
  ProfileCategories(const FoldedProfile& profile, const CategoryMatcher& matcher);

  const FoldedProfile& profile() const { return *profile_; }
  const CategoryMatcher& matcher() const { return *matcher_; }

  // The rule match of the frame itself (no context), per kind.
  FrameMatch frame_match(CategoryKind kind, FrameId frame) const { return frames_[int(kind)][frame]; }

  // The category of a sample whose stack ends at `node`:
  //  - resource: the leaf-most matching frame (non-fallback rules first), then
  //    lifted to the category of any caller whose rule absorbs it (repeatedly);
  //  - phase: the outer-most matching frame (non-fallback rules first).
  // "other" when nothing matched. Node 0 (the root) is "other".
  CategoryId sample_category(CategoryKind kind, NodeId node) const { return nodes_[node].category[int(kind)]; }
  // The node whose frame decided sample_category (0 when it is "other").
  NodeId decider(CategoryKind kind, NodeId node) const { return nodes_[node].decider[int(kind)]; }
  // Bit c set for every category c some frame on the path root..node
  // matches, plus the sample category itself ("inclusive" membership).
  uint64_t path_mask(CategoryKind kind, NodeId node) const { return nodes_[node].mask[int(kind)]; }
  // The category a flamegraph colours the frame at `node` by: the frame's own
  // resource match, else its own phase match, else resource "other".
  // `kind` says which kind the returned id belongs to.
  CategoryId frame_color_category(NodeId node, CategoryKind& kind) const;

 private:
  struct NodeInfo {
    CategoryId category[kCategoryKinds];
    NodeId decider[kCategoryKinds];
    uint64_t mask[kCategoryKinds];
  };
  // The constructor's two steps: every distinct frame matched once
  // (frames_), then one parent-first pass over the tree (nodes_).
  void match_frames();
  void resolve_nodes();
  const FoldedProfile* profile_;
  const CategoryMatcher* matcher_;
  std::vector<FrameMatch> frames_[kCategoryKinds];
  std::vector<NodeInfo> nodes_;
};

}  // namespace fg
