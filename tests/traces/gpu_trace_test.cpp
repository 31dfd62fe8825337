// The GPU view of PyTorch/Kineto traces (kernels under the CPU stacks that
// launched them), the trace reader's input paths (gzip, stdin, several
// ranks, Kineto/legacy/MXNet layouts, big events across read blocks), and the
// framework-op view of perf folds. Traces are small Kineto-shaped files
// written here, so every expected weight is known by construction.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "diagnostics/input_error.h"
#include "folded/folded_reader.h"
#include "trace_test_util.h"
#include "traces/chrome_trace.h"
#include "traces/framework_ops.h"
#include "traces/trace_inputs.h"
#include "traces/trace_json_scanner.h"

namespace fg::test {
namespace {

std::string fgtool(const std::string& args) { return shell_quote(fgtool_bin()) + " " + args; }

ChromeTraceOptions gpu_view(bool idle = false) {
  ChromeTraceOptions o;
  o.view = ChromeTraceOptions::View::Gpu;
  o.gpu_idle = idle;
  return o;
}

// A Kineto-shaped trace: one CPU thread (pid 100, tid 1) running
// ProfilerStep#1 > aten::linear > aten::addmm > cudaLaunchKernel (corr 10)
// and aten::relu > cudaLaunchKernel (corr 11) > a memset launch (corr 12);
// device 0 with streams 7 and 8.
const char* kKineto = R"J({
  "schemaVersion": 1,
  "distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 8},
  "deviceProperties": [{"id": 0, "name": "Some GPU"}],
  "traceEvents": [
  {"ph": "M", "name": "process_name", "pid": 100, "tid": 0, "args": {"name": "python3"}},
  {"ph": "M", "name": "thread_name", "pid": 100, "tid": 1, "args": {"name": "thread 1 (python3)"}},
  {"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "args": {"name": "GPU 0"}},
  {"ph": "M", "name": "thread_name", "pid": 0, "tid": 7, "args": {"name": "stream 7 "}},
  {"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": "Spans", "tid": "PyTorch Profiler", "ts": 0, "dur": 1000, "args": {"Op count": 0}},
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 100, "tid": 1, "ts": 100, "dur": 300, "args": {"External id": 1}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 100, "tid": 1, "ts": 110, "dur": 100, "args": {"External id": 2}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": 100, "tid": 1, "ts": 120, "dur": 80, "args": {"External id": 3}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 100, "tid": 1, "ts": 130, "dur": 10, "args": {"cbid": 211, "correlation": 10}},
  {"ph": "s", "id": 10, "pid": 100, "tid": 1, "ts": 130, "cat": "ac2g", "name": "ac2g"},
  {"ph": "X", "cat": "cpu_op", "name": "aten::relu", "pid": 100, "tid": 1, "ts": 250, "dur": 50, "args": {"External id": 4}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 100, "tid": 1, "ts": 260, "dur": 5, "args": {"cbid": 211, "correlation": 11}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaMemsetAsync", "pid": 100, "tid": 1, "ts": 270, "dur": 5, "args": {"correlation": 12}},
  {"ph": "X", "cat": "kernel", "name": "void gemm_kernel<float, 4>(float*, int)", "pid": 0, "tid": 7, "ts": 150, "dur": 40.5, "args": {"device": 0, "stream": 7, "correlation": 10}},
  {"ph": "f", "id": 10, "pid": 0, "tid": 7, "ts": 150, "cat": "ac2g", "name": "ac2g", "bp": "e"},
  {"ph": "X", "cat": "kernel", "name": "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)", "pid": 0, "tid": 7, "ts": 290, "dur": 20, "args": {"stream": 7, "correlation": 11}},
  {"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": 0, "tid": 8, "ts": 280, "dur": 3, "args": {"stream": 8, "correlation": 12}},
  {"ph": "X", "cat": "cuda_sync", "name": "Stream Sync", "pid": 0, "tid": 7, "ts": 310, "dur": 2, "args": {"stream": 7, "correlation": 13}},
  {"ph": "X", "cat": "gpu_user_annotation", "name": "ProfilerStep#1", "pid": 0, "tid": 7, "ts": 150, "dur": 160},
  {"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)", "pid": 0, "tid": 7, "ts": 400, "dur": 7, "args": {"stream": 7, "correlation": 99}}
  ],
  "traceName": "x.pt.trace.json"
})J";

TEST(GpuTrace, KernelsFoldUnderTheirLaunchingOps) {
  std::string path = temp_input("kineto.json", kKineto);
  ChromeTraceStats st;
  FoldedProfile p = fold_chrome_trace(path, gpu_view(), &st);
  auto m = stack_map(p);
  const std::string cpu = "python3;thread 1 (python3);ProfilerStep#1;";
  EXPECT_EQ(m[cpu + "aten::linear;aten::addmm;cudaLaunchKernel;[gpu] gemm_kernel<float, 4>"], 40.5);
  EXPECT_EQ(m[cpu + "aten::relu;cudaLaunchKernel;[gpu] at::native::vectorized_elementwise_kernel<4, "
                    "at::native::FillFunctor<float>, at::detail::Array<char*, 1> >"],
            20);
  EXPECT_EQ(m[cpu + "aten::relu;cudaMemsetAsync;[gpu] Memset (Device)"], 3);
  // No launch for correlation 99: under its stream, counted.
  EXPECT_EQ(m["[gpu] unattributed;stream 7;[gpu] ncclKernel_AllReduce_RING_LL_Sum_float"], 7);
  EXPECT_EQ(m.size(), 4u);  // no CPU self time, no cuda_sync, no gpu_user_annotation, no profiler span
  EXPECT_DOUBLE_EQ(p.total(), 70.5);
  EXPECT_EQ(st.gpu_activities, 4u);
  EXPECT_EQ(st.gpu_by_correlation, 3u);
  EXPECT_EQ(st.gpu_unattributed, 1u);
  EXPECT_DOUBLE_EQ(st.gpu_unattributed_us, 7);
  EXPECT_EQ(st.trace_spans, 1u);
  EXPECT_EQ(st.rank, 3);
  auto w = st.warnings();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("1 of 4 GPU activities"), std::string::npos) << w[0];
}

TEST(GpuTrace, CpuViewDropsTheProfilerSpanAndTrimsThreadNames) {
  std::string path = temp_input("kineto_cpu.json", kKineto);
  ChromeTraceStats st;
  auto m = stack_map(fold_chrome_trace(path, {}, &st));
  for (const auto& [k, v] : m) {
    EXPECT_EQ(k.find("PyTorch Profiler"), std::string::npos) << k;
    EXPECT_EQ(k.find("stream 7 ;"), std::string::npos) << k;
  }
  EXPECT_EQ(m["GPU 0;stream 7;ProfilerStep#1;void gemm_kernel<float, 4>(float*, int)"], 40.5);
  EXPECT_EQ(m["python3;thread 1 (python3);ProfilerStep#1;aten::linear;aten::addmm;cudaLaunchKernel"], 10);
}

TEST(GpuTrace, IdleGapsGoUnderTheCpuSpansRunningAtTheTime) {
  std::string path = temp_input("kineto_idle.json", kKineto);
  ChromeTraceStats st;
  auto m = stack_map(fold_chrome_trace(path, gpu_view(true), &st));
  // Stream 7 is busy [150,190.5) [290,310) [400,407). Gap [190.5,290) is
  // launched from aten::relu's cudaLaunchKernel: the CPU thread was in
  // aten::addmm (190.5-200), aten::linear (200-210), ProfilerStep#1
  // (210-250), aten::relu (250-260, 265-270, 275-290), the launch (260-265),
  // cudaMemsetAsync (270-275).
  const std::string cpu = "python3;thread 1 (python3);ProfilerStep#1;";
  EXPECT_DOUBLE_EQ(m[cpu + "aten::linear;aten::addmm;[gpu idle]"], 9.5);
  EXPECT_DOUBLE_EQ(m[cpu + "aten::linear;[gpu idle]"], 10);
  EXPECT_DOUBLE_EQ(m[cpu + "[gpu idle]"], 40);
  EXPECT_DOUBLE_EQ(m[cpu + "aten::relu;[gpu idle]"], 30);
  EXPECT_DOUBLE_EQ(m[cpu + "aten::relu;cudaLaunchKernel;[gpu idle]"], 5);
  EXPECT_DOUBLE_EQ(m[cpu + "aten::relu;cudaMemsetAsync;[gpu idle]"], 5);
  // Gap [310,400) before the unattributed NCCL kernel.
  EXPECT_DOUBLE_EQ(m["[gpu] unattributed;stream 7;[gpu idle]"], 90);
  EXPECT_DOUBLE_EQ(st.gpu_idle_us, 99.5 + 90);
  // Stream 8 has one activity: no gap.
}

TEST(GpuTrace, FlowsLinkKernelsWithoutCorrelation) {
  // Kineto flow without args.correlation on the kernel, and libtorch's legacy
  // exporter (no cat; "CUDA functions"; cpu_to_cuda flows from the op).
  std::string path = temp_input("flows.json", R"([
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 0, "dur": 50},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 10, "dur": 5},
    {"ph": "s", "id": 5, "pid": 1, "tid": 1, "ts": 10, "cat": "ac2g", "name": "ac2g"},
    {"ph": "f", "id": 5, "pid": 0, "tid": 7, "ts": 20, "cat": "ac2g", "name": "ac2g", "bp": "e"},
    {"ph": "X", "cat": "kernel", "name": "sgemm_nn", "pid": 0, "tid": 7, "ts": 20, "dur": 4},
    {"name": "aten::add", "ph": "X", "ts": 100, "dur": 20, "tid": 2, "pid": "CPU functions", "args": {}},
    {"name": "aten::add", "ph": "s", "ts": 100, "tid": 2, "pid": "CPU functions", "id": 9, "cat": "cpu_to_cuda", "args": {}},
    {"name": "aten::add", "ph": "f", "ts": 130, "tid": "stream 0", "pid": "CUDA functions", "id": 9, "cat": "cpu_to_cuda", "args": {}},
    {"name": "add_kernel", "ph": "X", "ts": 130, "dur": 6, "tid": "stream 0", "pid": "CUDA functions", "args": {}},
    {"name": "orphan", "ph": "X", "ts": 140, "dur": 1, "tid": 3, "pid": "CUDA functions", "args": {}}
  ])");
  ChromeTraceStats st;
  auto m = stack_map(fold_chrome_trace(path, gpu_view(), &st));
  EXPECT_EQ(m["pid 1;tid 1;aten::mm;cudaLaunchKernel;[gpu] sgemm_nn"], 4);
  EXPECT_EQ(m["CPU functions;tid 2;aten::add;[gpu] add_kernel"], 6);
  EXPECT_EQ(m["[gpu] unattributed;stream 3;[gpu] orphan"], 1);
  EXPECT_EQ(st.gpu_by_flow, 2u);
  EXPECT_EQ(st.gpu_unattributed, 1u);
}

