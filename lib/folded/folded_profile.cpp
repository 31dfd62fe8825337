#include "folded/folded_profile.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "folded/hash.h"
#include "folded/huge_page_allocator.h"
#include "folded/open_table.h"
#include "folded/prefetch.h"

namespace fg {

namespace {

// Byte order of "name" (is_desc=false) or "name;" (is_desc=true): the sort
// key of a node's own stack and of the stacks below it in the joined text.
int compare_keys(std::string_view a, bool a_desc, std::string_view b, bool b_desc) {
  size_t n = std::min(a.size(), b.size());
  int c = n ? std::memcmp(a.data(), b.data(), n) : 0;
  if (c != 0) return c;
  // One is a prefix of the other; compare the next "character" of each key,
  // where end-of-key (-1) sorts first and ';' follows a descendant key.
  auto next = [](std::string_view s, bool desc, size_t at) -> int {
    if (at < s.size()) return static_cast<unsigned char>(s[at]);
    if (at == s.size() && desc) return ';';
    return -1;
  };
  for (size_t i = n; i < n + 2; ++i) {
    int x = next(a, a_desc, i), y = next(b, b_desc, i);
    if (x != y) return x < y ? -1 : 1;
    if (x == -1) return 0;
  }
  return 0;
}

}  // namespace

struct FoldedProfile::Impl {
  // ---- interned names: bytes live in an arena of large blocks ----
  std::vector<std::unique_ptr<char[]>> blocks;
  char* block_pos = nullptr;
  size_t block_left = 0;
  std::vector<std::string_view> names;
  // A slot points straight at the name's bytes in the arena, which are
  // preceded by the 4-byte id, so a lookup touches two cache lines (slot,
  // name) and a batch of lookups can prefetch both.
  struct NameSlot {
    uint32_t tag;  // high half of the hash
    uint32_t len;
    const char* ptr;  // nullptr = empty
  };
  struct NamePolicy {
    static bool empty(const NameSlot& s) { return s.ptr == nullptr; }
    static NameSlot empty_slot() { return NameSlot{0, 0, nullptr}; }
    // Only when the table doubles (amortised O(1) per name): cheaper than
    // keeping 8 bytes of hash per name.
    static uint64_t rehash(const NameSlot& s) { return detail::hash_bytes(s.ptr, s.len); }
  };
  // Kept at most half full: most lookups of a new name end at its home slot.
  static constexpr size_t kNameLoadNum = 1, kNameLoadDen = 2;
  OpenTable<NameSlot, NamePolicy> name_table;
  std::vector<std::string_view> objects;

  // ---- prefix tree ----
  std::vector<Node, HugePageAllocator<Node>> nodes;
  // What a child lookup reads, packed per node so one step of a sibling walk
  // touches one cache line (16 bytes, four to a line, never split): shuffled
  // input looks up every frame from the root, and those reads are misses.
  struct Link {
    FrameId frame;         // = nodes[id].frame
    NodeId first_child;    // 0 = none
    NodeId next_sibling;   // 0 = last
    uint32_t child_count;
  };
  std::vector<Link, HugePageAllocator<Link>> links;
  static constexpr uint32_t kListedChildren = 8;
  // (parent, frame) -> child for the children of wide nodes (see
  // find_child), open addressing; child 0 (the root) = empty. One 12-byte
  // slot, so a lookup touches one cache line.
  struct ChildSlot {
    NodeId parent;
    FrameId frame;
    NodeId child;
  };
  static uint64_t child_hash(NodeId parent, FrameId frame) { return detail::mix64((uint64_t(parent) << 32) | frame); }
  struct ChildPolicy {
    static bool empty(const ChildSlot& s) { return s.child == 0; }
    static ChildSlot empty_slot() { return ChildSlot{0, 0, 0}; }
    static uint64_t rehash(const ChildSlot& s) { return child_hash(s.parent, s.frame); }
  };
  OpenTable<ChildSlot, ChildPolicy> child_slots;
  double total = 0;
  size_t arena_bytes = 0;
  std::vector<uint64_t> scratch;  // hashes of a batch

