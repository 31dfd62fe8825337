#include "categories/profile_categories.h"

#include <exception>
#include <thread>

namespace fg {

namespace {

// Nodes in an order where every parent comes before its children, built from
// parent links alone (no assumption about how the tree numbers its nodes).
std::vector<NodeId> parent_first_order(const FoldedProfile& p) {
  size_t n = p.node_count();
  std::vector<uint32_t> start(n + 1, 0);
  for (NodeId i = 1; i < n; ++i) ++start[p.node(i).parent + 1];
  for (size_t i = 0; i < n; ++i) start[i + 1] += start[i];
  std::vector<NodeId> kids(n > 0 ? n - 1 : 0);
  std::vector<uint32_t> fill(start.begin(), start.end() - 1);
  for (NodeId i = 1; i < n; ++i) kids[fill[p.node(i).parent]++] = i;
  std::vector<NodeId> order;
  order.reserve(n);
  if (n) order.push_back(0);
  for (size_t at = 0; at < order.size(); ++at) {
    NodeId id = order[at];
    for (uint32_t k = start[id]; k < start[id + 1]; ++k) order.push_back(kids[k]);
  }
  return order;
}

// Scratch per node of ProfileCategories::resolve_nodes: leaf-most matched
// node (non-fallback / fallback), outer-most matched node for phases,
// nearest absorbing node, and the resolved (category, decider) of a sample
// whose leaf-most match is here.
struct Scratch {
  NodeId leaf_nf = 0, leaf_fb = 0, top_nf = 0, top_fb = 0, absorber = 0;
  CategoryId resolved = kNoCategory;
  NodeId resolved_by = 0;
};

// A resource match `cat` at node `id`, lifted through absorbing callers
// (the nearest, `a` first): sets me.resolved and me.resolved_by.
void lift_through_absorbers(const FoldedProfile& profile, const CategoryMatcher& matcher,
                            const std::vector<FrameMatch>& resource, const std::vector<Scratch>& s, NodeId id,
                            CategoryId cat, NodeId a, Scratch& me) {
  NodeId by = id;
  for (;;) {
    const uint64_t bit = uint64_t(1) << cat;
    while (a && !(matcher.absorbs(resource[profile.node(a).frame].rule) & bit)) a = s[profile.node(a).parent].absorber;
    if (!a) break;
    const FrameMatch am = resource[profile.node(a).frame];
    CategoryId into = matcher.absorbs_into(am.rule);
    if (into == am.category) {
      cat = s[a].resolved;
      by = s[a].resolved_by;
      break;
    }
    cat = into;
    by = a;
    a = s[profile.node(a).parent].absorber;
  }
  me.resolved = cat;
  me.resolved_by = by;
}

}  // namespace

ProfileCategories::ProfileCategories(const FoldedProfile& profile, const CategoryMatcher& matcher)
    : profile_(&profile), matcher_(&matcher) {
  match_frames();
  resolve_nodes();
}

// Each distinct frame once. Matching is every glob of every rule per frame:
// with thousands of frames (a system-wide perf.data) it is the largest part
// of categorising, so two threads share it.
void ProfileCategories::match_frames() {
  const FoldedProfile& profile = *profile_;
  const CategoryMatcher& matcher = *matcher_;
  size_t nf = profile.frame_count();
  for (int k = 0; k < kCategoryKinds; ++k) frames_[k].resize(nf);
  auto match_range = [&](size_t from, size_t to) {
    for (int k = 0; k < kCategoryKinds; ++k)
      for (FrameId f = FrameId(from); f < to; ++f)
        frames_[k][f] = matcher.match(CategoryKind(k), profile.frame_name(f), profile.frame_object(f));
  };
  if (nf >= 2048 && std::thread::hardware_concurrency() > 1) {
    std::exception_ptr error;
    std::thread half([&] {  // const reads only; disjoint writes
      try {
        match_range(nf / 2, nf);
      } catch (...) {
        error = std::current_exception();
      }
    });
    try {
      match_range(0, nf / 2);
    } catch (...) {
      half.join();
      throw;
    }
    half.join();
    if (error) std::rethrow_exception(error);
  } else {
    match_range(0, nf);
  }
}

// One parent-first pass over the tree: each node's resource (leaf-most match,
// lifted through absorbing callers) and phase (outer-most match).
void ProfileCategories::resolve_nodes() {
  const FoldedProfile& profile = *profile_;
  const CategoryMatcher& matcher = *matcher_;
  const int R = int(CategoryKind::resource), P = int(CategoryKind::phase);
  size_t nn = profile.node_count();
  nodes_.assign(nn, NodeInfo{});
  std::vector<Scratch> s(nn);
  const CategoryId other_r = matcher.other(CategoryKind::resource), other_p = matcher.other(CategoryKind::phase);
  nodes_[0] = NodeInfo{{other_r, other_p}, {0, 0}, {uint64_t(1) << other_r, uint64_t(1) << other_p}};
  for (NodeId id : parent_first_order(profile)) {
    if (id == 0) continue;
    const auto& node = profile.node(id);
    const Scratch& ps = s[node.parent];
    const NodeInfo& pn = nodes_[node.parent];
    Scratch& me = s[id];
    NodeInfo& out = nodes_[id];
    me = ps;
    const FrameMatch rm = frames_[R][node.frame], pm = frames_[P][node.frame];
    uint64_t rmask = node.parent ? pn.mask[R] & ~(uint64_t(1) << other_r) : 0;
    uint64_t pmask = node.parent ? pn.mask[P] & ~(uint64_t(1) << other_p) : 0;
    if (rm) {
      rmask |= uint64_t(1) << rm.category;
      (rm.fallback ? me.leaf_fb : me.leaf_nf) = id;
      // Lift through absorbing callers: the nearest one that absorbs this
      // category turns it into its "absorbs_into" category, which may be
      // lifted again further up. When that is the caller's own category its
      // outcome is already known (s[a].resolved).
      lift_through_absorbers(profile, matcher, frames_[R], s, id, rm.category, ps.absorber, me);
      if (matcher.absorbs(rm.rule)) me.absorber = id;
    }
    if (pm) {
      pmask |= uint64_t(1) << pm.category;
      if (pm.fallback) {
        if (!me.top_fb) me.top_fb = id;
      } else if (!me.top_nf) {
        me.top_nf = id;
      }
    }
    // Resource of a sample ending here.
    NodeId m = me.leaf_nf ? me.leaf_nf : me.leaf_fb;
    if (m) {
      out.category[R] = s[m].resolved;
      out.decider[R] = s[m].resolved_by;
    } else {
      out.category[R] = other_r;
      out.decider[R] = 0;
    }
    NodeId t = me.top_nf ? me.top_nf : me.top_fb;
    if (t) {
      out.category[P] = frames_[P][profile.node(t).frame].category;
      out.decider[P] = t;
    } else {
      out.category[P] = other_p;
      out.decider[P] = 0;
    }
    out.mask[R] = rmask | (uint64_t(1) << out.category[R]);
    out.mask[P] = pmask | (uint64_t(1) << out.category[P]);
  }
}

CategoryId ProfileCategories::frame_color_category(NodeId node, CategoryKind& kind) const {
  if (node == 0) {
    kind = CategoryKind::resource;
    return matcher_->other(kind);
  }
  FrameId f = profile_->node(node).frame;
  if (FrameMatch m = frames_[int(CategoryKind::resource)][f]) {
    kind = CategoryKind::resource;
    return m.category;
  }
  if (FrameMatch m = frames_[int(CategoryKind::phase)][f]) {
    kind = CategoryKind::phase;
    return m.category;
  }
  kind = CategoryKind::resource;
  return matcher_->other(kind);
}

}  // namespace fg
