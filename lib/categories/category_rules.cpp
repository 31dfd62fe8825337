#include "categories/category_rules.h"

#include <sys/stat.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

#include "diagnostics/input_error.h"

namespace fg {

namespace {

using nlohmann::json;

constexpr size_t kMaxRulesFileBytes = size_t(16) << 20;
constexpr size_t kMaxCategoriesPerKind = 63;  // + "other": one bit each in a uint64_t

std::string rule_label(size_t index, const std::string& name) {
  std::string s = "rule " + std::to_string(index + 1);
  if (!name.empty()) s += " '" + name + "'";
  return s;
}

bool valid_color(const std::string& c) {
  if (c.size() != 7 || c[0] != '#') return false;
  for (size_t i = 1; i < 7; ++i)
    if (!isxdigit(static_cast<unsigned char>(c[i]))) return false;
  return true;
}

std::vector<std::string> string_list(const json& rule, const char* key, const std::string& where) {
  std::vector<std::string> out;
  auto it = rule.find(key);
  if (it == rule.end()) return out;
  if (!it->is_array()) throw InputError(where + ": \"" + key + "\" must be an array of strings");
  for (const auto& v : *it) {
    if (!v.is_string()) throw InputError(where + ": \"" + key + "\" must contain only strings");
    out.push_back(v.get<std::string>());
  }
  return out;
}

}  // namespace

const char* category_kind_name(CategoryKind kind) { return kind == CategoryKind::phase ? "phase" : "resource"; }

CategoryRules CategoryRules::defaults() { return parse(default_rules_json(), "built-in rules"); }

CategoryRules CategoryRules::effective(const std::string& user_rules_file) {
  CategoryRules rules = defaults();
  if (!user_rules_file.empty()) rules.apply_overrides(load_file(user_rules_file));
  return rules;
}

CategoryRules CategoryRules::load_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw InputError(path + ": is a directory, not a rules file (give the JSON file inside it)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError("cannot open rules file '" + path + "'");
  // Read at most one byte past the limit: /dev/zero or a runaway file must
  // not be read until memory runs out.
  std::string text;
  char block[1 << 16];
  while (text.size() <= kMaxRulesFileBytes && in.read(block, sizeof block).gcount() > 0)
    text.append(block, static_cast<size_t>(in.gcount()));
  if (in.bad()) throw InputError(path + ": cannot read the rules file");
  if (text.size() > kMaxRulesFileBytes)
    throw InputError(path + ": rules file larger than " + std::to_string(kMaxRulesFileBytes >> 20) +
                     " MiB; category rules are a few KiB of JSON");
  return parse(text, path);
}

namespace {

// Rule i of the "rules" array, checked; `names` holds the names seen before it.
CategoryRule parse_rule(const json& r, size_t i, const std::string& source, std::set<std::string>& names) {
  std::string where = source + ": " + rule_label(i, "");
  if (!r.is_object()) throw InputError(where + ": a rule must be a JSON object");
  CategoryRule rule;
  rule.source = source;
  auto str = [&](const char* key, bool required) -> std::string {
    auto it = r.find(key);
    if (it == r.end()) {
      if (required) throw InputError(where + ": missing \"" + key + "\"");
      return {};
    }
    if (!it->is_string()) throw InputError(where + ": \"" + key + "\" must be a string");
    return it->get<std::string>();
  };
  rule.name = str("name", true);
  if (rule.name.empty()) throw InputError(where + ": \"name\" is empty");
  where = source + ": " + rule_label(i, rule.name);
  for (auto it = r.begin(); it != r.end(); ++it) {
    static const std::set<std::string> known{"name", "category", "kind", "color", "description", "symbols",
                                             "objects", "absorbs", "absorbs_into", "fallback", "comment"};
    if (!known.count(it.key())) throw InputError(where + ": unknown key \"" + it.key() + "\"");
  }
  if (!names.insert(rule.name).second) throw InputError(where + ": duplicate rule name");
  rule.category = str("category", false);
  if (rule.category.empty()) rule.category = rule.name;
  std::string kind = str("kind", true);
  if (kind == "resource") rule.kind = CategoryKind::resource;
  else if (kind == "phase") rule.kind = CategoryKind::phase;
  else throw InputError(where + ": \"kind\" must be \"resource\" or \"phase\", not \"" + kind + "\"");
  rule.color = str("color", true);
  if (!valid_color(rule.color)) throw InputError(where + ": \"color\" must look like \"#1f77b4\", not \"" + rule.color + "\"");
  rule.description = str("description", false);
  rule.symbols = string_list(r, "symbols", where);
  rule.objects = string_list(r, "objects", where);
  rule.absorbs = string_list(r, "absorbs", where);
  rule.absorbs_into = str("absorbs_into", false);
  if (!rule.absorbs_into.empty() && rule.absorbs.empty())
    throw InputError(where + ": \"absorbs_into\" needs \"absorbs\"");
  if (rule.symbols.empty() && rule.objects.empty())
    throw InputError(where + ": needs at least one pattern in \"symbols\" or \"objects\"");
  for (const auto* list : {&rule.symbols, &rule.objects}) {
    for (const auto& p : *list) {
      try {
        GlobPattern g(p);
      } catch (const std::invalid_argument& e) {
        throw InputError(where + ": bad pattern \"" + p + "\": " + e.what());
      }
    }
  }
  if (!rule.absorbs.empty() && rule.kind != CategoryKind::resource)
    throw InputError(where + ": \"absorbs\" is only for resource rules");
  if (auto f = r.find("fallback"); f != r.end()) {
    if (!f->is_boolean()) throw InputError(where + ": \"fallback\" must be true or false");
    rule.fallback = f->get<bool>();
  }
  return rule;
}

}  // namespace

CategoryRules CategoryRules::parse(std::string_view text, const std::string& source) {
  json doc;
  try {
    doc = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    throw InputError::at_offset(source, e.byte, "not valid JSON (" + std::string(e.what()) + ")");
  } catch (const json::exception& e) {
    // out_of_range 406: a number too large for a double ("1e999"); found by fuzz/category_rules.
    throw InputError(source + ": not valid JSON (" + std::string(e.what()) + ")");
  }
  if (!doc.is_object()) throw InputError(source + ": the rules file must be a JSON object with a \"rules\" array");
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    static const std::set<std::string> known{"version", "comment", "rules", "replace_defaults"};
    if (!known.count(it.key())) throw InputError(source + ": unknown top-level key \"" + it.key() + "\"");
  }
  CategoryRules out;
  if (auto v = doc.find("version"); v != doc.end() && (!v->is_number_integer() || v->get<int64_t>() != 1))
    throw InputError(source + ": \"version\" must be 1");
  if (auto r = doc.find("replace_defaults"); r != doc.end()) {
    if (!r->is_boolean()) throw InputError(source + ": \"replace_defaults\" must be true or false");
    out.replace_defaults_ = r->get<bool>();
  }
  auto rules = doc.find("rules");
  if (rules == doc.end() || !rules->is_array()) throw InputError(source + ": missing \"rules\" array");
  std::set<std::string> names;
  for (size_t i = 0; i < rules->size(); ++i) {
    out.rules_.push_back(parse_rule((*rules)[i], i, source, names));
  }
  return out;
}