  Impl() {
    name_table.reserve_for(1, kNameLoadNum, kNameLoadDen);  // allocated: lookups need no emptiness check
    child_slots.reserve_for(1, 1, 2);
    nodes.push_back(Node{0, 0, 0, 0});
    links.push_back(Link{0, 0, 0, 0});
  }

  char* alloc(size_t n) {
    if (n > block_left) {
      size_t size = std::max<size_t>(n, 1 << 20);
      blocks.emplace_back(new char[size]);
      block_pos = blocks.back().get();
      block_left = size;
      arena_bytes += size;
    }
    char* p = block_pos;
    block_pos += n;
    block_left -= n;
    return p;
  }

  std::string_view store(std::string_view s) {
    char* p = alloc(s.size());
    if (!s.empty()) std::memcpy(p, s.data(), s.size());
    return std::string_view(p, s.size());
  }

  static uint32_t tag_of(uint64_t h) { return static_cast<uint32_t>(h >> 32); }
  static uint32_t id_of(const NameSlot& s) {
    uint32_t id;
    std::memcpy(&id, s.ptr - 4, 4);
    return id;
  }

  size_t find_name_slot(std::string_view name, uint64_t h) const {
    const uint32_t tag = tag_of(h);
    return name_table.probe(h, [&](const NameSlot& s) {
      return s.tag == tag && s.len == name.size() && std::memcmp(s.ptr, name.data(), name.size()) == 0;
    });
  }

  FrameId intern_hashed(std::string_view name, uint64_t h) {
    name_table.reserve_for(names.size() + 1, kNameLoadNum, kNameLoadDen);  // before the probe
    size_t slot = find_name_slot(name, h);
    if (name_table.at(slot).ptr) return id_of(name_table.at(slot));
    FrameId id = static_cast<FrameId>(names.size());
    if (name.size() > 0xffffffffu) throw std::length_error("frame name longer than 4 GiB");
    char* p = alloc(4 + name.size());
    std::memcpy(p, &id, 4);
    if (!name.empty()) std::memcpy(p + 4, name.data(), name.size());
    names.emplace_back(p + 4, name.size());
    name_table.fill(slot, NameSlot{tag_of(h), static_cast<uint32_t>(name.size()), p + 4});
    return id;
  }

  FrameId intern(std::string_view name) { return intern_hashed(name, detail::hash_bytes(name.data(), name.size())); }

  // Interns a batch: hashes first, then prefetches every slot and candidate
  // name, so the cache misses of the whole batch overlap.
  void intern_all(const std::string_view* in, size_t n, FrameId* out) {
    // Grown for the whole batch first: the prefetched home slots stay valid.
    name_table.reserve_for(names.size() + n, kNameLoadNum, kNameLoadDen);
    scratch.resize(n);
    for (size_t i = 0; i < n; ++i) {
      scratch[i] = detail::hash_bytes(in[i].data(), in[i].size());
      name_table.prefetch(scratch[i]);
    }
    for (size_t i = 0; i < n; ++i) {
      const NameSlot* s = name_table.home(scratch[i]);
      if (s->ptr) prefetch_for_read(s->ptr);
    }
    for (size_t i = 0; i < n; ++i) out[i] = intern_hashed(in[i], scratch[i]);
  }

  size_t find_child_slot(NodeId parent, FrameId frame) const {
    return child_slots.probe(child_hash(parent, frame),
                             [&](const ChildSlot& s) { return s.parent == parent && s.frame == frame; });
  }

  void index_child(NodeId parent, FrameId frame, NodeId child) {
    const uint64_t h = child_hash(parent, frame);
    child_slots.reserve_for(child_slots.size() + 1, 1, 2);  // at most half full, as the names
    child_slots.fill(child_slots.probe(h, [](const ChildSlot&) { return false; }), ChildSlot{parent, frame, child});
  }