TEST(GpuTrace, RoundingByOneTickIsSilentLargerOverlapsAreCounted) {
  std::string path = temp_input("rounding.json", R"([
    {"name": "parent", "ph": "X", "ts": 0, "dur": 10, "pid": 1, "tid": 1},
    {"name": "child", "ph": "X", "ts": 5, "dur": 6, "pid": 1, "tid": 1},
    {"name": "p2", "ph": "X", "ts": 20, "dur": 10, "pid": 1, "tid": 1},
    {"name": "c2", "ph": "X", "ts": 25, "dur": 7, "pid": 1, "tid": 1}])");
  ChromeTraceStats st;
  auto m = stack_map(fold_chrome_trace(path, {}, &st));
  EXPECT_EQ(st.rounding, 1u);  // child ends 1 us (one tick) after parent: clamped
  EXPECT_EQ(st.overlaps, 1u);  // c2 ends 2 us after p2: split
  EXPECT_EQ(m["pid 1;tid 1;parent;child"], 5);
  EXPECT_EQ(m["pid 1;tid 1;c2"], 2);
  ASSERT_EQ(st.warnings().size(), 1u);
  // With fractional timestamps the tick is 1 ns.
  std::string frac = temp_input("rounding_frac.json", R"([
    {"name": "parent", "ph": "X", "ts": 0.5, "dur": 10, "pid": 1, "tid": 1},
    {"name": "child", "ph": "X", "ts": 5, "dur": 6, "pid": 1, "tid": 1}])");
  fold_chrome_trace(frac, {}, &st);
  EXPECT_EQ(st.rounding, 0u);
  EXPECT_EQ(st.overlaps, 1u);
}