void CategoryRules::apply_overrides(const CategoryRules& user) {
  std::vector<CategoryRule> merged = user.rules_;
  if (!user.replace_defaults_) {
    std::set<std::string> names;
    for (const auto& r : user.rules_) names.insert(r.name);
    for (const auto& r : rules_)
      if (!names.count(r.name)) merged.push_back(r);
  }
  rules_ = std::move(merged);
}

std::string CategoryRules::to_json() const {
  // Written by hand (not json::dump) to keep one rule per few lines, readable.
  auto q = [](const std::string& s) { return json(s).dump(); };
  auto list = [&](const std::vector<std::string>& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + q(v[i]);
    return s + "]";
  };
  std::string out = "{\n  \"version\": 1,\n  \"rules\": [\n";
  for (size_t i = 0; i < rules_.size(); ++i) {
    const auto& r = rules_[i];
    out += "    {\"name\": " + q(r.name);
    if (r.category != r.name) out += ", \"category\": " + q(r.category);
    out += ", \"kind\": " + q(category_kind_name(r.kind)) + ", \"color\": " + q(r.color);
    if (r.fallback) out += ", \"fallback\": true";
    if (!r.description.empty()) out += ",\n     \"description\": " + q(r.description);
    if (!r.absorbs.empty()) out += ",\n     \"absorbs\": " + list(r.absorbs);
    if (!r.absorbs_into.empty()) out += ", \"absorbs_into\": " + q(r.absorbs_into);
    if (!r.symbols.empty()) out += ",\n     \"symbols\": " + list(r.symbols);
    if (!r.objects.empty()) out += ",\n     \"objects\": " + list(r.objects);
    out += i + 1 < rules_.size() ? "},\n" : "}\n";
  }
  out += "  ]\n}\n";
  return out;
}

// ---- matching ----