  // Most nodes have a few children (deep, narrow call chains): those are
  // found by walking the sibling list, and only the children of wide nodes
  // go into the hash table. A brand-new node has no children, so extending a
  // new path costs no lookups and touches only the end of the node arrays.
  NodeId find_child(NodeId parent, FrameId frame) const {
    const Link& p = links[parent];
    if (p.child_count <= kListedChildren) {
      for (NodeId c = p.first_child; c; c = links[c].next_sibling)
        if (links[c].frame == frame) return c;
      return 0;
    }
    return child_slots.at(find_child_slot(parent, frame)).child;
  }

  // find_child for building: a child found down the sibling list moves to
  // its front, so the children most stacks pass through are found in a step
  // or two (in shuffled input the big subtrees are created first and would
  // otherwise sit at the end of the list, behind every later-made rare one).
  // Sibling order is not observable: every reader sorts children by name.
  NodeId find_child_to_front(NodeId parent, FrameId frame) {
    Link& p = links[parent];
    if (p.child_count > kListedChildren) return child_slots.at(find_child_slot(parent, frame)).child;
    NodeId prev = 0;
    for (NodeId c = p.first_child; c; prev = c, c = links[c].next_sibling) {
      if (links[c].frame != frame) continue;
      if (prev) {
        links[prev].next_sibling = links[c].next_sibling;
        links[c].next_sibling = p.first_child;
        p.first_child = c;
      }
      return c;
    }
    return 0;
  }

  NodeId new_node(NodeId parent, FrameId frame) {
    NodeId id = static_cast<NodeId>(nodes.size());
    if (id == 0xffffffffu) throw std::length_error("more than 4 billion stack nodes");
    nodes.push_back(Node{frame, parent, 0, 0});
    links.push_back(Link{frame, 0, links[parent].first_child, 0});
    links[parent].first_child = id;
    uint32_t count = ++links[parent].child_count;
    if (count == kListedChildren + 1) {
      for (NodeId c = links[parent].first_child; c; c = links[c].next_sibling) index_child(parent, links[c].frame, c);
    } else if (count > kListedChildren + 1) {
      index_child(parent, frame, id);
    }
    return id;
  }

  NodeId child(NodeId parent, FrameId frame) {
    NodeId c = find_child_to_front(parent, frame);
    return c ? c : new_node(parent, frame);
  }