TEST(GpuTrace, KernelNamesAreShortenedLikeCppFrames) {
  EXPECT_EQ(gpu_kernel_frame_name("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, "
                                  "at::native::MeanOps<float, float> > >(at::native::ReduceOp<float, "
                                  "at::native::MeanOps<float, float> >)"),
            "at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float> > >");
  EXPECT_EQ(gpu_kernel_frame_name("ampere_sgemm_128x64_nn"), "ampere_sgemm_128x64_nn");
  EXPECT_EQ(gpu_kernel_frame_name("Memcpy HtoD (Pageable -> Device)"), "Memcpy HtoD (Pageable -> Device)");
  EXPECT_EQ(gpu_kernel_frame_name("Memset (Device)"), "Memset (Device)");
  EXPECT_EQ(gpu_kernel_frame_name("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)"),
            "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t");
  EXPECT_EQ(gpu_kernel_frame_name("_ZN2at6native13reduce_kernelILi512ELi1EEEvv"), "at::native::reduce_kernel<512, 1>");
  EXPECT_EQ(gpu_kernel_frame_name("a;b "), "a:b");
}

TEST(GpuTrace, GzipStdinAndRanksThroughTheCli) {
  std::string dir = temp_dir();
  write_file(dir + "/r3.json", kKineto);
  std::string r5 = kKineto;
  r5.replace(r5.find("\"rank\": 3"), 9, "\"rank\": 5");
  write_file(dir + "/r5.json", r5);
  ASSERT_EQ(run_shell("gzip -c " + dir + "/r3.json > " + dir + "/r3.json.gz").status, 0);
  auto plain = run_shell(fgtool("fold --gpu " + dir + "/r3.json"));
  ASSERT_EQ(plain.status, 0) << plain.err;
  EXPECT_NE(plain.err.find("1 of 4 GPU activities"), std::string::npos) << plain.err;
  auto gz = run_shell(fgtool("fold --gpu " + dir + "/r3.json.gz"));
  EXPECT_EQ(gz.out, plain.out);
  auto in = run_shell("cat " + dir + "/r3.json.gz | " + fgtool("fold --gpu -"));
  EXPECT_EQ(in.status, 0) << in.err;
  EXPECT_EQ(in.out, plain.out);
  auto ranks = run_shell(fgtool("fold --gpu --label rank " + dir + "/r3.json.gz " + dir + "/r5.json"));
  ASSERT_EQ(ranks.status, 0) << ranks.err;
  FoldedProfile p;
  std::string f = temp_input("ranks.folded", ranks.out);
  read_folded(f, p);
  auto m = stack_map(p);
  EXPECT_EQ(m["rank 3;[gpu] unattributed;stream 7;[gpu] ncclKernel_AllReduce_RING_LL_Sum_float"], 7);
  EXPECT_EQ(m["rank 5;[gpu] unattributed;stream 7;[gpu] ncclKernel_AllReduce_RING_LL_Sum_float"], 7);
  EXPECT_DOUBLE_EQ(p.total(), 2 * 70.5);
  auto merged = run_shell(fgtool("fold --gpu " + dir + "/r3.json.gz " + dir + "/r5.json"));
  EXPECT_NE(merged.out.find("[gpu] ncclKernel_AllReduce_RING_LL_Sum_float 14\n"), std::string::npos) << merged.out;
  // Two traces of one rank stay apart.
  auto same = run_shell(fgtool("fold --gpu --label rank " + dir + "/r3.json " + dir + "/r3.json.gz"));
  EXPECT_NE(same.out.find("rank 3 (r3.json.gz);[gpu] unattributed;"), std::string::npos) << same.out;
  EXPECT_EQ(same.out.find("rank 3;[gpu] unattributed;stream 7;[gpu] ncclKernel_AllReduce_RING_LL_Sum_float 14"),
            std::string::npos);
  // Usage errors.
  EXPECT_NE(run_shell(fgtool("fold --idle " + dir + "/r3.json")).status, 0);
  EXPECT_NE(run_shell(fgtool("fold --gpu --label nope " + dir + "/r3.json")).status, 0);
  // A truncated gzip trace: an error with the byte offset.
  ASSERT_EQ(run_shell("head -c 600 " + dir + "/r3.json | gzip -c > " + dir + "/cut.json.gz").status, 0);
  auto cut = run_shell(fgtool("fold --gpu " + dir + "/cut.json.gz"));
  EXPECT_NE(cut.status, 0);
  EXPECT_NE(cut.err.find("byte 600: malformed JSON"), std::string::npos) << cut.err;
  EXPECT_NE(cut.err.find("truncated"), std::string::npos) << cut.err;
}

