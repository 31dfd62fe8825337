// Rules on real symbol spellings (from the recordings in testdata/categories
// and documented MKL / Intel OpenMP names), first-match order, overrides and
// malformed rules files.
#include "categories/category_rules.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "diagnostics/input_error.h"
#include "test_support.h"

using namespace fg;

namespace {

const CategoryMatcher& defaults() {
  static CategoryRules rules = CategoryRules::defaults();
  static CategoryMatcher m(rules);
  return m;
}

std::string resource(std::string_view name, std::string_view object = {}) {
  FrameMatch m = defaults().match(CategoryKind::resource, name, object);
  return m ? defaults().categories(CategoryKind::resource)[m.category].name : "-";
}
std::string phase(std::string_view name, std::string_view object = {}) {
  FrameMatch m = defaults().match(CategoryKind::phase, name, object);
  return m ? defaults().categories(CategoryKind::phase)[m.category].name : "-";
}

std::string parse_error(const std::string& json) {
  try {
    CategoryRules r = CategoryRules::parse(json, "my_rules.json");
    CategoryRules all = CategoryRules::defaults();
    all.apply_overrides(r);
    CategoryMatcher m(all);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(CategoryRules, RealSpellingsResource) {
  struct Case { const char* name; const char* object; const char* want; };
  const Case cases[] = {
      // OpenBLAS 0.3.21 (Debian libopenblas0-pthread), from libtorch_dwarf.folded
      {"sgemm_kernel_COOPERLAKE", "", "gemm"}, {"sgemm_incopy_COOPERLAKE", "", "gemm"},
      {"sgemm_itcopy_COOPERLAKE", "", "gemm"}, {"sgemm_beta_COOPERLAKE", "", "gemm"},
      {"sgemm_kernel_SKYLAKEX", "", "gemm"}, {"sgemm_oncopy_SKYLAKEX", "", "gemm"},
      {"sgemm_otcopy_SKYLAKEX", "", "gemm"}, {"sgemm_", "", "gemm"}, {"sgemm_thread_nn", "", "gemm"},
      {"exec_blas", "", "blas-threads"}, {"cblas_sgemm", "", "gemm"}, {"[libopenblasp-r0.3.21.so]", "", "gemm"},
      {"dgemm_kernel", "", "gemm"}, {"dgemm_itcopy", "", "gemm"},  // OpenBLAS issue #1193 perf report
      // reference BLAS (libblas.so.3 alternative)
      {"sgemm_", "/usr/lib/x86_64-linux-gnu/blas/libblas.so.3.11.0", "gemm"},
      // oneDNN JIT kernels named through DNNL_JIT_PROFILE=2 perf maps
      {"jit_avx_gemm_f32_xbyak_gemm", "", "gemm"}, {"_jit_avx512_common_conv_fwd_kernel", "", "conv"},
      {"jit_avx512_common_conv_bwd_weights_kernel_f32", "", "conv"},
      {"_jit_avx512_common_conv_bwd_data_kernel_f32", "", "conv"}, {"jit_avx2_conv_fwd_kernel_f32", "", "conv"},
      {"jit_uni_reorder_kernel_f32", "", "eltwise"}, {"jit_single_blk_kernel", "", "eltwise"},
      {"reducer_2d_driver_f_s_32_t", "", "eltwise"},
      // oneDNN / MKL-DNN symbols (unstripped builds) and MKL (documented names)
      {"dnnl::impl::cpu::x64::gemm_driver<float, float, float>", "", "gemm"}, {"dnnl_sgemm", "", "gemm"},
      {"mkldnn_sgemm", "", "gemm"}, {"dnnl::impl::cpu::x64::jit_avx512_common_gemm_f32", "", "gemm"},
      {"jit_avx2_gemm_f32", "", "gemm"}, {"mkl_blas_avx512_sgemm_kernel_0", "", "gemm"}, {"mkl_blas_sgemm", "", "gemm"},
      {"dnnl::impl::cpu::gemm_convolution_fwd_t::execute_forward_ncsp", "", "conv"},
      {"[libdnnl.so.2.6]", "", "onednn"},
      // ATen
      {"at::native::cpublas::gemm", "", "gemm"}, {"at::TensorIteratorBase::serial_for_each", "", "eltwise"},
      {"at::native::structured_max_pool2d_with_indices_out_cpu::impl", "", "eltwise"},
      {"at::vec::AVX2::Vectorized<float>::exp", "", "eltwise"}, {"Sleef_expf8_u10", "", "eltwise"},
      {"at::native::mkldnn_convolution", "", "conv"}, {"[libtorch_cpu.so.1.13.0]", "", "framework"},
      {"c10::impl::OperatorEntry::getKernelForDispatchKey", "", "framework"},
      // OpenMP: libgomp (stripped in Debian), LLVM/Intel OpenMP (documented names), pthreadpool
      {"[libgomp.so.1.0.0]", "", "omp"}, {"GOMP_parallel", "", "omp"}, {"gomp_team_barrier_wait_end", "", "omp"},
      {"__kmp_fork_barrier", "", "omp"}, {"__kmp_join_barrier", "", "omp"}, {"__kmpc_fork_call", "", "omp"},
      {"__kmp_wait_template<kmp_flag_64<false, true>, true, false, true>", "", "omp"},
      {"__kmp_invoke_microtask", "", "omp"}, {"__kmp_launch_thread", "", "omp"}, {"omp_get_num_threads", "", "omp"},
      {"[libpthreadpool.so.0]", "", "omp"}, {"blas_thread_server", "", "blas-threads"}, {"exec_blas_async_wait", "", "blas-threads"},
      {"x", "/opt/intel/lib/libiomp5.so", "omp"},
      // user code in an OpenMP outlined function is NOT OpenMP time
      {"compInitialAtoms._omp_fn.1", "", "-"},
      // allocation, page faults, system calls, sync, kernel
      {"_int_free", "", "alloc"}, {"malloc_consolidate", "", "alloc"}, {"__GI___libc_free", "", "alloc"},
      {"__memcpy_avx512_unaligned_erms", "", "alloc"}, {"__memset_avx512_unaligned_erms", "", "alloc"},
      {"c10::alloc_cpu", "", "alloc"}, {"posix_memalign", "", "alloc"},
      {"asm_exc_page_fault", "", "page-fault"}, {"handle_mm_fault", "", "page-fault"},
      {"clear_page_erms", "", "page-fault"}, {"clear_page_erms_[k]", "", "page-fault"},
      {"do_anonymous_page", "", "page-fault"},
      {"__x64_sys_read", "", "syscall-io"}, {"do_mmap", "", "syscall-io"}, {"__GI___libc_read", "", "syscall-io"},
      {"futex_wait", "", "sync"}, {"__x64_sys_sched_yield", "", "sync"}, {"__GI_sched_yield", "", "sync"},
      {"___pthread_cond_wait", "", "sync"}, {"pthread_cond_timedwait", "", "sync"},
      {"entry_SYSCALL_64_after_hwframe", "", "kernel"}, {"__schedule", "", "kernel"},
      {"_raw_spin_unlock_irqrestore", "", "kernel"}, {"some_driver_fn_[k]", "", "kernel"},
      {"some_driver_fn", "[kernel.kallsyms]", "kernel"},
      {"do_lookup_x", "", "dynamic-linker"}, {"_dl_relocate_object", "", "dynamic-linker"},
      {"_PyEval_EvalFrameDefault", "", "python"}, {"[libpython3.11.so.1.0]", "", "python"},
      {"cudaLaunchKernel", "", "cuda"}, {"cuLaunchKernel", "", "cuda"}, {"[libcudnn_cnn_infer.so.8]", "", "cuda"},
      {"[off-cpu: S]", "", "off-cpu"},
      // not categorised
      {"[unknown]", "", "-"}, {"main", "", "-"}, {"(anonymous namespace)::SyntheticImages::get", "", "-"},
  };
  for (const auto& c : cases) EXPECT_EQ(resource(c.name, c.object), c.want) << c.name << " / " << c.object;
}

TEST(CategoryRules, RealSpellingsPhase) {
  EXPECT_EQ(phase("torch::data::Iterator<torch::data::Example<at::Tensor, at::Tensor> >::operator++"), "data");
  EXPECT_EQ(phase("mxnet::cpp::MNISTIter::Next"), "data");
  EXPECT_EQ(phase("torch::data::datasets::MNIST::MNIST"), "data");
  EXPECT_EQ(phase("torch::autograd::Engine::thread_main"), "backward");
  EXPECT_EQ(phase("torch::autograd::Engine::evaluate_function"), "backward");  // not eval
  EXPECT_EQ(phase("torch::autograd::generated::AddmmBackward0::apply"), "backward");
  EXPECT_EQ(phase("at::Tensor::backward"), "backward");
  EXPECT_EQ(phase("torch::optim::SGD::step"), "optimizer");
  EXPECT_EQ(phase("torch::optim::Optimizer::zero_grad"), "optimizer");
  EXPECT_EQ(phase("mxnet::cpp::SGDOptimizer::Update"), "optimizer");
  EXPECT_EQ(phase("(anonymous namespace)::Net::forward"), "forward");
  EXPECT_EQ(phase("torch::nn::Conv2dImpl::_conv_forward"), "forward");
  EXPECT_EQ(phase("evaluate_model"), "eval");
  EXPECT_EQ(phase("c10::InferenceMode::is_enabled"), "-");
  EXPECT_EQ(phase("at::namedinference::compute_broadcast_outnames"), "-");
  EXPECT_EQ(phase("_dl_start_user"), "startup");
  EXPECT_EQ(phase("_GLOBAL__sub_I_register_ops.cpp"), "startup");
  EXPECT_EQ(phase("__run_exit_handlers"), "shutdown");
  EXPECT_EQ(phase("[libgomp.so.1.0.0]"), "threadpool");
  EXPECT_EQ(phase("gomp_thread_start"), "threadpool");
  FrameMatch m = defaults().match(CategoryKind::phase, "start_thread", "");
  ASSERT_TRUE(m);
  EXPECT_TRUE(m.fallback);
}

TEST(CategoryRules, FrameKeyStripsAnnotationsAndBrackets) {
  FrameKey k = frame_key("clear_page_erms_[k]", "");
  EXPECT_EQ(k.name, "clear_page_erms");
  EXPECT_EQ(k.object, "[kernel.kallsyms]");
  k = frame_key("[libgomp.so.1.0.0]", "");
  EXPECT_EQ(k.object, "libgomp.so.1.0.0");
  k = frame_key("GOMP_parallel", "/usr/lib/x86_64-linux-gnu/libgomp.so.1.0.0");
  EXPECT_EQ(k.object, "libgomp.so.1.0.0");
  k = frame_key("jit_t_[j]", "");
  EXPECT_EQ(k.name, "jit_t");
  EXPECT_EQ(k.object, "");
}

TEST(CategoryRules, FirstMatchWinsAndUserRulesComeFirst) {
  CategoryRules user = CategoryRules::parse(R"({"rules": [
      {"name": "mine", "category": "eltwise", "kind": "resource", "color": "#123456", "symbols": ["sgemm_kernel*"]},
      {"name": "late", "category": "conv", "kind": "resource", "color": "#123456", "symbols": ["sgemm_kernel*"]}]})",
                                            "user.json");
  CategoryRules all = CategoryRules::defaults();
  size_t before = all.rules().size();
  all.apply_overrides(user);
  EXPECT_EQ(all.rules().size(), before + 2);
  CategoryMatcher m(all);
  FrameMatch r = m.match(CategoryKind::resource, "sgemm_kernel_SKYLAKEX", "");
  ASSERT_TRUE(r);
  EXPECT_EQ(m.categories(CategoryKind::resource)[r.category].name, "eltwise");
  // The other gemm spellings are untouched.
  r = m.match(CategoryKind::resource, "sgemm_incopy_SKYLAKEX", "");
  EXPECT_EQ(m.categories(CategoryKind::resource)[r.category].name, "gemm");
}