  void add_path(NodeId parent, const FrameId* frames, size_t n, NodeId* out) {
    size_t i = 0;
    NodeId p = parent;
    for (; i < n; ++i) {
      NodeId c = find_child_to_front(p, frames[i]);
      if (!c) break;
      p = out[i] = c;
    }
    for (; i < n; ++i) p = out[i] = new_node(p, frames[i]);
  }
};

FoldedProfile::FoldedProfile() : impl_(std::make_unique<Impl>()) {}
FoldedProfile::~FoldedProfile() = default;
FoldedProfile::FoldedProfile(FoldedProfile&&) noexcept = default;
FoldedProfile& FoldedProfile::operator=(FoldedProfile&&) noexcept = default;

FrameId FoldedProfile::intern(std::string_view name) { return impl_->intern(name); }

std::string folded_safe_name(std::string_view name) {
  std::string out(name);
  for (char& c : out) {
    if (c == ';') c = ':';
    else if (c == '\n' || c == '\r') c = ' ';
  }
  return out;
}

FrameId FoldedProfile::intern_from_input(std::string_view name) {
  name = clamp_frame_name(name);
  if (is_folded_safe(name)) return impl_->intern(name);
  return impl_->intern(folded_safe_name(name));
}

FrameId FoldedProfile::find_frame(std::string_view name) const {
  uint64_t h = detail::hash_bytes(name.data(), name.size());
  size_t slot = impl_->find_name_slot(name, h);
  return impl_->name_table.at(slot).ptr ? Impl::id_of(impl_->name_table.at(slot)) : kNoFrame;
}

void FoldedProfile::intern_all(const std::string_view* names, size_t count, FrameId* ids) {
  impl_->intern_all(names, count, ids);
}

void FoldedProfile::add_path(NodeId parent, const FrameId* frames, size_t count, NodeId* nodes_out) {
  impl_->add_path(parent, frames, count, nodes_out);
}

std::string_view FoldedProfile::frame_name(FrameId id) const { return impl_->names.at(id); }
size_t FoldedProfile::frame_count() const { return impl_->names.size(); }

void FoldedProfile::set_frame_object(FrameId id, std::string_view object) {
  if (id >= impl_->names.size()) return;
  if (impl_->objects.size() <= id) impl_->objects.resize(impl_->names.size());
  impl_->objects[id] = impl_->store(object);
}

void FoldedProfile::take_names(FoldedProfile& from) {
  Impl& m = *impl_;
  Impl& o = *from.impl_;
  if (!m.names.empty()) throw std::logic_error("FoldedProfile::take_names: this profile has names already");
  m.blocks = std::move(o.blocks);
  m.block_pos = std::exchange(o.block_pos, nullptr);
  m.block_left = std::exchange(o.block_left, 0);
  m.arena_bytes += std::exchange(o.arena_bytes, 0);
  m.names = std::move(o.names);
  m.name_table = std::move(o.name_table);
  m.objects = std::move(o.objects);
  o = Impl();
}

std::string_view FoldedProfile::frame_object(FrameId id) const {
  return id < impl_->objects.size() ? impl_->objects[id] : std::string_view();
}

void FoldedProfile::add(const FrameId* frames, size_t count, double weight) {
  if (count == 0) return;
  NodeId n = 0;
  for (size_t i = 0; i < count; ++i) n = impl_->child(n, frames[i]);
  add_self(n, weight);
}

void FoldedProfile::add_stack(std::string_view joined, double weight) {
  if (joined.empty()) return;
  NodeId n = 0;
  size_t start = 0;
  for (;;) {
    size_t semi = joined.find(';', start);
    std::string_view name = joined.substr(start, semi == std::string_view::npos ? std::string_view::npos : semi - start);
    n = impl_->child(n, impl_->intern(name));
    if (semi == std::string_view::npos) break;
    start = semi + 1;
  }
  add_self(n, weight);
}

NodeId FoldedProfile::child(NodeId parent, FrameId frame) { return impl_->child(parent, frame); }

void FoldedProfile::add_self(NodeId node, double weight) {
  impl_->nodes[node].self += weight;
  impl_->total += weight;
}

std::vector<double> FoldedProfile::take_self_weights() {
  std::vector<double> out(impl_->nodes.size());
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = impl_->nodes[i].self;
    impl_->nodes[i].self = 0;
  }
  impl_->total = 0;
  return out;
}

void FoldedProfile::merge(const FoldedProfile& other, double scale) { merge_below(0, other, scale); }

void FoldedProfile::merge(const FoldedProfile& other, std::string_view under, double scale) {
  merge_below(child(0, intern(under)), other, scale);
}

void FoldedProfile::merge_below(NodeId base, const FoldedProfile& other, double scale) {
  const Impl& o = *other.impl_;
  std::vector<FrameId> frame_map(o.names.size());
  for (FrameId f = 0; f < o.names.size(); ++f) {
    frame_map[f] = impl_->intern(o.names[f]);
    if (f < o.objects.size() && !o.objects[f].empty() && frame_object(frame_map[f]).empty())
      set_frame_object(frame_map[f], o.objects[f]);
  }
  // Parents always precede their children in node order.
  std::vector<NodeId> node_map(o.nodes.size(), base);
  for (NodeId i = 1; i < o.nodes.size(); ++i) {
    const Node& n = o.nodes[i];
    node_map[i] = impl_->child(node_map[n.parent], frame_map[n.frame]);
    if (n.self != 0) add_self(node_map[i], n.self * scale);
  }
}

double FoldedProfile::total() const { return impl_->total; }