TEST(GpuTrace, ScannerHandlesEscapesBomAndEventsAcrossReadBlocks) {
  // Names with escapes and UTF-8, a BOM, and an event whose args (5 MB)
  // straddle the reader's 4 MB blocks, then more events.
  std::string filler(5 << 20, 'x');
  std::string text = "\xEF\xBB\xBF{\"traceEvents\": [\n";
  text += R"({"name": "a\"b\\c\u00e9\ud83d\ude00", "ph": "X", "ts": 1, "dur": 2, "pid": 1, "tid": 1},)";
  text += R"({"name": "big", "ph": "X", "ts": 10, "dur": 3, "pid": 1, "tid": 1, "args": {"blob": ")" + filler + R"("}},)";
  for (int i = 0; i < 20000; ++i)
    text += "{\"name\":\"n" + std::to_string(i % 3) + "\",\"ph\":\"X\",\"ts\":" + std::to_string(100 + i) +
            ",\"dur\":0.5,\"pid\":1,\"tid\":1}" + (i + 1 < 20000 ? ",\n" : "\n");
  text += "]}";
  ChromeTraceStats st;
  auto m = stack_map(fold_chrome_trace(temp_input("blocks.json", text), {}, &st));
  EXPECT_EQ(m["pid 1;tid 1;a\"b\\c\xC3\xA9\xF0\x9F\x98\x80"], 2);
  EXPECT_EQ(m["pid 1;tid 1;big"], 3);
  EXPECT_DOUBLE_EQ(m["pid 1;tid 1;n0"] + m["pid 1;tid 1;n1"] + m["pid 1;tid 1;n2"], 10000);
  EXPECT_EQ(st.events, 20002u);
  // The same bytes through a pipe (reads of any size).
  auto r = run_shell("cat " + shell_quote(temp_input("blocks2.json", text)) + " | " + fgtool("fold -") + " | wc -l");
  EXPECT_EQ(r.out, "5\n") << r.err;
}