TEST(CategoryRules, OverrideByNameAndReplaceDefaults) {
  CategoryRules all = CategoryRules::defaults();
  size_t before = all.rules().size();
  all.apply_overrides(CategoryRules::parse(
      R"({"rules": [{"name": "gemm", "kind": "resource", "color": "#000000", "symbols": ["only_this"]}]})", "u.json"));
  EXPECT_EQ(all.rules().size(), before);
  CategoryMatcher m(all);
  EXPECT_FALSE(m.match(CategoryKind::resource, "sgemm_kernel_SKYLAKEX", ""));
  EXPECT_TRUE(m.match(CategoryKind::resource, "only_this", ""));
  EXPECT_EQ(m.categories(CategoryKind::resource)[m.find(CategoryKind::resource, "gemm")].color, "#000000");

  CategoryRules only = CategoryRules::defaults();
  only.apply_overrides(CategoryRules::parse(
      R"({"replace_defaults": true, "rules": [{"name": "x", "kind": "phase", "color": "#000000", "symbols": ["x*"]}]})",
      "u.json"));
  ASSERT_EQ(only.rules().size(), 1u);
  CategoryMatcher m2(only);
  EXPECT_EQ(m2.categories(CategoryKind::resource).size(), 1u);  // just "other"
  EXPECT_EQ(m2.categories(CategoryKind::phase).size(), 2u);
}

TEST(CategoryRules, ToJsonRoundTrips) {
  CategoryRules a = CategoryRules::defaults();
  CategoryRules b = CategoryRules::parse(a.to_json(), "round-trip");
  ASSERT_EQ(a.rules().size(), b.rules().size());
  for (size_t i = 0; i < a.rules().size(); ++i) {
    EXPECT_EQ(a.rules()[i].name, b.rules()[i].name);
    EXPECT_EQ(a.rules()[i].category, b.rules()[i].category);
    EXPECT_EQ(a.rules()[i].symbols, b.rules()[i].symbols);
    EXPECT_EQ(a.rules()[i].objects, b.rules()[i].objects);
    EXPECT_EQ(a.rules()[i].absorbs, b.rules()[i].absorbs);
    EXPECT_EQ(a.rules()[i].absorbs_into, b.rules()[i].absorbs_into);
    EXPECT_EQ(a.rules()[i].fallback, b.rules()[i].fallback);
  }
}

TEST(CategoryRules, DefaultsCoverTheRequiredCategories) {
  const auto& m = defaults();
  for (const char* c : {"gemm", "conv", "eltwise", "omp", "alloc", "page-fault", "syscall-io", "sync", "kernel",
                        "python", "cuda", "off-cpu", "other"})
    EXPECT_NE(m.find(CategoryKind::resource, c), kNoCategory) << c;
  for (const char* c : {"data", "forward", "backward", "optimizer", "eval", "startup", "other"})
    EXPECT_NE(m.find(CategoryKind::phase, c), kNoCategory) << c;
  EXPECT_EQ(m.categories(CategoryKind::resource).back().name, "other");
}

TEST(CategoryRules, MalformedFilesNameTheRuleAndTheProblem) {
  struct Case { const char* json; const char* want; };
  const Case cases[] = {
      {"{", "my_rules.json: byte"},
      {"[]", "must be a JSON object"},
      {R"({"rules": 3})", "missing \"rules\" array"},
      {R"({"rulez": []})", "unknown top-level key \"rulez\""},
      {R"({"rules": [{"kind": "resource", "color": "#000000", "symbols": ["a"]}]})", "rule 1: missing \"name\""},
      {R"({"rules": [{"name": "g", "color": "#000000", "symbols": ["a"]}]})", "rule 1 'g': missing \"kind\""},
      {R"({"rules": [{"name": "g", "kind": "resorce", "color": "#000000", "symbols": ["a"]}]})",
       "rule 1 'g': \"kind\" must be \"resource\" or \"phase\", not \"resorce\""},
      {R"({"rules": [{"name": "g", "kind": "resource", "symbols": ["a"]}]})", "rule 1 'g': missing \"color\""},
      {R"({"rules": [{"name": "g", "kind": "resource", "color": "red", "symbols": ["a"]}]})",
       "rule 1 'g': \"color\" must look like"},
      {R"({"rules": [{"name": "g", "kind": "resource", "color": "#000000"}]})",
       "rule 1 'g': needs at least one pattern"},
      {R"({"rules": [{"name": "a", "kind": "resource", "color": "#000000", "symbols": ["x"]},
                     {"name": "g", "kind": "resource", "color": "#000000", "symbols": ["ok", "bad\\"]}]})",
       "rule 2 'g': bad pattern \"bad\\\""},
      {R"({"rules": [{"name": "g", "kind": "resource", "color": "#000000", "symbols": [""]}]})",
       "rule 1 'g': bad pattern \"\": empty pattern"},
      {R"({"rules": [{"name": "g", "kind": "resource", "color": "#000000", "symbols": "sgemm*"}]})",
       "rule 1 'g': \"symbols\" must be an array of strings"},
      {R"({"rules": [{"name": "g", "kind": "resource", "color": "#000000", "objects": [1]}]})",
       "rule 1 'g': \"objects\" must contain only strings"},
      {R"({"rules": [{"name": 5, "kind": "resource", "color": "#000000", "symbols": ["a"]}]})",
       "rule 1: \"name\" must be a string"},
      {R"({"rules": [{"name": "g", "kind": "resource", "color": "#000000", "symbols": ["a"], "fallback": "yes"}]})",
       "rule 1 'g': \"fallback\" must be true or false"},
      {R"({"rules": [{"name": "g", "kind": "resource", "color": "#000000", "symbol": ["a"]}]})",
       "rule 1 'g': unknown key \"symbol\""},
      {R"({"rules": [{"name": "g", "kind": "resource", "color": "#000000", "symbols": ["a"]},
                     {"name": "g", "kind": "phase", "color": "#000000", "symbols": ["a"]}]})",
       "rule 2 'g': duplicate rule name"},
      {R"({"rules": [{"name": "g", "kind": "resource", "color": "#000000", "symbols": ["a"], "absorbs": ["nope"]}]})",
       "my_rules.json: rule 'g': absorbs unknown resource category 'nope'"},
      {R"({"rules": [{"name": "g", "kind": "phase", "color": "#000000", "symbols": ["a"], "absorbs": ["kernel"]}]})",
       "rule 1 'g': \"absorbs\" is only for resource rules"},
      {R"({"rules": ["gemm"]})", "rule 1: a rule must be a JSON object"},
  };
  for (const auto& c : cases) {
    std::string err = parse_error(c.json);
    EXPECT_NE(err.find(c.want), std::string::npos) << "json: " << c.json << "\nerror: " << err;
    EXPECT_EQ(err.find('\n'), std::string::npos) << err;  // one line
  }
}

