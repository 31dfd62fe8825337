// The folded-stack model at the centre of fgtool: stacks of frame names, root
// first, each with a weight, duplicates merged. Every input (folded text,
// perf.data, perf script text, traces) produces a FoldedProfile and every
// output (folded text, SVG, diff, reports) reads one. Memory is proportional
// to the merged stacks (a prefix tree of interned frames), not to the input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace fg {

using FrameId = uint32_t;   // index into the profile's frame-name table
using NodeId = uint32_t;    // index into the profile's prefix tree; 0 is the root

// Hard limits every reader applies to hostile or broken input, with a counted
// warning when hit (docs/robustness.md): a stack keeps at most kMaxStackDepth
// frames and a frame name at most kMaxFrameNameBytes bytes. Real stacks stay
// far below both (perf's own callchain limit is 127 by default), while
// without them one 50 MB line could make a 50 MB frame name or a
// 200,000-level flamegraph.
constexpr size_t kMaxStackDepth = 4096;
constexpr size_t kMaxFrameNameBytes = 4096;

// `name` cut to at most kMaxFrameNameBytes bytes, at a UTF-8 character
// boundary (never inside a multi-byte sequence).
inline std::string_view clamp_frame_name(std::string_view name) {
  if (name.size() <= kMaxFrameNameBytes) return name;
  size_t n = kMaxFrameNameBytes;
  while (n > 0 && (static_cast<unsigned char>(name[n]) & 0xC0) == 0x80) --n;
  return name.substr(0, n);
}

// The folded format's separators are ';' between frames and a line per
// stack: a name holding one would split a frame or a stack. Names read from
// input that may hold them (trace JSON, pprof strings, a thread's comm, file
// names) go through folded_safe_name: ';' becomes ':', line breaks spaces.
inline bool is_folded_safe(std::string_view name) {
  for (char c : name)
    if (c == ';' || c == '\n' || c == '\r') return false;
  return true;
}
// `name` unchanged when it is safe.
std::string folded_safe_name(std::string_view name);

class FoldedProfile {
 public:
  FoldedProfile();
  ~FoldedProfile();
  FoldedProfile(FoldedProfile&&) noexcept;
  FoldedProfile& operator=(FoldedProfile&&) noexcept;

  // ---- frame names ----
  FrameId intern(std::string_view name);
  // A name read from input: made folded-safe and clamped (clamp_frame_name).
  FrameId intern_from_input(std::string_view name);
  // The id of a name already interned, or kNoFrame.
  static constexpr FrameId kNoFrame = 0xffffffffu;
  FrameId find_frame(std::string_view name) const;
  std::string_view frame_name(FrameId id) const;
  size_t frame_count() const;

  // The object (DSO path or "[kernel.kallsyms]") a frame came from, when the
  // input knew it (perf.data does; folded text does not). Used by category
  // rules that match on the object. Empty when unknown.
  void set_frame_object(FrameId id, std::string_view object);
  std::string_view frame_object(FrameId id) const;
  // Takes `from`'s frame names and objects as this profile's, keeping their
  // ids: for a tree built on one thread from ids another thread interned
  // (the fold's StackTreeBuilder). This profile must have no names yet;
  // `from` is left empty.
  void take_names(FoldedProfile& from);

  // ---- building ----
  // Adds weight to one stack given root first. Identical stacks merge.
  void add(const FrameId* frames, size_t count, double weight);
  void add(const std::vector<FrameId>& frames, double weight) { add(frames.data(), frames.size(), weight); }
  // "a;b;c" (no weight), split on ';'.
  void add_stack(std::string_view semicolon_joined, double weight);
  // Adds every stack of another profile (names re-interned, frame objects
  // kept where this profile has none), weights times `scale`.
  void merge(const FoldedProfile& other, double scale = 1.0);
  // The same below one more root frame `under` ("rank 1", "host=node7"), so
  // several inputs stay apart in one profile.
  void merge(const FoldedProfile& other, std::string_view under, double scale = 1.0);
  // Node-level building, for readers that walk the tree themselves (the
  // folded reader reuses the previous line's path): the child of `parent`
  // for `frame`, created when missing, and weight added to a node's self.
  NodeId child(NodeId parent, FrameId frame);
  void add_self(NodeId node, double weight);
  // Every node's self weight (index = NodeId), leaving them and total() at 0,
  // so a second input can be read into the same tree with its weights kept
  // apart (how `fgtool diff` holds both sides in one tree).
  std::vector<double> take_self_weights();
  // Batch forms for fast readers (the cache misses of a batch overlap):
  // interns names[0..count) into ids, and walks/creates the path
  // frames[0..count) below `parent`, nodes_out[i] being the node of frames[i].
  void intern_all(const std::string_view* names, size_t count, FrameId* ids);
  void add_path(NodeId parent, const FrameId* frames, size_t count, NodeId* nodes_out);

  // ---- reading ----
  double total() const;
  size_t stack_count() const;  // unique stacks with non-zero self weight
  // Visits unique stacks in byte order of their joined "a;b;c" text, which is
  // the order of the folded writer. `frames` is root first.
  void for_each_stack(const std::function<void(const std::vector<FrameId>& frames, double weight)>& fn) const;
  // The same walk, giving the node where each stack ends (its self weight is
  // node(id).self) instead of the weight.
  void for_each_stack_node(const std::function<void(NodeId node, const std::vector<FrameId>& frames)>& fn) const;

  // The prefix tree, for renderers and reports: node 0 is the root (no frame).
  struct Node {
    FrameId frame;      // meaningless for the root
    NodeId parent;      // root's parent is 0
    double self;        // weight of stacks ending exactly here
    double total;       // self + children's totals (valid after finalize())
  };
  // Computes totals; call after building and before reading node().total.
  void finalize();
  size_t node_count() const;
  const Node& node(NodeId id) const;
  // Children of a node, sorted by frame name (byte order).
  std::vector<NodeId> children(NodeId id) const;
  // The child of `parent` for `frame`, or 0 (the root, never a child) if none.
  NodeId find_child(NodeId parent, FrameId frame) const;
  // Whether a node has children (cheaper than children(id).empty()).
  bool has_children(NodeId id) const;
  // Frames from the root to `id` (root first), without the root.
  std::vector<FrameId> path(NodeId id) const;
  // Approximate heap bytes held (names, tree, hash tables), for benchmarks.
  size_t memory_bytes() const;

  // What the weights mean: "samples", "ns", "us", ... (for titles and reports).
  std::string units = "samples";

 private:
  // Both merges: other's root is `base` here.
  void merge_below(NodeId base, const FoldedProfile& other, double scale);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fg