TEST(GpuTrace, MxnetProfilerLayout) {
  // MXNet's profiler: B/E pairs with cat "operator", a displayTimeUnit, counters.
  std::string path = temp_input("mxnet.json", R"({
    "traceEvents": [
      {"name": "process_name", "ph": "M", "pid": 0, "args": {"name": "cpu/0"}},
      {"name": "FullyConnected", "cat": "operator", "ph": "B", "ts": 100, "pid": 0, "tid": 42},
      {"name": "FullyConnected", "cat": "operator", "ph": "E", "ts": 150, "pid": 0, "tid": 42},
      {"name": "Activation", "cat": "operator", "ph": "B", "ts": 160, "pid": 0, "tid": 42},
      {"name": "Activation", "cat": "operator", "ph": "E", "ts": 170, "pid": 0, "tid": 42},
      {"name": "memory", "ph": "C", "ts": 170, "pid": 0, "args": {"used": 5}}
    ],
    "displayTimeUnit": "ms"
  })");
  ChromeTraceStats st;
  auto m = stack_map(fold_chrome_trace(path, {}, &st));
  EXPECT_EQ(m["cpu/0;tid 42;FullyConnected"], 50);
  EXPECT_EQ(m["cpu/0;tid 42;Activation"], 10);
  EXPECT_TRUE(st.warnings().empty());
}

TEST(GpuTrace, DetectionSeesKinetoHeadersAndGzip) {
  std::string header = "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n" + std::string(5000, ' ');
  EXPECT_TRUE(looks_like_chrome_trace(header.substr(0, 4096)));
  std::string dir = temp_dir();
  write_file(dir + "/k.json", kKineto);
  ASSERT_EQ(run_shell("gzip -c " + dir + "/k.json > " + dir + "/k.gz").status, 0);
  EXPECT_EQ(detect_trace_input(dir + "/k.gz"), TraceInputKind::ChromeTrace);
  EXPECT_EQ(detect_trace_input(testdata("traces/nested.folded")), TraceInputKind::None);
}

// ---- the framework-op view of CPU profiles ----

