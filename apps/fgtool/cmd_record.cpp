// `fgtool record`: runs perf record with the events a view needs (on-CPU,
// off-CPU, wall clock), after checking that perf can record here and
// explaining how to fix it when not; optionally folds and renders an SVG.
// The logic is lib/record; this file maps options and reports.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "command.h"
#include "diagnostics/input_error.h"
#include "diagnostics/terminal_text.h"
#include "perf_subtitle.h"
#include "record/perf_capabilities.h"
#include "record/record_command.h"
#include "record/subprocess.h"

namespace {

namespace po = boost::program_options;

std::string self_exe() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "fgtool";
  return std::string(buf, size_t(n));
}

int run_record(const std::vector<std::string>& all_args) {
  // Everything after "--" is the workload, passed through untouched.
  std::vector<std::string> args, command;
  bool after = false;
  for (const auto& a : all_args) {
    if (!after && a == "--") {
      after = true;
      continue;
    }
    (after ? command : args).push_back(a);
  }
  fg::RecordOptions opt;
  std::string svg;
  std::vector<std::string> positional_command;
  po::options_description options("Options");
  options.add_options()
    ("off-cpu", po::bool_switch(), "record where threads block: sched:sched_switch with stacks + switch events")
    ("wall", po::bool_switch(), "on-CPU samples and off-CPU switches in one recording")
    ("dwarf", po::bool_switch(&opt.dwarf), "DWARF call graphs (--call-graph dwarf,16384) for code without frame pointers")
    ("stack-size", po::value(&opt.stack_size),
     "bytes of user stack copied per DWARF sample (implies --dwarf; default 16384, at most 65528): raise it when "
     "'fgtool info' reports stacks cut short")
    ("freq,F", po::value(&opt.frequency), "cpu-clock samples per second (default 999)")
    ("output,o", po::value(&opt.output), "perf.data file to write (default perf.data)")
    ("svg", po::value(&svg), "also fold the recording and render this flamegraph SVG")
    ("no-jit-profile", po::bool_switch(), "do not set DNNL_JIT_PROFILE/ONEDNN_JIT_PROFILE=2 (oneDNN JIT kernel names)")
    ("perf", po::value(&opt.perf), "perf executable (default: perf from PATH)")
    ("no-check", po::bool_switch(), "skip the checks that perf can record here")
    ("dry-run,n", po::bool_switch(), "print the perf command line and exit")
    ("command", po::value(&positional_command)->multitoken(), "COMMAND [ARGS] (after --)");
  po::positional_options_description positional;
  positional.add("command", -1);
  po::variables_map vm;
  if (!fg::cli::parse_args("record", args, options, positional, vm)) return 0;
  if (command.empty()) command = positional_command;
  opt.command = command;
  if (vm["off-cpu"].as<bool>() && vm["wall"].as<bool>()) throw fg::UsageError("--off-cpu and --wall exclude each other");
  if (vm["off-cpu"].as<bool>()) opt.view = fg::RecordView::OffCpu;
  if (vm["wall"].as<bool>()) opt.view = fg::RecordView::Wall;
  if (vm.count("freq") && opt.view == fg::RecordView::OffCpu)
    throw fg::UsageError("-F sets the cpu-clock rate; the off-CPU view records every context switch instead");
  opt.jit_profile = !vm["no-jit-profile"].as<bool>();
  if (vm.count("stack-size")) opt.dwarf = true;
  if (!svg.empty() && opt.output == "-") throw fg::UsageError("--svg needs a perf.data file, not -o -");

  fg::RecordCommandBuilder builder(opt);
  std::vector<std::string> perf_cmd = builder.perf_command();
  if (vm["dry-run"].as<bool>()) {
    for (const auto& [name, value] : builder.environment()) std::cout << name << "=" << value << " ";
    std::cout << fg::shell_line(perf_cmd) << "\n";
    return 0;
  }
  if (!vm["no-check"].as<bool>()) {
    fg::CapabilityReport report = fg::PerfCapabilities(opt.perf).check(opt.view);
    if (!report.ok) {
      std::cerr << "fgtool record: " << report.problem << "\n" << report.fix << "\n";
      return 1;
    }
    perf_cmd[0] = report.perf_path;
  }
  std::string env_text;
  for (const auto& [name, value] : builder.environment()) {
    setenv(name.c_str(), value.c_str(), 0);
    env_text += name + "=" + value + " ";
  }
  std::cerr << "fgtool record: " << fg::view_name(opt.view) << " view: " << env_text << fg::shell_line(perf_cmd)
            << std::endl;
  auto start = std::chrono::steady_clock::now();
  fg::ChildStatus perf_status = fg::run_inherited(perf_cmd);
  int status = perf_status.shell_status();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  struct stat st;
  bool have_data = opt.output != "-" && ::stat(opt.output.c_str(), &st) == 0 && st.st_size > 0;
  char line[256];
  std::snprintf(line, sizeof line, "fgtool record: %s after %.1fs", perf_status.ok() ? "done" : "finished", seconds);
  std::cerr << line;
  if (!perf_status.started) std::cerr << " (could not start " << fg::terminal_safe(perf_cmd[0]) << ")";
  else if (!perf_status.ok()) std::cerr << " (perf " << perf_status.describe() << ")";
  if (have_data) std::cerr << "; wrote " << fg::terminal_safe(opt.output) << " (" << (st.st_size + 1023) / 1024 << " KiB)";
  std::cerr << std::endl;

  if (!svg.empty()) {
    if (!have_data) {
      std::cerr << "fgtool record: no " << fg::terminal_safe(opt.output) << " to render\n";
      return status ? status : 1;
    }
    // Through the fgtool binary itself. An on-CPU recording is drawn by
    // `fgtool svg perf.data`, so the graph is the one that command draws
    // (category colours and legend, the recording's subtitle).
    if (builder.fold_arguments().empty()) {
      fg::ChildStatus rc = fg::run_inherited({self_exe(), "svg", opt.output, "-o", svg});
      if (!rc.ok()) {
        std::cerr << "fgtool record: rendering " << fg::terminal_safe(svg) << " failed (" << rc.describe() << ")\n";
        return status ? status : rc.shell_status();
      }
      std::cerr << "fgtool record: wrote " << fg::terminal_safe(svg) << "\n";
      return status;
    }
    // Off-CPU and wall views: fold with the view's flags, then svg (the
    // hot/cold palette of [off-cpu] stacks, as `fgtool svg` draws them).
    // A random name made with O_EXCL (not a predictable "SVG.folded.tmp"
    // that a planted symlink could redirect); fold replaces this file of ours.
    std::string folded = svg + ".folded.XXXXXX";
    int fd = ::mkstemp(folded.data());
    if (fd < 0) throw fg::UsageError(svg + ": cannot create a temporary file beside it: " + std::strerror(errno));
    ::close(fd);
    std::vector<std::string> fold = {self_exe(), "fold"};
    for (auto& a : builder.fold_arguments()) fold.push_back(a);
    fold.insert(fold.end(), {opt.output, "-o", folded});
    fg::ChildStatus rc = fg::run_inherited(fold);
    // The folded file has lost what perf.data says of the recording: give
    // the graph the subtitle `fgtool svg perf.data` would (event, rate,
    // command, duration).
    std::vector<std::string> render = {self_exe(), "svg", folded, "-o", svg};
    if (std::string subtitle = fg::cli::perf_data_subtitle(opt.output); !subtitle.empty())
      render.insert(render.end(), {"--subtitle", subtitle});
    if (rc.ok()) rc = fg::run_inherited(render);
    std::remove(folded.c_str());
    if (!rc.ok()) {
      std::cerr << "fgtool record: rendering " << fg::terminal_safe(svg) << " failed (" << rc.describe() << ")\n";
      return status ? status : rc.shell_status();
    }
    std::cerr << "fgtool record: wrote " << fg::terminal_safe(svg) << "\n";
  }
  return status;  // perf forwards the workload's exit status
}

fg::cli::Registration reg{fg::cli::CommandInfo{
    "record", "run perf record with the right events for an on-CPU, off-CPU or wall-clock flamegraph",
    "fgtool record [--off-cpu|--wall] [--dwarf [--stack-size BYTES]] [-F HZ] [-o perf.data] [--svg OUT.svg] -- COMMAND [ARGS]",
    "  fgtool record -- ./train --epochs 1                     # on-CPU, perf.data\n"
    "  fgtool record --svg train.svg -- ./train --epochs 1     # record, fold and render\n"
    "  fgtool record --off-cpu -o off.data -- ./server         # where threads block\n"
    "  fgtool record --wall --dwarf -F 499 -- python3 train.py # on+off CPU, no frame pointers\n"
    "  fgtool record --dwarf --stack-size 65528 -- ./train     # deep stacks no longer cut short\n"
    "  fgtool record -n --wall -- ./train                      # only print the perf command\n",
    run_record, 10}};

}  // namespace
