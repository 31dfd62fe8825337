// Category rules for deep-learning stacks: which frames are GEMM, OpenMP,
// allocation, page faults (the "resource" a sample spent its time on) and
// which part of a training step they ran in (the "phase"). Rules come from
// the built-in default_rules.json, optionally overridden by a user's file;
// CategoryMatcher compiles them once so that classifying a frame is a few
// glob compares (each distinct frame is classified once, see ProfileCategories).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "categories/glob_pattern.h"

namespace fg {

enum class CategoryKind : uint8_t { resource = 0, phase = 1 };
constexpr int kCategoryKinds = 2;
const char* category_kind_name(CategoryKind kind);  // "resource" / "phase"

// One rule as written in the JSON file. See docs in default_rules.json and
// `fgtool help rules` for the syntax.
struct CategoryRule {
  std::string name;        // unique within a rule set (user rules replace defaults by name)
  std::string category;    // the category it assigns; defaults to name
  CategoryKind kind = CategoryKind::resource;
  std::string color;       // "#rrggbb"; the first rule of a category sets its colour
  std::string description;
  std::vector<std::string> symbols;  // globs on the frame name (whole name)
  std::vector<std::string> objects;  // globs on the basename of the frame's object
  std::vector<std::string> absorbs;  // resource categories lifted into this one when called beneath it
  std::string absorbs_into;          // the category they are lifted into; default: this rule's own
  bool fallback = false;   // counts only when no non-fallback rule of the kind matches the stack
  std::string source;      // the file it came from, for error messages (not written by to_json)
};

class CategoryRules {
 public:
  // The built-in rules (lib/categories/default_rules.json, compiled in).
  static CategoryRules defaults();
  // The built-in rules with a user file's rules applied on top ("" = none):
  // what every command's --rules option means.
  static CategoryRules effective(const std::string& user_rules_file);
  // Parses a rules document; `source` names it in errors. Throws InputError
  // naming the rule and the problem ("rules.json: rule 3 'gemm': ...").
  static CategoryRules parse(std::string_view json_text, const std::string& source);
  // Reads and parses a rules file: a directory, or a file over 16 MiB (e.g.
  // /dev/zero), is an InputError naming it, not a JSON error or a runaway read.
  static CategoryRules load_file(const std::string& path);

  // The effective rules after applying a user's file: its rules come first (so
  // they win first-match), and a built-in rule of the same name is dropped. A
  // file with "replace_defaults": true drops all built-in rules.
  void apply_overrides(const CategoryRules& user);

  const std::vector<CategoryRule>& rules() const { return rules_; }
  // The effective rules as a JSON document that parse() reads back.
  std::string to_json() const;

 private:
  std::vector<CategoryRule> rules_;
  bool replace_defaults_ = false;
};

// The built-in rules document, as shipped.
std::string_view default_rules_json();

using CategoryId = uint16_t;
constexpr CategoryId kNoCategory = 0xffff;

struct Category {
  std::string name, color, description;
  CategoryKind kind = CategoryKind::resource;
};

// What one rule match says about a frame, per kind.
struct FrameMatch {
  CategoryId category = kNoCategory;  // kNoCategory: no rule matched
  uint16_t rule = 0;                  // index into CategoryMatcher's compiled rules
  bool fallback = false;
  explicit operator bool() const { return category != kNoCategory; }
};

// Rules compiled for matching. Category ids are per kind, in the order the
// categories first appear in the rules, with "other" always last.
class CategoryMatcher {
 public:
  // Throws InputError naming the rule when the set is inconsistent ("absorbs"
  // naming an unknown category, more than 63 categories of a kind).
  explicit CategoryMatcher(const CategoryRules& rules);

  const std::vector<Category>& categories(CategoryKind kind) const { return categories_[int(kind)]; }
  CategoryId other(CategoryKind kind) const { return CategoryId(categories_[int(kind)].size() - 1); }
  CategoryId find(CategoryKind kind, std::string_view name) const;  // kNoCategory if unknown

  // The first rule of `kind` matching a frame. `name` is the frame name as it
  // appears in folded text (a "_[k]"-style suffix is stripped, and "_[k]"
  // means object [kernel.kallsyms]); `object` is the frame's object path, or
  // empty when unknown, in which case a bracketed name "[libfoo.so.1]" is
  // taken as the object.
  FrameMatch match(CategoryKind kind, std::string_view name, std::string_view object) const;

  // Bit c set when the rule absorbs resource category c.
  uint64_t absorbs(uint16_t rule) const { return compiled_[rule].absorbs; }
  // The resource category absorbed samples take (the rule's own unless "absorbs_into").
  CategoryId absorbs_into(uint16_t rule) const { return compiled_[rule].into; }

 private:
  struct Compiled {
    CategoryKind kind;
    CategoryId category;
    bool fallback;
    uint64_t absorbs;
    CategoryId into;
    std::vector<GlobPattern> symbols, objects;
  };
  std::vector<Compiled> compiled_;
  std::vector<uint16_t> by_kind_[kCategoryKinds];
  std::vector<Category> categories_[kCategoryKinds];
};

// Splits a folded frame name into the name to match and the object it
// implies: "foo_[k]" -> ("foo", "[kernel.kallsyms]"), "[libgomp.so.1]" ->
// ("[libgomp.so.1]", "libgomp.so.1"). `object` is returned as a basename.
struct FrameKey {
  std::string_view name, object;
};
FrameKey frame_key(std::string_view name, std::string_view object);

}  // namespace fg