TEST(FrameworkOps, OpNamesAreSpelledAsInPyTorchTraces) {
  EXPECT_EQ(framework_op_name("at::_ops::addmm::call"), "aten::addmm");
  EXPECT_EQ(framework_op_name("at::_ops::addmm::redispatch"), "");
  EXPECT_EQ(framework_op_name("at::_ops::add__Tensor::call"), "aten::add_");
  EXPECT_EQ(framework_op_name("at::_ops::div_Scalar::call"), "aten::div");
  EXPECT_EQ(framework_op_name("at::_ops::sum_dim_IntList::call"), "aten::sum");
  EXPECT_EQ(framework_op_name("at::_ops::to_dtype::call"), "aten::to");
  EXPECT_EQ(framework_op_name("at::_ops::_to_copy::call"), "aten::_to_copy");
  EXPECT_EQ(framework_op_name("at::_ops::clamp_min::call"), "aten::clamp_min");
  EXPECT_EQ(framework_op_name("at::_ops::max_pool2d_with_indices_backward::call"),
            "aten::max_pool2d_with_indices_backward");
  EXPECT_EQ(framework_op_name("at::_ops::fill__Scalar::call"), "aten::fill_");
  EXPECT_EQ(framework_op_name("torch::autograd::generated::AddmmBackward0::apply"), "AddmmBackward0");
  EXPECT_EQ(framework_op_name("torch::autograd::AccumulateGrad::apply"), "torch::autograd::AccumulateGrad");
  EXPECT_EQ(framework_op_name("torch::optim::SGD::step"), "Optimizer.step#SGD.step");
  EXPECT_EQ(framework_op_name("at::native::structured_addmm_out_cpu::impl"), "");
  EXPECT_EQ(framework_op_name("sgemm_kernel_COOPERLAKE"), "");
}

TEST(FrameworkOps, NativeFramesFoldIntoTheOpAsSelfTime) {
  FoldedProfile p;
  p.add_stack("app;main;train_step;at::_ops::addmm::call;at::_ops::addmm::redispatch;sgemm_;sgemm_kernel", 5);
  p.add_stack("app;main;train_step;at::_ops::addmm::call;memcpy", 2);
  p.add_stack("app;main;torch::autograd::backward;torch::autograd::Engine::evaluate_function;"
              "torch::autograd::generated::AddmmBackward0::apply;at::_ops::mm::call;sgemm_",
              3);
  p.add_stack("app;_dl_start;_dl_relocate", 1);
  // The training loop's own functions: frames of the object that holds main.
  FrameId main_id = p.find_frame("main");
  p.set_frame_object(main_id, "/usr/bin/app");
  p.set_frame_object(p.find_frame("train_step"), "/usr/bin/app");
  p.set_frame_object(p.find_frame("at::_ops::addmm::call"), "/usr/lib/libtorch_cpu.so");
  auto m = stack_map(framework_op_view(p));
  EXPECT_EQ(m["app;train_step;aten::addmm"], 7);
  EXPECT_EQ(m["app;autograd::engine::evaluate_function: AddmmBackward0;AddmmBackward0;aten::mm"], 3);
  EXPECT_EQ(m["app;[no op]"], 1);
  EXPECT_EQ(m.size(), 3u);
}

// A real libtorch perf fold (testdata/categories, dl_probe on Debian's
// libtorch 1.13): the op view keeps op frames only, named like the
// profiler's (libtorch's own exporter, testdata/traces/mlp_train_trace.json).
TEST(FrameworkOps, RealLibtorchFoldSharesOpNamesWithLibtorchTraces) {
  FoldedProfile perf;
  read_folded(testdata("categories/libtorch_dwarf.folded"), perf);
  FoldedProfile ops = framework_op_view(perf);
  EXPECT_NEAR(ops.total(), perf.total(), 1e-6 * perf.total());
  std::set<std::string> names;
  ops.for_each_stack([&](const std::vector<FrameId>& f, double) {
    for (size_t i = 1; i < f.size(); ++i) names.insert(std::string(ops.frame_name(f[i])));
  });
  for (const auto& n : names) {
    bool op = n.rfind("aten::", 0) == 0 || n.rfind("autograd::engine::evaluate_function: ", 0) == 0 ||
              n.find("Backward") != std::string::npos || n.rfind("torch::autograd::", 0) == 0 ||
              n.rfind("Optimizer.", 0) == 0 || n == "[no op]";
    EXPECT_TRUE(op) << n;
  }
  for (const char* n : {"aten::addmm", "aten::mm", "aten::mkldnn_convolution", "aten::div", "aten::add_",
                        "AddmmBackward0", "autograd::engine::evaluate_function: AddmmBackward0",
                        "Optimizer.step#SGD.step"})
    EXPECT_TRUE(names.count(n)) << n;
  // The libtorch trace of the demo MLP names the same ops the same way.
  FoldedProfile trace = fold_chrome_trace(testdata("traces/mlp_train_trace.json"));
  std::set<std::string> trace_names;
  for (size_t i = 0; i < trace.frame_count(); ++i) trace_names.insert(std::string(trace.frame_name(FrameId(i))));
  for (const char* n : {"aten::addmm", "aten::mm", "aten::add_", "aten::sum", "AddmmBackward0"}) {
    EXPECT_TRUE(trace_names.count(n)) << n;
    EXPECT_TRUE(names.count(n)) << n;
  }
}

}  // namespace
}  // namespace fg::test

