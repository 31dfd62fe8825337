// fgtool: perf.data and folded stacks to flamegraphs. This file only
// dispatches to the subcommands registered by the cmd_*.cpp files.
#include <malloc.h>

#include <cstdlib>
#include <cstring>
#include <iostream>

#include "command.h"
#include "diagnostics/terminal_text.h"
#include "symbols/file_descriptor_table.h"
#include "input_formats.h"

namespace {

void print_overview(std::ostream& out) {
  out << "fgtool " FGTOOL_VERSION " - fast flamegraphs from perf.data and folded stacks\n\n"
         "Usage: fgtool <command> [options]\n"
         "       fgtool help <command>\n\n"
         "Commands:\n";
  for (const auto& c : fg::cli::commands()) {
    out << "  " << c.name << std::string(c.name.size() < 10 ? 10 - c.name.size() : 1, ' ') << c.summary << "\n";
  }
  out << "\nExamples:\n"
         "  fgtool record -o perf.data -- ./train --epochs 1   # record with the right perf events\n"
         "  fgtool fold perf.data -o train.folded               # perf.data -> folded stacks\n"
         "  fgtool svg train.folded -o train.svg                # interactive flamegraph\n"
         "  fgtool svg perf.data -o train.svg                   # fold and render in one step\n"
         "  fgtool diff before.folded after.folded -o diff.svg  # differential flamegraph\n";
}

}  // namespace

int main(int argc, char** argv) {
  // One malloc arena for every thread: the helper threads (reading,
  // symbolising, unwinding) allocate little and seldom, and a second arena
  // kept about 9 MB of a busy system-wide fold's peak (bench/README.md). An
  // explicit MALLOC_ARENA_MAX in the environment still wins.
  if (!std::getenv("MALLOC_ARENA_MAX")) mallopt(M_ARENA_MAX, 1);
  // Room for the ELF files a fold keeps open, before any thread starts
  // (file_descriptor_table.h: growing it later waits 10-17 ms each time).
  fg::reserve_file_descriptor_table(2048);
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    print_overview(std::cout);
    return argc < 2 || !fg::cli::flush_stdout(nullptr) ? 2 : 0;
  }
  if (!std::strcmp(argv[1], "--version") || !std::strcmp(argv[1], "version")) {
    std::cout << "fgtool " FGTOOL_VERSION "\n";
    return fg::cli::flush_stdout(nullptr) ? 0 : 2;
  }
  // Every input format, for every command that reads profiles (svg, diff, report...).
  fg::cli::register_input_formats();
  std::string name = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  if (name == "help") {
    if (args.empty()) {
      print_overview(std::cout);
      return fg::cli::flush_stdout(nullptr) ? 0 : 2;
    }
    name = args[0];
    args = {"--help"};
  }
  const fg::cli::CommandInfo* cmd = fg::cli::find_command(name);
  if (!cmd) {
    std::cerr << "fgtool: unknown command '" << fg::terminal_safe(name) << "' (see 'fgtool --help')\n";
    return 2;
  }
  return fg::cli::guarded(name, [&] { return cmd->run(args); });
}