namespace {

// --rules names a file; a directory, /dev/zero or a huge file is a clear
// error naming it (not "not valid JSON", not a read until memory runs out).
TEST(CategoryRules, RulesFileThatIsNotAFile) {
  std::string dir = fg::test::temp_dir();
  auto error_of = [](const std::string& path) -> std::string {
    try {
      CategoryRules::load_file(path);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(error_of(dir), dir + ": is a directory, not a rules file (give the JSON file inside it)");
  EXPECT_EQ(error_of("/dev/zero"), "/dev/zero: rules file larger than 16 MiB; category rules are a few KiB of JSON");
  fg::test::write_file(dir + "/big.json", "{\"rules\": [], \"comment\": \"" + std::string(17 << 20, 'x') + "\"}");
  EXPECT_NE(error_of(dir + "/big.json").find("larger than 16 MiB"), std::string::npos);
  // Just under the limit is read.
  fg::test::write_file(dir + "/ok.json", "{\"rules\": [], \"comment\": \"" + std::string(1 << 20, 'x') + "\"}");
  EXPECT_EQ(error_of(dir + "/ok.json"), "");

  std::string bin = fg::test::shell_quote(fg::test::fgtool_bin());
  std::string in = fg::test::shell_quote(fg::test::testdata("folded/small.folded"));
  // The address-space limit shows that /dev/zero is not read to the end; an
  // ASan build reserves terabytes of shadow memory and cannot run under it.
#if defined(__SANITIZE_ADDRESS__)
  const std::string limit;
#else
  const std::string limit = "ulimit -v 1000000; ";
#endif
  for (const std::string& rules : {dir, std::string("/dev/zero")}) {
    fg::test::CommandResult r = fg::test::run_shell(limit + bin + " report " + in + " --rules " + rules);
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_EQ(r.err.find("not valid JSON"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(rules + ": "), std::string::npos) << r.err;
  }
}

}  // namespace