namespace fg::test {
namespace {

// One real libtorch CPU run seen by perf and by its own profiler trace
// (testdata/traces/README.md): the op view of the perf fold names the ops
// as the trace does, and the ops that ran often appear in both.
TEST(FrameworkOps, PerfOpViewAndTraceOfOneRunShareOpNames) {
  FoldedProfile perf;
  read_folded(testdata("traces/mlp_cpu_run.folded.gz"), perf);
  FoldedProfile ops = framework_op_view(perf, /*keep_root=*/false);
  FoldedProfile trace = trace_op_view(fold_chrome_trace(testdata("traces/mlp_cpu_run.trace.json.gz")));
  auto names_of = [](const FoldedProfile& p) {
    std::set<std::string> s;
    p.for_each_stack([&](const std::vector<FrameId>& f, double) {
      for (FrameId id : f) s.insert(std::string(p.frame_name(id)));
    });
    s.erase("[no op]");
    return s;
  };
  std::set<std::string> a = names_of(ops), b = names_of(trace);
  size_t shared = 0;
  for (const auto& n : b) shared += a.count(n);
  // Ops in the trace that perf's samples missed are short ones (item, detach_).
  EXPECT_GE(shared * 10, b.size() * 9) << shared << " of " << b.size();
  for (const char* n : {"aten::addmm", "aten::mm", "aten::add_", "aten::relu", "aten::threshold_backward",
                        "aten::log_softmax", "aten::nll_loss", "AddmmBackward0", "aten::t", "aten::zero_"}) {
    EXPECT_TRUE(a.count(n)) << n;
    EXPECT_TRUE(b.count(n)) << n;
  }
  for (const auto& n : a) EXPECT_EQ(n.find("at::_ops::"), std::string::npos) << n;
  EXPECT_NEAR(ops.total(), perf.total(), 1e-9 * perf.total());
}

}  // namespace
}  // namespace fg::test

