#include "command.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <new>

#include "diagnostics/atomic_output.h"
#include "diagnostics/input_error.h"
#include "diagnostics/terminal_text.h"

namespace fg::cli {

static std::vector<CommandInfo>& registry() {
  static std::vector<CommandInfo> r;
  return r;
}

Registration::Registration(CommandInfo info) { registry().push_back(std::move(info)); }

const std::vector<CommandInfo>& commands() {
  auto& r = registry();
  std::stable_sort(r.begin(), r.end(), [](const CommandInfo& a, const CommandInfo& b) {
    return a.order != b.order ? a.order < b.order : a.name < b.name;
  });
  return r;
}

const CommandInfo* find_command(const std::string& name) {
  for (const auto& c : registry())
    if (c.name == name) return &c;
  return nullptr;
}

bool parse_args(const std::string& command, const std::vector<std::string>& args,
                po::options_description& options, const po::positional_options_description& positional,
                po::variables_map& vm) {
  options.add_options()("help,h", "show this help");
  // Every command that writes files through AtomicOutput (they all name it
  // --output) gets --force; `record` leaves its -o to perf.
  bool writes_output = command != "record" && options.find_nothrow("output", false) != nullptr;
  if (writes_output && !options.find_nothrow("force", false))
    options.add_options()("force", po::bool_switch(),
                          "replace a read-only output file (an input is never replaced)");
  try {
    po::store(po::command_line_parser(args).options(options).positional(positional).run(), vm);
    if (vm.count("help")) {
      const CommandInfo* info = find_command(command);
      if (info) std::cout << "Usage: " << info->usage << "\n\n" << info->summary << "\n\n";
      std::cout << options << "\n";
      if (info && !info->examples.empty()) std::cout << "Examples:\n" << info->examples << "\n";
      return false;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError(std::string(e.what()) + " (see 'fgtool help " + command + "')");
  }
  // What AtomicOutput must not overwrite: every file named as an input.
  OutputPolicy policy;
  policy.force = vm.count("force") && vm["force"].as<bool>();
  for (const char* name : {"input", "rules", "kallsyms"}) {
    if (!vm.count(name)) continue;
    const boost::any& v = vm[name].value();
    if (const auto* one = boost::any_cast<std::string>(&v)) policy.inputs.push_back(*one);
    else if (const auto* many = boost::any_cast<std::vector<std::string>>(&v))
      policy.inputs.insert(policy.inputs.end(), many->begin(), many->end());
  }
  set_output_policy(std::move(policy));
  return true;
}

bool flush_stdout(std::string* error) {
  errno = 0;
  std::cout.flush();
  bool failed = std::fflush(stdout) != 0;
  int e = errno;
  if (!failed && !std::ferror(stdout) && std::cout.good()) return true;
  if (error) *error = std::string("stdout: write failed") + (e ? std::string(": ") + std::strerror(e) : std::string());
  return false;
}

int guarded(const std::string& command, const std::function<int()>& fn) {
  // Messages quote input text (file names, frame and event names): escaped
  // so that it cannot drive the terminal.
  bool reported = false;
  auto fail = [&](const char* what, int status) {
    reported = true;
    std::cerr << "fgtool " << command << ": " << terminal_safe(what) << "\n";
    return status;
  };
  int status;
  try {
    status = fn();
  } catch (const InputError& e) {
    status = fail(e.what(), 1);
  } catch (const UsageError& e) {
    status = fail(e.what(), 2);
  } catch (const std::bad_alloc&) {
    status = fail("out of memory", 1);
  } catch (const std::exception& e) {
    status = fail(e.what(), 1);
  }
  // Text printed to stdout (tables, --top, info, --dry-run) that could not
  // be written (a full disk, /dev/full, a closed pipe) is a failed run.
  std::string error;
  if (!flush_stdout(&error)) {
    // Already said when the error was the failed write itself (AtomicOutput on "-").
    if (!reported) std::cerr << "fgtool " << command << ": " << error << "\n";
    return reported ? status : 2;
  }
  return status;
}

}  // namespace fg::cli