size_t FoldedProfile::stack_count() const {
  size_t c = 0;
  for (size_t i = 1; i < impl_->nodes.size(); ++i) c += impl_->nodes[i].self != 0;
  return c;
}

void FoldedProfile::for_each_stack(const std::function<void(const std::vector<FrameId>&, double)>& fn) const {
  for_each_stack_node([&](NodeId id, const std::vector<FrameId>& frames) { fn(frames, impl_->nodes[id].self); });
}

void FoldedProfile::for_each_stack_node(const std::function<void(NodeId, const std::vector<FrameId>&)>& fn) const {
  struct Item {
    NodeId node;
    bool desc;  // the stacks below node, rather than node's own stack
  };
  struct Level {
    std::vector<Item> items;
    size_t next = 0;
  };
  const Impl& m = *impl_;
  auto expand = [&](NodeId id, Level& level) {
    level.items.clear();
    level.next = 0;
    for (NodeId c = m.links[id].first_child; c; c = m.links[c].next_sibling) {
      if (m.nodes[c].self != 0) level.items.push_back({c, false});
      if (m.links[c].first_child) level.items.push_back({c, true});
    }
    std::sort(level.items.begin(), level.items.end(), [&](const Item& a, const Item& b) {
      return compare_keys(m.names[m.nodes[a.node].frame], a.desc, m.names[m.nodes[b.node].frame], b.desc) < 0;
    });
  };
  std::vector<Level> levels(1);
  size_t depth = 0;
  expand(0, levels[0]);
  std::vector<FrameId> path;
  for (;;) {
    Level& level = levels[depth];
    if (level.next == level.items.size()) {
      if (depth == 0) break;
      --depth;
      path.pop_back();
      continue;
    }
    Item it = level.items[level.next++];
    path.push_back(m.nodes[it.node].frame);
    if (!it.desc) {
      fn(it.node, path);
      path.pop_back();
    } else {
      if (levels.size() <= depth + 1) levels.emplace_back();
      ++depth;
      expand(it.node, levels[depth]);
    }
  }
}

void FoldedProfile::finalize() {
  auto& nodes = impl_->nodes;
  for (auto& n : nodes) n.total = n.self;
  for (size_t i = nodes.size(); i-- > 1;) nodes[nodes[i].parent].total += nodes[i].total;
}

size_t FoldedProfile::node_count() const { return impl_->nodes.size(); }
const FoldedProfile::Node& FoldedProfile::node(NodeId id) const { return impl_->nodes.at(id); }

std::vector<NodeId> FoldedProfile::children(NodeId id) const {
  std::vector<NodeId> out;
  for (NodeId c = impl_->links.at(id).first_child; c; c = impl_->links[c].next_sibling) out.push_back(c);
  const Impl& m = *impl_;
  std::sort(out.begin(), out.end(), [&](NodeId a, NodeId b) {
    return m.names[m.nodes[a].frame] < m.names[m.nodes[b].frame];
  });
  return out;
}

NodeId FoldedProfile::find_child(NodeId parent, FrameId frame) const { return impl_->find_child(parent, frame); }
bool FoldedProfile::has_children(NodeId id) const { return impl_->links.at(id).first_child != 0; }

std::vector<FrameId> FoldedProfile::path(NodeId id) const {
  std::vector<FrameId> out;
  while (id != 0) {
    out.push_back(impl_->nodes.at(id).frame);
    id = impl_->nodes[id].parent;
  }
  std::reverse(out.begin(), out.end());
  return out;
}

size_t FoldedProfile::memory_bytes() const {
  const Impl& m = *impl_;
  return m.arena_bytes + m.names.capacity() * sizeof(std::string_view) +
         m.name_table.capacity() * sizeof(Impl::NameSlot) + m.objects.capacity() * sizeof(std::string_view) +
         m.nodes.capacity() * sizeof(Node) + m.links.capacity() * sizeof(Impl::Link) +
         m.child_slots.capacity() * sizeof(Impl::ChildSlot);
}

}  // namespace fg
