// `fgtool merge`: sums many profiles (folded text, perf.data, traces, pprof;
// typically one per host or rank) into one folded or pprof output, optionally
// marking each input with a label or a root frame. Inputs are read one after
// another into one prefix tree, so memory follows the merged tree, not the
// inputs; pprof output of only perf.data and pprof inputs is instead merged as
// whole profiles (PprofMerger), keeping addresses.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

#include "categories/category_rules.h"
#include "command.h"
#include "diagnostics/atomic_output.h"
#include "diagnostics/input_error.h"
#include "diagnostics/progress.h"
#include "folded/folded_writer.h"
#include "folded/profile_loader.h"
#include "fold/fold_perf_data.h"
#include "pprof/pprof_export.h"
#include "pprof/pprof_merge.h"
#include "pprof/pprof_reader.h"
#include "pprof_cli.h"

namespace fg::cli {
namespace {

// "node7.cpu.folded.gz" -> "node7": the name before the first '.'.
std::string file_stem(const std::string& path) {
  size_t slash = path.rfind('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  size_t dot = base.find('.');
  return dot == 0 || dot == std::string::npos ? base : base.substr(0, dot);
}

bool exists(const std::string& path) { return !read_file_head(path).empty() || ::access(path.c_str(), R_OK) == 0; }

bool is_pprof_name(const std::string& path) {
  auto ends = [&](const char* s) {
    std::string x(s);
    return path.size() >= x.size() && path.compare(path.size() - x.size(), x.size(), x) == 0;
  };
  return ends(".pb.gz") || ends(".pb") || ends(".pprof") || ends(".pprof.gz");
}

// pprof output from inputs that are all perf.data or pprof files: merged
// as whole profiles, so that addresses, mappings, build-ids, source lines
// and the inputs' own labels stay (perf.data is exported first, as
// `fgtool export -f pprof` does). Empty when an input is anything else.
struct AddressInput {
  std::string path, value;
  bool perf_data;
};
std::vector<AddressInput> address_inputs(const std::vector<std::pair<std::string, std::string>>& ins) {
  std::vector<AddressInput> out;
  for (const auto& [value, path] : ins) {
    if (path == "-") return {};
    const std::string head = read_file_head(path);
    if (looks_like_perf_data(head)) out.push_back({path, value, true});
    else if (looks_like_pprof(head)) out.push_back({path, value, false});
    else return {};
  }
  return out;
}

// The merged profile, or empty (with a warning) when the inputs' sample
// types differ: the caller then merges at function level.
std::string merge_with_addresses(const std::vector<AddressInput>& inputs, const std::string& label_key,
                                 const PprofExportOptions& eo, bool lenient) {
  PprofMerger merger;
  for (const AddressInput& in : inputs) {
    std::vector<std::pair<std::string, std::string>> labels = eo.labels;
    if (!label_key.empty()) labels.emplace_back(label_key, in.value);
    std::string bytes;
    if (in.perf_data) {
      FoldOptions fo;
      fo.partial = lenient;
      PprofExportOptions one = eo;
      one.labels.clear();
      one.gzip = false;
      bytes = pprof_from_perf_data(in.path, fo, one);
    } else {
      std::ifstream f(in.path, std::ios::binary);
      if (!f) throw InputError(in.path + ": cannot open: " + std::strerror(errno));
      std::ostringstream ss;
      ss << f.rdbuf();
      bytes = ss.str();
    }
    std::string mismatch;
    if (!merger.add(bytes, in.path, labels, &mismatch)) {
      std::cerr << "fgtool merge: warning: " << mismatch
                << "; merged at function level (no addresses), summing the value --sample-index picks\n";
      return {};
    }
  }
  return merger.finish(eo.gzip, eo.gzip_level);
}

int run_merge(const std::vector<std::string>& args) {
  std::vector<std::string> inputs, user_labels;
  std::string output = "-", format, label_key, rules_file;
  bool root = false, lenient = false, no_categories = false;
  PprofInputCli pin;
  po::options_description options("Options");
  options.add_options()
      ("input", po::value(&inputs), "folded text (plain or gzip), perf.data, trace JSON, oneDNN verbose log, pprof; "
                                    "VALUE=PATH names the input's --label value (default: the file name before its first '.')")
      ("output,o", po::value(&output), "output file ('-' = stdout)")
      ("format,f", po::value(&format), "folded or pprof (default: pprof for OUT ending .pb.gz/.pb/.pprof, else folded)")
      ("label", po::value(&label_key), "KEY: each input's samples get label KEY=VALUE (pprof) or root frame "
                                       "'KEY=VALUE' (folded), e.g. --label host")
      ("root", po::bool_switch(&root), "put each input's stacks under a root frame named after it (also in pprof)")
      ("add-label", po::value(&user_labels), "pprof: KEY=VALUE added to every sample (repeatable)")
      ("rules", po::value(&rules_file), "pprof: rules JSON added to the built-in category rules")
      ("no-categories", po::bool_switch(&no_categories), "pprof: leave out the category and phase labels")
      ("lenient", po::bool_switch(&lenient), "skip malformed input records instead of failing");
  add_pprof_input_options(options, pin);
  po::positional_options_description positional;
  positional.add("input", -1);
  po::variables_map vm;
  if (!parse_args("merge", args, options, positional, vm)) return 0;
  if (inputs.empty()) throw UsageError("no inputs (see 'fgtool help merge')");
  if (format.empty()) format = is_pprof_name(output) ? "pprof" : "folded";
  if (format != "folded" && format != "pprof") throw UsageError("--format '" + format + "': expected folded or pprof");
  const bool pprof = format == "pprof";

  ProfileLoadOptions lo;
  lo.lenient = lenient;
  pin.apply(lo);
  lo.warn = [](const std::string& w) { std::cerr << "fgtool merge: warning: " << w << "\n"; };

  // Each input's value (for --label/--root) and path.
  struct Input {
    std::string value, path;
  };
  std::vector<Input> ins;
  for (const auto& in : inputs) {
    size_t eq = in.find('=');
    if (eq != std::string::npos && eq > 0 && !exists(in) && exists(in.substr(eq + 1)))
      ins.push_back({in.substr(0, eq), in.substr(eq + 1)});
    else
      ins.push_back({file_stem(in), in});
  }
  const bool grouped = !label_key.empty() || root;
  Progress timer("merge", 0, Progress::default_enabled());
  // Whole-profile merge (addresses kept) for pprof output of perf.data and
  // pprof inputs, unless a root frame, a value or a tag filter asks for the
  // folded tree.
  std::vector<AddressInput> address_ins;
  if (pprof && !root && pin.sample_index.empty() && pin.tags.empty()) {
    std::vector<std::pair<std::string, std::string>> named;
    for (const Input& in : ins) named.emplace_back(in.value, in.path);
    address_ins = address_inputs(named);
  }
  if (!address_ins.empty()) {
    PprofExportOptions eo;
    std::unique_ptr<CategoryMatcher> matcher = set_pprof_output_options(eo, user_labels, rules_file, !no_categories);
    std::string doc = merge_with_addresses(address_ins, label_key, eo, lenient);
    if (!doc.empty()) {
      AtomicOutput out(output);
      out.write(doc);
      out.commit();
      timer.finish(std::to_string(ins.size()) + " inputs, addresses kept");
      return 0;
    }
  }

  // A root frame: file names and label values may hold ';' or line breaks.
  auto root_name = [&](const std::string& value) {
    return folded_safe_name(label_key.empty() ? value : label_key + "=" + value);
  };
  // Every input streams into one tree: for folded output with labels, each
  // below its root frame. pprof output with labels needs one tree per value
  // (inputs with the same value share it), each a group with its label.
  std::vector<std::string> order;
  std::map<std::string, FoldedProfile> groups;
  FoldedProfile merged;
  std::string units;
  for (const Input& in : ins) {
    FoldedProfile* into = &merged;
    lo.root_frame.clear();
    if (grouped && !pprof) {
      lo.root_frame = root_name(in.value);
    } else if (grouped) {
      auto it = groups.find(in.value);
      if (it == groups.end()) {
        order.push_back(in.value);
        it = groups.emplace(in.value, FoldedProfile()).first;
      }
      into = &it->second;
    }
    std::string before = into->units;
    into->units.clear();
    load_profile(in.path, *into, lo);
    if (into->units.empty()) into->units = before.empty() ? "samples" : before;
    if (!units.empty() && into->units != units)
      std::cerr << "fgtool merge: warning: " << in.path << " is in " << into->units << ", earlier inputs in " << units
                << "; summed as they are\n";
    if (units.empty()) units = into->units;
  }

  AtomicOutput out(output);
  if (!pprof) {
    if (grouped) merged.units = units;
    // As `fold -o FILE`: a file starts with the units line, so that svg,
    // diff and report read ns as ns (stdout stays plain folded text).
    if (!output.empty() && output != "-" && !units.empty()) out.write(units_header_line(units));
    write_folded(merged, out);
  } else {
    PprofExportOptions eo;
    std::unique_ptr<CategoryMatcher> matcher = set_pprof_output_options(eo, user_labels, rules_file, !no_categories);
    std::vector<PprofGroup> pg;
    std::vector<FoldedProfile> rooted;
    if (!grouped) {
      pg.push_back(PprofGroup{&merged, {}});
    } else {
      rooted.reserve(order.size());
      for (const auto& v : order) {
        const FoldedProfile* p = &groups.at(v);
        if (root) {
          rooted.emplace_back();
          rooted.back().merge(*p, root_name(v));
          rooted.back().units = p->units;
          p = &rooted.back();
        }
        PprofGroup g{p, {}};
        if (!label_key.empty()) g.labels.emplace_back(label_key, v);
        pg.push_back(std::move(g));
      }
    }
    out.write(pprof_from_folded_groups(pg, eo));
  }
  out.commit();
  timer.finish(std::to_string(ins.size()) + " inputs");
  return 0;
}

const Registration reg{CommandInfo{
    "merge", "merge profiles from many hosts or ranks into one folded or pprof file, with a label per input",
    "fgtool merge [options] IN... -o OUT",
    "  fgtool merge node*.folded -o job.folded                      # sum per-host folds\n"
    "  fgtool merge --label host node1.folded node2.folded -o job.pb.gz   # pprof, label host=node1/node2\n"
    "  fgtool merge --label rank r0=rank0/perf.data r1=rank1/perf.data -o job.folded  # root frames rank=r0, rank=r1\n"
    "  fgtool merge a.pb.gz b.pb.gz --sample-index cpu -o ab.folded # pprof inputs\n"
    "Multi-host workflows (and sending to Pyroscope or Parca): docs/multi-node.md.\n",
    run_merge, 47}};

}  // namespace
}  // namespace fg::cli
