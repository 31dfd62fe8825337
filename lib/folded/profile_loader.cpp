#include "folded/profile_loader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <deque>
#include <iostream>
#include <mutex>

#include "diagnostics/input_error.h"
#include "diagnostics/terminal_text.h"
#include "folded/folded_reader.h"
#include "folded/stream_head.h"

namespace fg {

namespace {
// A deque: registering keeps the pointers find_profile_loader gave out valid.
std::deque<ProfileLoader>& loaders() {
  static std::deque<ProfileLoader> v;
  return v;
}
std::mutex& loaders_mutex() {
  static std::mutex m;
  return m;
}
}  // namespace

void register_profile_loader(ProfileLoader loader) {
  std::lock_guard<std::mutex> lock(loaders_mutex());
  for (const auto& l : loaders())
    if (l.name == loader.name) return;
  loaders().push_back(std::move(loader));
}

std::vector<std::string> profile_loader_names() {
  std::lock_guard<std::mutex> lock(loaders_mutex());
  std::vector<std::string> names;
  for (const auto& l : loaders()) names.push_back(l.name);
  return names;
}

std::vector<std::string> profile_loaders_matching(std::string_view head) {
  std::lock_guard<std::mutex> lock(loaders_mutex());
  std::vector<std::string> names;
  for (const auto& l : loaders())
    if (l.matches && l.matches(head)) names.push_back(l.name);
  return names;
}

std::string read_file_head(const std::string& path) {
  if (path == "-") return {};
  // A pipe given by path (process substitution) is peeked at without losing
  // its head; a named FIFO is not read at all (a second open would hang or
  // find its data gone): it is read as folded text, or by the command that
  // knows its kind (fold: perf.data).
  if (std::optional<std::string> head = stream_head(path)) return *head;
  if (is_unpeekable_stream(path)) return {};
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  // A `perf record --threads` directory is known by its 'data' file (a
  // perf.data header); the perf.data reader then reads the directory.
  struct stat st;
  if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    fd = ::open((path + "/data").c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return {};
  }
  std::string head(4096, '\0');
  size_t have = 0;
  while (have < head.size()) {
    ssize_t n = ::read(fd, head.data() + have, head.size() - have);
    if (n <= 0) break;
    have += static_cast<size_t>(n);
  }
  ::close(fd);
  head.resize(have);
  return head;
}

const ProfileLoader* find_profile_loader(std::string_view head) {
  std::lock_guard<std::mutex> lock(loaders_mutex());
  for (const auto& l : loaders())
    if (l.matches && l.matches(head)) return &l;
  return nullptr;
}

namespace {
// Every weight is finite, but a sum can still pass the largest double (the
// folded reader says at which line; other inputs and merges are caught here).
void check_total(const FoldedProfile& p, const std::string& path) {
  if (!std::isfinite(p.total()))
    throw InputError(path + ": the counts sum past the largest number fgtool can hold (about 1.8e308)");
}
}  // namespace

// --tag and --sample-index choose among a pprof profile's labels and values;
// other inputs have neither and are read whole, which is said, so that a
// filter is not taken to have applied.
std::string pprof_only_options_note(const std::string& path, std::string_view kind, const ProfileLoadOptions& options) {
  if ((options.tags.empty() && options.sample_index.empty()) || kind == "pprof") return "";
  const std::string which = options.tags.empty()           ? "--sample-index applies"
                            : options.sample_index.empty() ? "--tag applies"
                                                           : "--tag and --sample-index apply";
  return (path == "-" ? std::string("<stdin>") : path) + ": " + which + " to pprof input only; this " +
         std::string(kind) + " is read whole";
}

namespace {

void warn_of(const ProfileLoadOptions& options, const std::string& msg) {
  if (options.warn) options.warn(msg);
  else std::cerr << "fgtool: warning: " << terminal_safe(msg) << "\n";
}

void note_pprof_only_options(const std::string& path, const ProfileLoader* loader, const ProfileLoadOptions& options) {
  const std::string note = pprof_only_options_note(path, loader ? loader->name : "folded text", options);
  if (!note.empty()) warn_of(options, note);
}

// Standard input is detected by content too (`curl .../profile | fgtool svg
// -`): its head is kept for the reader (stream_head.h), and a format other
// than folded text reads it as /dev/stdin.
std::string detection_path(const std::string& path) { return path == "-" ? "/dev/stdin" : path; }

}  // namespace

void load_profile(const std::string& path, FoldedProfile& into, const ProfileLoadOptions& options) {
  const std::string source = detection_path(path);
  const ProfileLoader* l = find_profile_loader(read_file_head(source));
  note_pprof_only_options(path, l, options);
  if (l) {
    if (options.root_frame.empty()) {
      l->load(source, into, options);
    } else {
      FoldedProfile alone;
      alone.units.clear();
      l->load(source, alone, options);
      into.merge(alone, options.root_frame);
      if (!alone.units.empty()) into.units = alone.units;
    }
    check_total(into, path);
    return;
  }
  FoldedReadOptions ro;
  ro.lenient = options.lenient;
  ro.warn = options.warn;
  ro.root_frame = options.root_frame;
  read_folded(path, into, ro);
  check_total(into, path);
}

FoldedProfile load_profile(const std::string& path, const ProfileLoadOptions& options) {
  FoldedProfile p;
  load_profile(path, p, options);
  return p;
}

double seconds_per_unit(const std::string& units) {
  if (units == "ns") return 1e-9;
  if (units == "us") return 1e-6;
  if (units == "ms") return 1e-3;
  if (units == "s") return 1;
  return 0;
}

double time_unit_factor(const std::string& from, const std::string& to) {
  auto exponent = [](const std::string& u) { return u == "ns" ? -9 : u == "us" ? -6 : u == "ms" ? -3 : 0; };
  if (seconds_per_unit(from) == 0 || seconds_per_unit(to) == 0) return 0;
  return std::pow(10.0, exponent(from) - exponent(to));  // a power of ten, exact in a double
}

FoldedProfile load_profiles(const std::vector<std::string>& paths, const ProfileLoadOptions& options,
                            std::string* label) {
  FoldedProfile profile;
  std::string first;
  for (const auto& in : paths) {
    if (paths.size() == 1) {
      profile = load_profile(in, options);
      if (!options.units.empty()) profile.units = options.units;
    } else {
      FoldedProfile p = load_profile(in, options);
      if (!options.units.empty()) p.units = options.units;
      if (first.empty()) {
        first = in;
        profile.units = p.units;
        profile.merge(p);
      } else if (p.units == profile.units) {
        profile.merge(p);
      } else if (double factor = time_unit_factor(p.units, profile.units); factor > 0) {
        // Both are time: add them in the first input's unit, and say so.
        std::string note = "note: " + in + " is in " + p.units + ", converted to " + profile.units + " (the unit of " +
                           first + ")";
        if (options.warn) options.warn(note);
        else std::fprintf(stderr, "fgtool: %s\n", note.c_str());
        profile.merge(p, factor);
      } else {
        throw UsageError(in + " is in " + p.units + " but " + first + " is in " + profile.units +
                         ": inputs of different units cannot be added (give folded files from other tools their "
                         "unit with --unit)");
      }
      check_total(profile, in + " (with the inputs before it)");
    }
    if (label) *label += (label->empty() ? "" : " + ") + in;
  }
  return profile;
}

bool load_diff_union(const std::string& a, const std::string& b, DiffUnion& out, const ProfileLoadOptions& options) {
  for (const std::string* path : {&a, &b})
    if (find_profile_loader(read_file_head(detection_path(*path)))) return false;
  auto emit = [&](const std::string& msg) { warn_of(options, msg); };
  note_pprof_only_options(a, nullptr, options);
  note_pprof_only_options(b, nullptr, options);
  FoldedReadOptions ro;
  ro.lenient = options.lenient;
  // B is read first (its nodes come first in the tree, as build_diff orders
  // them) but reported second: its warnings wait until A's are out.
  std::vector<std::string> b_warnings;
  ro.warn = [&](const std::string& msg) { b_warnings.push_back(msg); };
  try {
    read_folded(b, out.tree, ro);
    check_total(out.tree, b);
  } catch (const InputError&) {
    // Loaded apart, a broken A was reported before anything about B.
    FoldedProfile alone;
    load_profile(a, alone, options);
    throw;
  }
  out.self_b = out.tree.take_self_weights();
  for (size_t i = 1; i < out.self_b.size(); ++i) out.raw_sum_b += out.self_b[i];
  const std::string units_b = out.tree.units;
  out.tree.units = FoldedProfile().units;  // what A is in without a units line
  ro.warn = options.warn;
  read_folded(a, out.tree, ro);
  check_total(out.tree, a);
  // Sides in different units (their "# fgtool units=" lines) are converted
  // or refused by the caller: it loads them apart. Stdin or a pipe cannot be
  // read again, so there the units of B stand (as before units lines
  // existed), which is said.
  const bool a_again = a != "-" && !is_stream_path(a), b_again = b != "-" && !is_stream_path(b);
  if (options.units.empty() && out.tree.units != units_b) {
    if (a_again && b_again) {
      out = DiffUnion{};
      return false;
    }
    emit((a == "-" ? std::string("<stdin>") : a) + " counts " + out.tree.units + ", " +
         (b == "-" ? std::string("<stdin>") : b) + " counts " + units_b + ": compared as " + units_b +
         " without converting (a pipe is read once; give files, or --units)");
  }
  out.tree.units = units_b;
  if (!options.units.empty()) out.tree.units = options.units;
  for (const std::string& msg : b_warnings) emit(msg);
  out.self_a = out.tree.take_self_weights();
  out.self_b.resize(out.self_a.size(), 0.0);
  // A's total in A's own node order (as when loaded apart): any order gives
  // the same sum when every weight is a whole number and the total stays
  // below 2^53 (the usual sample counts); otherwise A is read again alone.
  bool whole = true;
  double sum = 0;
  for (size_t i = 1; i < out.self_a.size(); ++i) {
    double w = out.self_a[i];
    whole = whole && w == std::floor(w);
    sum += w;
  }
  if (!whole || sum > 9007199254740992.0) {
    if (a_again) {
      FoldedProfile alone;
      ProfileLoadOptions quiet = options;
      quiet.warn = [](const std::string&) {};  // already said once
      load_profile(a, alone, quiet);
      sum = 0;
      for (NodeId i = 1; i < alone.node_count(); ++i) sum += alone.node(i).self;
    }
    // stdin or a pipe cannot be read twice: the tree-order sum may differ in its last bit.
  }
  out.raw_sum_a = sum;
  return true;
}

}  // namespace fg