FrameKey frame_key(std::string_view name, std::string_view object) {
  FrameKey k{name, object};
  // stackcollapse annotations: _[k] kernel, _[j] JIT, _[i] inlined, _[w] waker.
  if (k.name.size() > 4 && k.name.compare(k.name.size() - 4, 2, "_[") == 0 && k.name.back() == ']') {
    char a = k.name[k.name.size() - 2];
    k.name.remove_suffix(4);
    if (a == 'k' && k.object.empty()) k.object = "[kernel.kallsyms]";
  }
  if (k.object.empty() && k.name.size() > 2 && k.name.front() == '[' && k.name.back() == ']')
    k.object = k.name.substr(1, k.name.size() - 2);
  if (!k.object.empty() && k.object.front() != '[') {
    size_t slash = k.object.rfind('/');
    if (slash != std::string_view::npos) k.object.remove_prefix(slash + 1);
  }
  return k;
}

CategoryMatcher::CategoryMatcher(const CategoryRules& rules) {
  const auto& rs = rules.rules();
  if (rs.size() >= 0xffff) throw InputError("rules: too many rules (" + std::to_string(rs.size()) + ")");
  std::unordered_map<std::string, CategoryId> ids[kCategoryKinds];
  auto category_id = [&](const CategoryRule& r) {
    int k = int(r.kind);
    if (r.category == "other") return CategoryId(kNoCategory - 1);  // patched below
    auto it = ids[k].find(r.category);
    if (it != ids[k].end()) return it->second;
    if (categories_[k].size() >= kMaxCategoriesPerKind)
      throw InputError(r.source + ": rule '" + r.name + "': more than " + std::to_string(kMaxCategoriesPerKind) + " " +
                       category_kind_name(r.kind) + " categories");
    CategoryId id = CategoryId(categories_[k].size());
    categories_[k].push_back(Category{r.category, r.color, r.description, r.kind});
    ids[k].emplace(r.category, id);
    return id;
  };
  std::vector<CategoryId> assigned;
  for (const auto& r : rs) assigned.push_back(category_id(r));
  std::string other_color[kCategoryKinds] = {"#ced4da", "#ced4da"};
  for (const auto& r : rs)
    if (r.category == "other" && other_color[int(r.kind)] == "#ced4da") other_color[int(r.kind)] = r.color;
  for (int k = 0; k < kCategoryKinds; ++k)
    categories_[k].push_back(Category{"other", other_color[k], "frames no rule matched", CategoryKind(k)});
  for (size_t i = 0; i < rs.size(); ++i) {
    const auto& r = rs[i];
    Compiled c;
    c.kind = r.kind;
    c.category = assigned[i] == CategoryId(kNoCategory - 1) ? other(r.kind) : assigned[i];
    c.fallback = r.fallback;
    c.absorbs = 0;
    c.into = c.category;
    if (!r.absorbs_into.empty()) {
      c.into = r.absorbs_into == "other" ? other(CategoryKind::resource) : find(CategoryKind::resource, r.absorbs_into);
      if (c.into == kNoCategory)
        throw InputError(r.source + ": rule '" + r.name + "': absorbs_into unknown resource category '" + r.absorbs_into + "'");
    }
    for (const auto& a : r.absorbs) {
      auto it = ids[int(CategoryKind::resource)].find(a);
      CategoryId id = a == "other" ? other(CategoryKind::resource)
                      : it == ids[int(CategoryKind::resource)].end() ? kNoCategory : it->second;
      if (id == kNoCategory) throw InputError(r.source + ": rule '" + r.name + "': absorbs unknown resource category '" + a + "'");
      if (id != c.into) c.absorbs |= uint64_t(1) << id;
    }
    for (const auto& p : r.symbols) c.symbols.emplace_back(p);
    for (const auto& p : r.objects) c.objects.emplace_back(p);
    by_kind_[int(r.kind)].push_back(uint16_t(compiled_.size()));
    compiled_.push_back(std::move(c));
  }
}

CategoryId CategoryMatcher::find(CategoryKind kind, std::string_view name) const {
  const auto& cats = categories_[int(kind)];
  for (size_t i = 0; i < cats.size(); ++i)
    if (cats[i].name == name) return CategoryId(i);
  return kNoCategory;
}

FrameMatch CategoryMatcher::match(CategoryKind kind, std::string_view name, std::string_view object) const {
  FrameKey key = frame_key(name, object);
  const uint64_t name_mask = GlobPattern::byte_mask(key.name), object_mask = GlobPattern::byte_mask(key.object);
  for (uint16_t idx : by_kind_[int(kind)]) {
    const Compiled& c = compiled_[idx];
    bool hit = false;
    for (const auto& g : c.symbols)
      if (g.matches(key.name, name_mask)) { hit = true; break; }
    if (!hit && !key.object.empty())
      for (const auto& g : c.objects)
        if (g.matches(key.object, object_mask)) { hit = true; break; }
    if (hit) return FrameMatch{c.category, idx, c.fallback};
  }
  return FrameMatch{};
}

}  // namespace fg