namespace fg::test {
namespace {

TEST(FrameworkOps, DiffOpsComparesAPerfFoldWithATraceOpByOp) {
  std::string perf = shell_quote(testdata("traces/mlp_cpu_run.folded.gz"));
  std::string trace = shell_quote(testdata("traces/mlp_cpu_run.trace.json.gz"));
  auto r = run_shell(shell_quote(fgtool_bin()) + " diff --ops --top 40 " + perf + " " + trace);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("aten::addmm"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("AddmmBackward0"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("at::_ops::"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("CPU Functions"), std::string::npos) << r.out;  // no trace roots under --ops
  // fold --ops gives the same op stacks as the diff compares.
  auto f = run_shell(shell_quote(fgtool_bin()) + " fold --ops " + trace);
  ASSERT_EQ(f.status, 0) << f.err;
  EXPECT_NE(f.out.find("\naten::add_ "), std::string::npos) << f.out.substr(0, 400);
  auto svg = run_shell(shell_quote(fgtool_bin()) + " diff --ops " + perf + " " + trace);
  ASSERT_EQ(svg.status, 0) << svg.err;
  EXPECT_EQ(xml_wellformed_error(svg.out), "");
}

}  // namespace
}  // namespace fg::test

namespace fg::test {
namespace {

// The hand-written scanner accepts exactly the JSON nlohmann accepts (a bare
// array cut after an event aside, which the trace format allows), on random
// damage of a Kineto-shaped trace.
TEST(GpuTrace, ScannerAgreesWithNlohmannOnDamagedTraces) {
  std::mt19937 rng(4242);
  const std::string source = kKineto;
  const char alphabet[] = "{}[]\",:0123456789.-+eE \\/u\"XBEMphnulltruefalse\xc3\xa9\xff\x01";
  int valid = 0, invalid = 0;
  for (int i = 0; i < 1500; ++i) {
    std::string t = source;
    int edits = 1 + int(rng() % 3);
    for (int k = 0; k < edits && !t.empty(); ++k) {
      size_t at = rng() % t.size();
      switch (rng() % 3) {
        case 0: t[at] = alphabet[rng() % (sizeof alphabet - 1)]; break;
        case 1: t.erase(at, 1 + rng() % 4); break;
        default: t.insert(at, 1, alphabet[rng() % (sizeof alphabet - 1)]);
      }
    }
    bool accepted = nlohmann::json::accept(t);
    std::string path = temp_input("agree.json", t);
    ChromeTraceOptions o;
    o.lenient = true;
    o.view = i % 2 ? ChromeTraceOptions::View::Gpu : ChromeTraceOptions::View::Cpu;
    o.gpu_idle = true;
    std::string error;
    ChromeTraceStats st;
    try {
      fold_chrome_trace(path, o, &st);
    } catch (const InputError& e) {
      error = e.what();
    }
    bool malformed = error.find("malformed JSON") != std::string::npos;
    EXPECT_EQ(accepted, !malformed) << "input #" << i << ": " << error << "\n" << t.substr(0, 300);
    (accepted ? valid : invalid)++;
  }
  EXPECT_GT(valid, 100);
  EXPECT_GT(invalid, 100);
}

}  // namespace
}  // namespace fg::test

namespace fg::test {
namespace {

TEST(GpuTrace, TimestampRangeIsCheckedBeforeArithmetic) {
  int64_t ns = 0;
  EXPECT_TRUE(trace_us_to_ns("1695835542514261", ns));
  EXPECT_EQ(ns, int64_t(1695835542514261) * 1000);
  EXPECT_TRUE(trace_us_to_ns("1212075548353.304", ns));
  EXPECT_EQ(ns, int64_t(1212075548353304));
  EXPECT_TRUE(trace_us_to_ns("0.0005", ns));
  EXPECT_EQ(ns, 1);  // rounded to the nearest ns
  EXPECT_FALSE(trace_us_to_ns("9999999999999999", ns));  // 1e19 ns: out of range, no overflow
  EXPECT_FALSE(trace_us_to_ns("-9999999999999999.9", ns));
  EXPECT_TRUE(trace_us_to_ns("1.5e3", ns));
  EXPECT_EQ(ns, 1500000);
  EXPECT_FALSE(trace_us_to_ns("1e300", ns));
}

}  // namespace
}  // namespace fg::test

namespace fg::test {
namespace {

// GPU folds through report, svg --colors category and diff --by category:
// the default rules give kernels the categories of their CPU counterparts.
TEST(GpuTrace, CategoriesOfGpuFolds) {
  std::string dir = temp_dir();
  write_file(dir + "/k.json", kKineto);
  auto fold = run_shell(fgtool("fold --gpu --idle " + dir + "/k.json -o " + dir + "/gpu.folded"));
  ASSERT_EQ(fold.status, 0) << fold.err;
  auto r = run_shell(fgtool("report " + dir + "/gpu.folded"));
  ASSERT_EQ(r.status, 0) << r.err;
  // gemm_kernel 40.5, vectorized_elementwise_kernel 20, Memset 3, NCCL 7, idle 189.5 (of 260 in all).
  for (const char* line : {"\ngemm ", "\neltwise ", "\ngpu-memcpy ", "\ncollective ", "\ngpu-idle "})
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
  auto svg = run_shell(fgtool("svg --colors category " + dir + "/gpu.folded"));
  ASSERT_EQ(svg.status, 0) << svg.err;
  EXPECT_EQ(xml_wellformed_error(svg.out), "");
  auto cpu = run_shell(fgtool("fold " + dir + "/k.json -o " + dir + "/cpu.folded"));
  ASSERT_EQ(cpu.status, 0) << cpu.err;
  auto d = run_shell(fgtool("diff --by category " + dir + "/cpu.folded " + dir + "/gpu.folded"));
  ASSERT_EQ(d.status, 0) << d.err;
  EXPECT_NE(d.out.find("\ncollective "), std::string::npos) << d.out;
  EXPECT_NE(d.out.find("\ngemm "), std::string::npos) << d.out;
}

}  // namespace
}  // namespace fg::test
