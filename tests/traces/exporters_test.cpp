// Exporters checked against each format's structure: speedscope ($schema,
// frame indexes in range, weights summing to the total, samples giving back
// the profile's stacks), d3-flame-graph ({name, value, children} with value =
// self + children), and the text tree (one line per frame, percentages).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "folded/folded_reader.h"
#include "trace_test_util.h"
#include "traces/chrome_trace.h"
#include "traces/exporters.h"

namespace fg::test {
namespace {

std::vector<FoldedProfile> sample_profiles() {
  std::vector<FoldedProfile> v;
  v.push_back(fold_chrome_trace(testdata("traces/mlp_train_trace.json")));
  v.push_back(fold_chrome_trace(testdata("traces/nested.json")));
  FoldedProfile f;
  read_folded(testdata("folded/small.folded"), f);
  v.push_back(std::move(f));
  FoldedProfile odd;  // names that need escaping, invalid UTF-8, a frame that is also a leaf and a parent
  odd.add_stack("main;say \"hi\"\\;tab\there", 3);
  odd.add_stack("main;bad \xff\xfe utf8;\xe2\x82\xac euro", 2.5);
  odd.add_stack("main", 1);
  odd.add_stack("main;ctrl\x01", 0.5);
  v.push_back(std::move(odd));
  return v;
}

TEST(Exporters, SpeedscopeStructure) {
  for (FoldedProfile& p : sample_profiles()) {
    ExportOptions o;
    o.name = "test \"profile\"";
    std::string doc;
    export_speedscope(p, o, doc);
    nlohmann::json j = nlohmann::json::parse(doc);  // throws on invalid JSON or UTF-8
    EXPECT_EQ(j["$schema"], "https://www.speedscope.app/file-format-schema.json");
    EXPECT_EQ(j["name"], o.name);
    const auto& frames = j["shared"]["frames"];
    ASSERT_TRUE(frames.is_array());
    for (const auto& f : frames) ASSERT_TRUE(f["name"].is_string());
    ASSERT_EQ(j["profiles"].size(), 1u);
    const auto& prof = j["profiles"][0];
    EXPECT_EQ(prof["type"], "sampled");
    EXPECT_EQ(prof["unit"], speedscope_unit(p.units));
    const auto& samples = prof["samples"];
    const auto& weights = prof["weights"];
    ASSERT_EQ(samples.size(), weights.size());
    double sum = 0;
    std::map<std::string, double> stacks;
    for (size_t i = 0; i < samples.size(); ++i) {
      std::string key;
      for (const auto& ix : samples[i]) {
        ASSERT_TRUE(ix.is_number_integer());
        ASSERT_LT(ix.get<size_t>(), frames.size());
        key += (key.empty() ? "" : ";") + frames[ix.get<size_t>()]["name"].get<std::string>();
      }
      stacks[key] += weights[i].get<double>();
      sum += weights[i].get<double>();
    }
    EXPECT_NEAR(sum, p.total(), 1e-9 * p.total());
    EXPECT_NEAR(prof["endValue"].get<double>(), p.total(), 1e-9 * p.total());
    EXPECT_EQ(prof["startValue"], 0);
    // The samples are the profile's stacks (names compared after the same UTF-8 repair).
    auto expect = stack_map(p);
    ASSERT_EQ(stacks.size(), expect.size());
    for (const auto& [k, w] : expect) {
      std::string repaired;
      append_json_string(repaired, k);
      std::string key = nlohmann::json::parse(repaired).get<std::string>();
      EXPECT_NEAR(stacks[key], w, 1e-12 * (1 + w)) << k;
    }
  }
}

// value of every node = the weight of the stack ending there + its children's values.
void check_d3(const nlohmann::json& node, const std::string& path, const std::map<std::string, double>& self,
              size_t& nodes) {
  ASSERT_TRUE(node.contains("name"));
  ASSERT_TRUE(node["name"].is_string());
  ASSERT_TRUE(node["value"].is_number());
  ++nodes;
  double children = 0;
  if (node.contains("children")) {
    ASSERT_TRUE(node["children"].is_array());
    for (const auto& c : node["children"]) {
      std::string cp = path.empty() ? c["name"].get<std::string>() : path + ";" + c["name"].get<std::string>();
      check_d3(c, cp, self, nodes);
      children += c["value"].get<double>();
    }
  }
  auto it = self.find(path);
  double own = it == self.end() ? 0 : it->second;
  EXPECT_NEAR(node["value"].get<double>(), own + children, 1e-9 * (1 + own + children)) << path;
}

TEST(Exporters, D3Structure) {
  for (FoldedProfile& p : sample_profiles()) {
    ExportOptions o;
    o.name = "root";
    std::string doc;
    export_d3_json(p, o, doc);
    nlohmann::json j = nlohmann::json::parse(doc);
    EXPECT_EQ(j["name"], "root");
    EXPECT_NEAR(j["value"].get<double>(), p.total(), 1e-9 * p.total());
    std::map<std::string, double> self;
    for (const auto& [k, w] : stack_map(p)) {
      std::string repaired;
      append_json_string(repaired, k);
      self[nlohmann::json::parse(repaired).get<std::string>()] = w;
    }
    size_t nodes = 0;
    check_d3(j, "", self, nodes);
    EXPECT_EQ(nodes, p.node_count());  // every node written once (none has zero weight here)
  }
}

TEST(Exporters, TextTree) {
  FoldedProfile p = fold_chrome_trace(testdata("traces/nested.json"));
  ExportOptions o;
  o.name = "nested";
  std::string text;
  export_text_tree(p, o, text);
  EXPECT_NE(text.find("# nested: 131.25 us in 7 stacks"), std::string::npos) << text;
  // Lines after the 4 header lines: one per node, depth-first, larger totals first.
  std::vector<std::string> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    lines.push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  ASSERT_EQ(lines.size(), 4 + p.node_count() - 1);
  EXPECT_EQ(lines[4], " 99.05%    0.00%           130             0  trainer");
  EXPECT_EQ(lines[5], " 76.19%    0.00%           100             0    main");
  EXPECT_EQ(lines[6], " 76.19%   19.05%           100            25      step");
  EXPECT_EQ(lines[7], " 30.48%   14.86%            40          19.5        forward");  // 40 > 35 (backward)
  EXPECT_EQ(lines[8], " 15.62%   15.62%          20.5          20.5          matmul");
  EXPECT_EQ(lines[9], " 26.67%    7.62%            35            10        backward");
  EXPECT_EQ(lines[11], " 22.86%    0.00%            30             0    tid 11");
  EXPECT_EQ(lines[lines.size() - 3], "  0.95%    0.00%          1.25             0  GPU");  // smallest: last
  // Pruning: only frames >= 20% stay, the rest is counted.
  o.min_percent = 20;
  std::string pruned;
  export_text_tree(p, o, pruned);
  EXPECT_EQ(pruned.find("matmul"), std::string::npos);
  EXPECT_NE(pruned.find("forward"), std::string::npos);
  EXPECT_NE(pruned.find("subtrees below 20% left out"), std::string::npos) << pruned;
}

// The text tree is read on a terminal: an escape sequence in a frame name is
// shown, not obeyed.
TEST(Exporters, TextTreeEscapesControlCharacters) {
  FoldedProfile p;
  std::vector<FrameId> stack{p.intern("main"), p.intern("evil\x1b]0;pwned\x07name")};
  p.add(stack, 10);
  ExportOptions o;
  o.name = "x\x1b[2J";
  std::string text;
  export_text_tree(p, o, text);
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_EQ(text.find('\x07'), std::string::npos) << text;
  EXPECT_NE(text.find("evil\\x1b]0;pwned\\x07name"), std::string::npos) << text;
}

TEST(Exporters, DeepStacksDoNotRecurse) {
  FoldedProfile p;
  std::vector<FrameId> frames;
  for (int i = 0; i < 100000; ++i) frames.push_back(p.intern("f" + std::to_string(i % 3)));
  p.add(frames, 7);
  for (auto fmt : {ExportFormat::Speedscope, ExportFormat::D3, ExportFormat::TextTree}) {
    std::string out;
    export_profile(p, fmt, {}, out);
    EXPECT_GT(out.size(), 100000u);
  }
}

TEST(Exporters, FormatNames) {
  ExportFormat f;
  EXPECT_TRUE(parse_export_format("speedscope", f));
  EXPECT_EQ(f, ExportFormat::Speedscope);
  EXPECT_TRUE(parse_export_format("d3", f));
  EXPECT_EQ(f, ExportFormat::D3);
  EXPECT_TRUE(parse_export_format("pprof-text", f));
  EXPECT_EQ(f, ExportFormat::TextTree);
  EXPECT_FALSE(parse_export_format("pprof", f));
  EXPECT_EQ(speedscope_unit("us"), "microseconds");
  EXPECT_EQ(speedscope_unit("samples"), "none");
}

}  // namespace
}  // namespace fg::test
