#include "command.h"

#include <algorithm>
#include <iostream>
#include <new>

#include "diagnostics/input_error.h"

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
  return true;
}

int guarded(const std::string& command, const std::function<int()>& fn) {
  try {
    return fn();
  } catch (const InputError& e) {
    std::cerr << "fgtool " << command << ": " << e.what() << "\n";
    return 1;
  } catch (const UsageError& e) {
    std::cerr << "fgtool " << command << ": " << e.what() << "\n";
    return 2;
  } catch (const std::bad_alloc&) {
    std::cerr << "fgtool " << command << ": out of memory\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "fgtool " << command << ": " << e.what() << "\n";
    return 1;
  }
}

}  // namespace fg::cli
