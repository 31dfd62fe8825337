#include "folded/folded_profile.h"

#include <algorithm>
#include <cstring>

#include "folded/hash.h"

namespace fg {

namespace {

constexpr uint64_t kEmptyKey = ~0ull;

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
  std::vector<uint64_t> name_hashes;
  std::vector<uint32_t> name_table;  // open addressing: id + 1, 0 = empty
  std::vector<std::string_view> objects;

  // ---- prefix tree ----
  std::vector<Node> nodes;
  std::vector<NodeId> first_child, next_sibling;
  std::vector<uint64_t> child_keys;  // (parent << 32 | frame), kEmptyKey = empty
  std::vector<NodeId> child_values;
  size_t child_used = 0;
  double total = 0;
  size_t arena_bytes = 0;

  Impl() {
    name_table.assign(1024, 0);
    child_keys.assign(1024, kEmptyKey);
    child_values.assign(1024, 0);
    nodes.push_back(Node{0, 0, 0, 0});
    first_child.push_back(0);
    next_sibling.push_back(0);
  }

  std::string_view store(std::string_view s) {
    if (s.size() > block_left) {
      size_t size = std::max<size_t>(s.size(), 1 << 20);
      blocks.emplace_back(new char[size]);
      block_pos = blocks.back().get();
      block_left = size;
      arena_bytes += size;
    }
    if (!s.empty()) std::memcpy(block_pos, s.data(), s.size());
    std::string_view out(block_pos, s.size());
    block_pos += s.size();
    block_left -= s.size();
    return out;
  }

  size_t find_name_slot(std::string_view name, uint64_t h) const {
    size_t mask = name_table.size() - 1;
    size_t i = h & mask;
    for (;;) {
      uint32_t v = name_table[i];
      if (v == 0) return i;
      uint32_t id = v - 1;
      if (name_hashes[id] == h && names[id] == name) return i;
      i = (i + 1) & mask;
    }
  }

  void grow_names() {
    std::vector<uint32_t> t(name_table.size() * 2, 0);
    size_t mask = t.size() - 1;
    for (uint32_t id = 0; id < names.size(); ++id) {
      size_t i = name_hashes[id] & mask;
      while (t[i]) i = (i + 1) & mask;
      t[i] = id + 1;
    }
    name_table.swap(t);
  }

  FrameId intern(std::string_view name) {
    uint64_t h = detail::hash_bytes(name.data(), name.size());
    size_t slot = find_name_slot(name, h);
    if (name_table[slot]) return name_table[slot] - 1;
    FrameId id = static_cast<FrameId>(names.size());
    names.push_back(store(name));
    name_hashes.push_back(h);
    name_table[slot] = id + 1;
    if (names.size() * 2 > name_table.size()) grow_names();
    return id;
  }

  static uint64_t key_of(NodeId parent, FrameId frame) { return (uint64_t(parent) << 32) | frame; }

  size_t find_child_slot(uint64_t key) const {
    size_t mask = child_keys.size() - 1;
    size_t i = detail::mix64(key) & mask;
    while (child_keys[i] != kEmptyKey && child_keys[i] != key) i = (i + 1) & mask;
    return i;
  }

  void grow_children() {
    std::vector<uint64_t> keys(child_keys.size() * 2, kEmptyKey);
    std::vector<NodeId> values(keys.size(), 0);
    size_t mask = keys.size() - 1;
    for (size_t j = 0; j < child_keys.size(); ++j) {
      if (child_keys[j] == kEmptyKey) continue;
      size_t i = detail::mix64(child_keys[j]) & mask;
      while (keys[i] != kEmptyKey) i = (i + 1) & mask;
      keys[i] = child_keys[j];
      values[i] = child_values[j];
    }
    child_keys.swap(keys);
    child_values.swap(values);
  }

  NodeId child(NodeId parent, FrameId frame) {
    uint64_t key = key_of(parent, frame);
    size_t slot = find_child_slot(key);
    if (child_keys[slot] == key) return child_values[slot];
    NodeId id = static_cast<NodeId>(nodes.size());
    nodes.push_back(Node{frame, parent, 0, 0});
    first_child.push_back(0);
    next_sibling.push_back(first_child[parent]);
    first_child[parent] = id;
    child_keys[slot] = key;
    child_values[slot] = id;
    if (++child_used * 2 > child_keys.size()) grow_children();
    return id;
  }

  NodeId find_child(NodeId parent, FrameId frame) const {
    uint64_t key = key_of(parent, frame);
    size_t slot = find_child_slot(key);
    return child_keys[slot] == key ? child_values[slot] : 0;
  }
};

FoldedProfile::FoldedProfile() : impl_(std::make_unique<Impl>()) {}
FoldedProfile::~FoldedProfile() = default;
FoldedProfile::FoldedProfile(FoldedProfile&&) noexcept = default;
FoldedProfile& FoldedProfile::operator=(FoldedProfile&&) noexcept = default;

FrameId FoldedProfile::intern(std::string_view name) { return impl_->intern(name); }

FrameId FoldedProfile::find_frame(std::string_view name) const {
  uint64_t h = detail::hash_bytes(name.data(), name.size());
  size_t slot = impl_->find_name_slot(name, h);
  return impl_->name_table[slot] ? impl_->name_table[slot] - 1 : kNoFrame;
}

std::string_view FoldedProfile::frame_name(FrameId id) const { return impl_->names.at(id); }
size_t FoldedProfile::frame_count() const { return impl_->names.size(); }

void FoldedProfile::set_frame_object(FrameId id, std::string_view object) {
  if (id >= impl_->names.size()) return;
  if (impl_->objects.size() <= id) impl_->objects.resize(impl_->names.size());
  impl_->objects[id] = impl_->store(object);
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

void FoldedProfile::merge(const FoldedProfile& other, double scale) {
  const Impl& o = *other.impl_;
  std::vector<FrameId> frame_map(o.names.size());
  for (FrameId f = 0; f < o.names.size(); ++f) {
    frame_map[f] = impl_->intern(o.names[f]);
    if (f < o.objects.size() && !o.objects[f].empty() && frame_object(frame_map[f]).empty())
      set_frame_object(frame_map[f], o.objects[f]);
  }
  // Parents always precede their children in node order.
  std::vector<NodeId> node_map(o.nodes.size(), 0);
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
    for (NodeId c = m.first_child[id]; c; c = m.next_sibling[c]) {
      if (m.nodes[c].self != 0) level.items.push_back({c, false});
      if (m.first_child[c]) level.items.push_back({c, true});
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
  for (NodeId c = impl_->first_child.at(id); c; c = impl_->next_sibling[c]) out.push_back(c);
  const Impl& m = *impl_;
  std::sort(out.begin(), out.end(), [&](NodeId a, NodeId b) {
    return m.names[m.nodes[a].frame] < m.names[m.nodes[b].frame];
  });
  return out;
}

NodeId FoldedProfile::find_child(NodeId parent, FrameId frame) const { return impl_->find_child(parent, frame); }
bool FoldedProfile::has_children(NodeId id) const { return impl_->first_child.at(id) != 0; }

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
  return m.arena_bytes + m.names.capacity() * sizeof(std::string_view) + m.name_hashes.capacity() * 8 +
         m.name_table.capacity() * 4 + m.objects.capacity() * sizeof(std::string_view) +
         m.nodes.capacity() * sizeof(Node) + (m.first_child.capacity() + m.next_sibling.capacity()) * 4 +
         m.child_keys.capacity() * 8 + m.child_values.capacity() * 4;
}

}  // namespace fg
