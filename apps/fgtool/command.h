// The fgtool CLI is a set of subcommands, one per cmd_*.cpp file. Each file
// fills an options struct with Boost.Program_options and calls the library;
// it registers itself with a static Registration, so adding a command is
// adding a file. main.cpp only dispatches.
#pragma once

#include <boost/lexical_cast.hpp>
#include <boost/program_options.hpp>
#include <functional>
#include <string>
#include <vector>

// Boost.Program_options reads "-5" into an unsigned option as 4294967291
// (lexical_cast wraps around), so `--top -3` or `--min-block -5` went
// through as huge numbers. Every unsigned option is read here instead and
// refuses a sign. These overloads are found by argument-dependent lookup
// through boost::any, and beat the library's template (int, not long).
namespace boost {
namespace fgtool_unsigned {
template <class T>
void validate_unsigned(boost::any& v, const std::vector<std::string>& xs) {
  const std::string& s = program_options::validators::get_single_string(xs);
  const size_t first = s.find_first_not_of(" \t");
  if (first == std::string::npos || s[first] == '-' || s[first] == '+') throw program_options::invalid_option_value(s);
  try {
    v = boost::any(boost::lexical_cast<T>(s.substr(first)));
  } catch (const boost::bad_lexical_cast&) {
    throw program_options::invalid_option_value(s);
  }
}
}  // namespace fgtool_unsigned
inline void validate(boost::any& v, const std::vector<std::string>& xs, unsigned*, int) {
  fgtool_unsigned::validate_unsigned<unsigned>(v, xs);
}
inline void validate(boost::any& v, const std::vector<std::string>& xs, unsigned long*, int) {
  fgtool_unsigned::validate_unsigned<unsigned long>(v, xs);
}
inline void validate(boost::any& v, const std::vector<std::string>& xs, unsigned long long*, int) {
  fgtool_unsigned::validate_unsigned<unsigned long long>(v, xs);
}
}  // namespace boost

namespace fg::cli {

namespace po = boost::program_options;

struct CommandInfo {
  std::string name;
  std::string summary;   // one line for `fgtool --help`
  std::string usage;     // e.g. "fgtool svg [options] [FILE...]"
  std::string examples;  // printed after the options by `fgtool help NAME`
  // Receives the arguments after the command name.
  std::function<int(const std::vector<std::string>&)> run;
  int order = 50;        // position in `fgtool --help`
};

struct Registration {
  explicit Registration(CommandInfo info);
};

const std::vector<CommandInfo>& commands();
const CommandInfo* find_command(const std::string& name);

// Parses args against options + positionals. Returns false when --help was
// asked for (help already printed to stdout). Throws UsageError on bad options.
bool parse_args(const std::string& command, const std::vector<std::string>& args,
                po::options_description& options, const po::positional_options_description& positional,
                po::variables_map& vm);

// Flushes std::cout and stdout; false (and a message) if anything written
// to them failed.
bool flush_stdout(std::string* error);

// Runs fn, turning exceptions into one line on stderr ("fgtool CMD: message")
// and the exit status: 1 for bad input, 2 for usage errors and for output
// to stdout that could not be written.
int guarded(const std::string& command, const std::function<int()>& fn);

}  // namespace fg::cli
