// Google Benchmark for the folded reader and the SVG renderer on a large
// generated file (bench/gen_folded.py). Not a test: run by hand or through
// bench/run_folded_bench.sh with FGTOOL_BENCH_FOLDED=path/to/big.folded.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>

#include "folded/folded_reader.h"
#include "render/flamegraph.h"

namespace {

const char* input_path() { return std::getenv("FGTOOL_BENCH_FOLDED"); }

void BM_ParseMerge(benchmark::State& state) {
  const char* path = input_path();
  if (!path) {
    state.SkipWithError("set FGTOOL_BENCH_FOLDED to a folded file (bench/gen_folded.py)");
    return;
  }
  uint64_t bytes = 0;
  size_t nodes = 0, mem = 0;
  for (auto _ : state) {
    fg::FoldedProfile p;
    bytes += fg::read_folded(path, p).bytes;
    nodes = p.node_count();
    mem = p.memory_bytes();
    benchmark::DoNotOptimize(p.total());
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.counters["tree_nodes"] = static_cast<double>(nodes);
  state.counters["model_MiB"] = mem / 1048576.0;
}
// Real time: the tree walk runs on a thread of its own (folded_reader.cpp).
BENCHMARK(BM_ParseMerge)->Unit(benchmark::kMillisecond)->MinTime(2.0)->UseRealTime();

void BM_RenderSvg(benchmark::State& state) {
  const char* path = input_path();
  if (!path) {
    state.SkipWithError("set FGTOOL_BENCH_FOLDED");
    return;
  }
  fg::FoldedProfile p;
  fg::read_folded(path, p);
  fg::SvgOptions o;
  size_t size = 0;
  for (auto _ : state) {
    std::string out;
    fg::render_flamegraph(p, o, out);
    size = out.size();
  }
  state.counters["svg_MiB"] = size / 1048576.0;
}
BENCHMARK(BM_RenderSvg)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
