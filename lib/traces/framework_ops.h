// The op-level view of a CPU profile of PyTorch/libtorch code: every stack
// keeps only its framework op frames, spelled as the PyTorch profiler (Kineto)
// names them, so a perf.data fold of a CPU run and a trace fold of a GPU run
// of the same model can be diffed op by op. A FoldedProfile -> FoldedProfile pass.
#pragma once

#include <string>
#include <string_view>

#include "folded/folded_profile.h"

namespace fg {

// The profiler's name for one native frame, or "" when the frame is not an
// op frame:
//   at::_ops::addmm::call                          -> aten::addmm
//   at::_ops::add__Tensor::call                    -> aten::add_  (overload dropped)
//   at::_ops::sum_dim_IntList::call                -> aten::sum
//   torch::autograd::generated::AddmmBackward0::apply -> AddmmBackward0
//   torch::autograd::AccumulateGrad::apply         -> torch::autograd::AccumulateGrad
//   torch::optim::SGD::step                        -> Optimizer.step#SGD.step
// (at::_ops::X::redispatch and other dispatcher frames are not ops: the
// profiler records an op once, at its call.)
std::string framework_op_name(std::string_view frame);

// Kineto's frame for the autograd engine running a node ("autograd::engine::
// evaluate_function: AddmmBackward0"), which it puts above the node's own frame.
std::string autograd_evaluate_frame(std::string_view node);

// Each stack of `profile` reduced to: its root frame (the process), the
// frames of the main executable other than main/_start (the training loop's
// own functions; only when the profile knows frame objects, as perf.data
// folds do), and op frames (framework_op_name; an autograd node preceded by
// its evaluate_function frame). Frames below the last kept one fold into it
// as self time; stacks with no op or own function end in "[no op]".
// Weights in ns (cpu-clock periods) become us, the unit of traces.
// With keep_root false the process frame is dropped too (stacks start at
// the first kept frame), as `fgtool diff --ops` does to line up with traces.
FoldedProfile framework_op_view(const FoldedProfile& profile, bool keep_root = true);

// Whether a frame of a trace fold is an op as the PyTorch profiler names
// them: aten::*, autograd nodes (*Backward*, autograd::engine::
// evaluate_function: *, torch::autograd::*), Optimizer.* steps, and the GPU
// view's [gpu] leaves.
bool is_trace_op_frame(std::string_view frame);

// A trace fold (CPU or GPU view) reduced to its op frames (is_trace_op_frame),
// without process, thread, annotation, python or runtime-call frames, whose
// time goes to the op above them; stacks with no op end in "[no op]". With
// framework_op_view of a CPU run's perf.data this lines the two runs up op by op.
FoldedProfile trace_op_view(const FoldedProfile& profile);

}  // namespace fg
